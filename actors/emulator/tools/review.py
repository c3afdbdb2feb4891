"""Review an interval already played: ``review(ReviewRequest)`` → :class:`ReviewResult`.

Reads committed normalized inputs and existing sampled PNGs of one recording. It never
advances play, delivers input, captures a frame, appends a journal line or writes a file
(the recording's directory tree is byte-identical before and after), and it works after the
emulator closed without loading a ROM (this module never imports PyBoy).

The request copies a step's ``recordingSpan``: ``recordingPath``, ``sessionId``,
``branchId``, ``fromActionIndex``, ``toActionIndex`` and optionally ``fromFrame``,
``toFrame`` and ``prefixPin`` (checked against the journal). ``fromPrefixPin`` is not an
input field. The interval is ``(fromActionIndex, toActionIndex]`` on that one session and
branch; equal indices are an explicit empty interval. Limits: 4,096 normalized actions,
3,600 native frames, 2 MiB of response metadata. ``maxImages`` (1..8, default 4) picks the
first and last retained images of the interval and evenly spaced ones between (with one
image: the last). ``includeImages: false`` changes only delivery; ``imageLayout:
"contact-sheet"`` composes the same verified PNGs into one sheet (:mod:`.contact_sheet`).

The result separates ``inputs``, ``physicalEvents``, verified ``frames`` and ``coverage``
(with its gaps), carries ``authentication`` (chain verified, prefix pins) and always says
``semanticValidity: "not-adjudicated"``. An archived recording is read where it is now, through
its verified mapping (its original path or its archive path both work; :mod:`.sources`).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from pathlib import Path

from ..recording import journal as j
from ..recording.errors import EvidenceLimitExceeded, IntervalRefused, InvalidOption, RecordingCorrupt
from ..recording.reader import RecordingReader, writer_alive
from ..recording.retained import MISSING, BranchRoute, CheckedFrame, branch_routes, gaps, native_ms, verify_sample
from .contact_sheet import compose
from .sources import locate_recording

MAX_ACTIONS = 4096
MAX_NATIVE_FRAMES = 3600
MAX_METADATA_BYTES = 2 * 1024 * 1024
MAX_IMAGES, DEFAULT_IMAGES = 8, 4
PENDING = "pending"
LAYOUTS = ("individual", "contact-sheet")
NOT_ESTABLISHED = ("gameplay outcome", "unsampled frames", "audio")
_FIELDS = {
    "recordingPath": "recording_path",
    "sessionId": "session_id",
    "branchId": "branch_id",
    "fromActionIndex": "from_action_index",
    "toActionIndex": "to_action_index",
    "fromFrame": "from_frame",
    "toFrame": "to_frame",
    "prefixPin": "prefix_pin",
    "maxImages": "max_images",
    "includeImages": "include_images",
    "imageLayout": "image_layout",
}


def _int(name: str, value: object, low: int, high: int | None = None) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < low or (high is not None and value > high):
        raise InvalidOption(name, value, f"an integer {low}..{high}" if high is not None else f"an integer >= {low}")


@dataclass(frozen=True)
class ReviewRequest:
    """One review request; field names on the wire are the camelCase keys of ``_FIELDS``."""

    recording_path: str
    session_id: str
    branch_id: str
    from_action_index: int
    to_action_index: int
    from_frame: int | None = None
    to_frame: int | None = None
    prefix_pin: str | None = None
    max_images: int = DEFAULT_IMAGES
    include_images: bool = True
    image_layout: str = "individual"

    def __post_init__(self):
        for name in ("recordingPath", "sessionId", "branchId"):
            value = getattr(self, _FIELDS[name])
            if not isinstance(value, str) or not value:
                raise InvalidOption(name, value, "a non-empty string copied from the step's recordingSpan")
        _int("fromActionIndex", self.from_action_index, 0)
        _int("toActionIndex", self.to_action_index, 0)
        if self.to_action_index < self.from_action_index:
            raise InvalidOption(
                "toActionIndex", self.to_action_index, f"an integer >= fromActionIndex ({self.from_action_index})"
            )
        for name in ("fromFrame", "toFrame"):
            if getattr(self, _FIELDS[name]) is not None:
                _int(name, getattr(self, _FIELDS[name]), 0)
        if self.prefix_pin is not None and not isinstance(self.prefix_pin, str):
            raise InvalidOption("prefixPin", self.prefix_pin, "a prefix pin string v1:<seq>:<hash>")
        _int("maxImages", self.max_images, 1, MAX_IMAGES)
        if not isinstance(self.include_images, bool):
            raise InvalidOption("includeImages", self.include_images, "true or false")
        if self.image_layout not in LAYOUTS:
            raise InvalidOption("imageLayout", self.image_layout, " | ".join(LAYOUTS))

    @classmethod
    def from_json(cls, body: dict) -> ReviewRequest:
        if not isinstance(body, dict):
            raise InvalidOption("request", body, "a JSON object")
        if "fromPrefixPin" in body:
            raise InvalidOption(
                "fromPrefixPin",
                body["fromPrefixPin"],
                "no such input field: keep the span's fromPrefixPin separately and pass prefixPin",
            )
        unknown = sorted(set(body) - set(_FIELDS))
        if unknown:
            raise InvalidOption(unknown[0], body[unknown[0]], f"one of {', '.join(_FIELDS)}")
        return cls(**{_FIELDS[k]: v for k, v in body.items()})


@dataclass(frozen=True)
class ReviewResult:
    """``metadata`` is the JSON answer; ``images`` the delivered (frame metadata, PNG bytes)
    pairs of the individual layout; ``sheet`` the contact sheet's PNG bytes (or None)."""

    metadata: dict
    images: tuple[tuple[dict, bytes], ...] = ()
    sheet: bytes | None = None


def select_evenly(count: int, wanted: int) -> list[int]:
    """Indices of ``min(count, wanted)`` items: the first and last and evenly spaced between
    (floor spacing, so the picks are distinct); one pick is the last item."""
    k = min(count, wanted)
    if k <= 0:
        return []
    if k == 1:
        return [count - 1]
    return [i * (count - 1) // (k - 1) for i in range(k)]


def interval_bounds(route: BranchRoute, from_index: int, to_index: int) -> tuple[int, int]:
    """(fromFrame, toFrame) of ``(from_index, to_index]`` on ``route``, after the limits."""
    if from_index < route.start_action:
        if route.imported:
            earlier = (
                f" (the route before it was imported from a checkpoint of session "
                f"{route.imported.get('sourceSessionId')}: this recording holds no inputs or physical "
                "events for it)"
            )
        else:
            earlier = f" (its earlier route is on {route.parent})" if route.parent else ""
        raise IntervalRefused(
            "fromActionIndex", from_index, f"{route.branch_id} starts at action {route.start_action}{earlier}"
        )
    if to_index > route.last_action:
        raise IntervalRefused(
            "toActionIndex", to_index, f"{route.branch_id}'s last committed action is {route.last_action}"
        )
    if to_index - from_index > MAX_ACTIONS:
        raise EvidenceLimitExceeded("review", "normalized actions", to_index - from_index, MAX_ACTIONS)
    from_frame, to_frame = route.frame_at(from_index), route.frame_at(to_index)
    if to_frame - from_frame > MAX_NATIVE_FRAMES:
        raise EvidenceLimitExceeded("review", "native frames", to_frame - from_frame, MAX_NATIVE_FRAMES)
    return from_frame, to_frame


def _interval_seq(route: BranchRoute, req: ReviewRequest, samples: list[dict]) -> int:
    """The last journal line that belongs to the interval (for an empty interval: the line
    that establishes its start)."""
    seqs = [route.inputs[i]["seq"] for i in range(req.from_action_index + 1, req.to_action_index + 1)]
    seqs += [
        route.stepped[i]["seq"] for i in range(req.from_action_index + 1, req.to_action_index + 1) if i in route.stepped
    ]
    seqs += [s["seq"] for s in samples]
    if seqs:
        return max(seqs)
    start = req.from_action_index
    return route.seq if start == route.start_action else route.stepped.get(start, route.inputs[start])["seq"]


def authenticate(scan: j.JournalScan, interval_seq: int, pin: str | None, finalized: bool) -> dict:
    """Chain and pin evidence; a bad or too-short requested pin is refused."""
    if finalized and scan.torn_tail is not None:
        raise RecordingCorrupt("events.jsonl", "a finalized recording has an incomplete tail line")
    interval_pin = j.make_pin(interval_seq, scan.events[interval_seq - 1]["hash"])
    if pin is not None:
        try:
            seq, _head = j.parse_pin(pin)
            valid = j.verify_pin(scan, pin)
        except RecordingCorrupt:
            raise IntervalRefused("prefixPin", pin, "malformed (expected v1:<seq>:<64 hex>)") from None
        if not valid:
            raise IntervalRefused("prefixPin", pin, f"does not name a prefix of this journal (head {scan.pin})")
        if seq < interval_seq:
            raise IntervalRefused(
                "prefixPin",
                pin,
                f"covers journal lines 1..{seq}, but the interval's evidence reaches line {interval_seq}",
            )
    return {
        "chainVerified": True,
        "headPrefixPin": scan.pin,
        "intervalPrefixPin": interval_pin,
        "requestedPrefixPin": pin,
        "requestedPrefixPinVerified": pin is not None,
        "tornTail": scan.torn_tail is not None,
        "note": "a prefix pin authenticates committed bytes, not authorization or a gameplay outcome",
    }


def _check_frames(req: ReviewRequest, from_frame: int, to_frame: int) -> None:
    for name, asked, actual in (("fromFrame", req.from_frame, from_frame), ("toFrame", req.to_frame, to_frame)):
        if asked is not None and asked != actual:
            raise IntervalRefused(name, asked, f"the journal has frame {actual} at that action bound")


def _inputs_and_physical(route: BranchRoute, req: ReviewRequest) -> tuple[list, list, list]:
    inputs, physical, missing = [], [], []
    for index in range(req.from_action_index + 1, req.to_action_index + 1):
        ev = route.inputs[index]
        inputs.append(
            {
                "actionIndex": index,
                "buttons": ev["buttons"],
                "frames": ev["frames"],
                "fromFrame": ev["fromFrame"],
                "toFrame": ev["toFrame"],
                "samplesRequested": ev.get("samplesRequested", 0),
                "seq": ev["seq"],
            }
        )
        done = route.stepped.get(index)
        if done is None:
            missing.append({"actionIndex": index, "reason": "no stepped line: its frames are not known to have run"})
            continue
        physical.append(
            {
                "actionIndex": index,
                "atFrame": ev["fromFrame"],
                "pressed": ev["pressed"],
                "released": ev["released"],
                "held": ev["buttons"],
                "throughFrame": done["toFrame"],
                "executionMs": done.get("executionMs"),
                "seq": done["seq"],
            }
        )
    return inputs, physical, missing


def _coverage(route, req, bounds, samples, checked, missing_physical, every) -> dict:
    from_frame, to_frame = bounds
    retained = [s for s in samples if s.get("png")]
    lost = [
        lv
        for lv in route.lost
        if lv["fromActionIndex"] < req.to_action_index and lv["toActionIndex"] > req.from_action_index
    ]
    return {
        "empty": req.from_action_index == req.to_action_index,
        "actions": req.to_action_index - req.from_action_index,
        "nativeFrames": to_frame - from_frame,
        "nativeMs": native_ms(to_frame - from_frame),
        "sampleEveryFrames": every,
        "retainedFrames": len(retained),
        "omittedFrames": [
            {"frame": s["frame"], "actionIndex": s["actionIndex"], "reason": s.get("omitted")}
            for s in samples
            if not s.get("png")
        ],
        "selectedFrames": len(checked),
        "verifiedFrames": sum(c.verified for c in checked),
        "unverifiedFrames": [
            {"frame": c.sample["frame"], "status": c.status, "problem": c.problem} for c in checked if not c.verified
        ],
        "endpointRetained": any(s["frame"] == to_frame for s in retained) if to_frame > from_frame else None,
        "gaps": gaps([s["frame"] for s in retained], from_frame + 1, to_frame),
        "physicalEventsMissing": missing_physical,
        "lostIntervals": [{k: v for k, v in lv.items() if k not in ("hash", "prev", "kind")} for lv in lost],
        "notEstablished": list(NOT_ESTABLISHED),
    }


def _deliver(req: ReviewRequest, checked: list[CheckedFrame], title: str, root: Path):
    """(images, sheet bytes, sheet metadata) for the requested layout."""
    verified = [c for c in checked if c.verified]
    if not req.include_images:
        return (), None, None
    if req.image_layout == "individual":
        return tuple((c.to_json(root), c.data) for c in verified), None, None
    if not verified:
        reason = (
            "empty interval: nothing to compose"
            if req.from_action_index == req.to_action_index
            else "no verified retained frame in the interval"
        )
        return (), None, {"composed": False, "reason": reason}
    sheet, meta = compose(verified, title)
    return (), sheet, meta


def _pending_if_live(checked: CheckedFrame, status: str) -> CheckedFrame:
    """A live writer stores PNGs on a helper thread: an absent file may still be on its way."""
    if status == "live" and checked.status == MISSING:
        return replace(
            checked,
            status=PENDING,
            problem="not on disk yet (live recording: frames are "
            "written asynchronously); review again after the next step",
        )
    return checked


def metadata_size(metadata: dict) -> int:
    return len(json.dumps(metadata, separators=(",", ":"), sort_keys=True).encode("utf-8"))


def enforce_metadata_limit(metadata: dict, limit: int = MAX_METADATA_BYTES) -> int:
    """The metadata's compact JSON size; refused above ``limit`` (2 MiB by default)."""
    size = metadata_size(metadata)
    if size > limit:
        raise EvidenceLimitExceeded("review", "bytes of response metadata", size, limit)
    return size


def _route_for(reader: RecordingReader, req: ReviewRequest) -> BranchRoute:
    if reader.header.get("sessionId") != req.session_id:
        raise IntervalRefused(
            "sessionId", req.session_id, f"this recording is session {reader.header.get('sessionId')}"
        )
    routes = branch_routes(reader.scan.events)
    if req.branch_id not in routes:
        raise IntervalRefused("branchId", req.branch_id, f"known branches: {', '.join(routes)}")
    return routes[req.branch_id]


def review(request: ReviewRequest | dict) -> ReviewResult:
    """Review ``(fromActionIndex, toActionIndex]`` (see the module docstring). Writes nothing."""
    req = request if isinstance(request, ReviewRequest) else ReviewRequest.from_json(request)
    resolved = locate_recording(req.recording_path)
    root = resolved.recording_path
    reader = RecordingReader(root)
    route = _route_for(reader, req)
    bounds = interval_bounds(route, req.from_action_index, req.to_action_index)
    _check_frames(req, *bounds)
    samples = [s for s in route.samples if req.from_action_index < s["actionIndex"] <= req.to_action_index]
    finalized = reader.summary.stop is not None
    auth = authenticate(reader.scan, _interval_seq(route, req, samples), req.prefix_pin, finalized)
    retained = [s for s in samples if s.get("png")]
    status = reader.summary.stop["status"] if finalized else ("live" if writer_alive(root) else "interrupted")
    checked = [
        _pending_if_live(verify_sample(root, retained[i]), status) for i in select_evenly(len(retained), req.max_images)
    ]
    inputs, physical, missing = _inputs_and_physical(route, req)
    title = (
        f"session {req.session_id[:8]} {req.branch_id} actions ({req.from_action_index},"
        f"{req.to_action_index}] frames ({bounds[0]},{bounds[1]}] not adjudicated"
    )
    images, sheet, sheet_meta = _deliver(req, checked, title, root)
    metadata = {
        "kind": "gamerig.emulator.review",
        "reviewVersion": 1,
        "recordingPath": str(root),
        "archive": (
            {
                "archived": True,
                "originalPath": str(resolved.original_path),
                "archiveId": resolved.archive_id,
                "requestedPath": str(resolved.requested),
                "mappingVerified": True,
            }
            if resolved.archived
            else {"archived": False}
        ),
        "sessionId": req.session_id,
        "branchId": req.branch_id,
        "recordingStatus": status,
        "branch": route.describe(),
        "interval": {
            "fromActionIndex": req.from_action_index,
            "toActionIndex": req.to_action_index,
            "fromFrame": bounds[0],
            "toFrame": bounds[1],
        },
        "inputs": inputs,
        "physicalEvents": physical,
        "frames": [c.to_json(root) for c in checked],
        "coverage": _coverage(
            route, req, bounds, samples, checked, missing, (reader.header.get("limits") or {}).get("sampleEveryFrames")
        ),
        "authentication": auth,
        "images": {
            "layout": req.image_layout,
            "includeImages": req.include_images,
            "maxImages": req.max_images,
            "delivered": len(images) if req.image_layout == "individual" else int(sheet is not None),
        },
        "contactSheet": sheet_meta,
        "semanticValidity": "not-adjudicated",
    }
    enforce_metadata_limit(metadata)
    return ReviewResult(metadata, images, sheet)
