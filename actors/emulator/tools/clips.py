"""Extract a supporting GIF from retained frames: ``clip(ClipRequest)`` → metadata.

Only retained, verified PNGs are used (:func:`.retained.verify_sample`); nothing is replayed,
captured, interpolated or downsampled, and no ROM is loaded. A request names either one
interval (``startFrame``/``endFrame``, with ``maxFrames`` ≤ 600 source images, default 600)
or ordered ``cuts`` (at most 16, each ``{startFrame, endFrame[, branchId]}``). Every
interval's endpoints must be exact retained frames of one branch; the branch is inferred
when exactly one branch retains both endpoints, otherwise ``branchId`` must name it. Cuts
keep their order and repeats. Refused: more than 600 source image occurrences (or
``maxFrames``), more than 16 cuts, more than 60 s of summed native game time.

Timing is native game time (70,224 dots per frame at 4,194,304 Hz, ≈16.742 ms): each sample
is held until the next retained sample of its cut, the last one of a cut for one frame, so a
cut lasts ``endFrame - startFrame + 1`` frames; decision pauses between steps are not game
time and are omitted. GIF delays are centiseconds: output times are rounded cumulatively,
and identical consecutive images merge, so the encoded frame count and delays can differ
from the source count. The returned metadata maps every source frame to output time, lists
the sampling gaps of each cut, and gives the ledger charge.

An archived recording is refused (its bytes are immutable; restore it first). A live
recording is refused by :func:`clip` (its writer owns the byte budget); :func:`clip_live` is
the writer's own clip of it, made inside the emulator actor.
The output is written no-clobber inside the recording directory or the workspace's
top-level ``artifacts/`` (:mod:`.derived`), while this process holds the recording's
artifact-worker lease (:mod:`.lease`), and its bytes are charged to ``quota-ledger.jsonl``.
"""

from __future__ import annotations

import io
import json
import os
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path

from PIL import Image

from ..recording import lease
from ..recording.errors import (
    EvidenceLimitExceeded,
    IntervalRefused,
    InvalidOption,
    LimitExceeded,
    RecordingBusy,
    RecordingCorrupt,
)
from ..recording.reader import FINAL_STATUSES, RecordingReader, writer_alive
from ..recording.retained import (
    CLOCK_HZ,
    DOTS_PER_FRAME,
    FRAME_SECONDS,
    BranchRoute,
    branch_routes,
    gaps,
    native_ms,
    verify_sample,
)
from .derived import STOP_RESERVE, append_ledger, authorize_output, ledger_entry, publish, write_no_clobber
from .sources import locate_recording

MAX_SOURCE_IMAGES = 600
MAX_CUTS = 16
MAX_GAME_SECONDS = 60
MAX_GAME_FRAMES = int(MAX_GAME_SECONDS / FRAME_SECONDS)  # 3,583 frames ≈ 59.99 s
_TOP = {"recordingPath", "outputPath", "startFrame", "endFrame", "cuts", "branchId", "maxFrames"}
_CUT = {"startFrame", "endFrame", "branchId"}


def _frame(name: str, value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise InvalidOption(name, value, "a native frame number >= 0")
    return value


@dataclass(frozen=True)
class Cut:
    start_frame: int
    end_frame: int
    branch_id: str | None = None

    def check(self, where: str) -> None:
        _frame(f"{where}.startFrame", self.start_frame)
        _frame(f"{where}.endFrame", self.end_frame)
        if self.end_frame < self.start_frame:
            raise InvalidOption(f"{where}.endFrame", self.end_frame, f">= startFrame ({self.start_frame})")
        if self.branch_id is not None and not isinstance(self.branch_id, str):
            raise InvalidOption(f"{where}.branchId", self.branch_id, "a branch id string")


@dataclass(frozen=True)
class ClipRequest:
    """A clip request; ``cuts`` or the top-level ``start_frame``/``end_frame``, not both."""

    recording_path: str
    output_path: str
    cuts: tuple[Cut, ...]
    max_frames: int = MAX_SOURCE_IMAGES
    top_level: bool = False

    def __post_init__(self):
        for name, value in (("recordingPath", self.recording_path), ("outputPath", self.output_path)):
            if not isinstance(value, str) or not value:
                raise InvalidOption(name, value, "a non-empty path string")
        if (
            isinstance(self.max_frames, bool)
            or not isinstance(self.max_frames, int)
            or not 1 <= self.max_frames <= MAX_SOURCE_IMAGES
        ):
            raise InvalidOption("maxFrames", self.max_frames, f"an integer 1..{MAX_SOURCE_IMAGES}")
        if not self.cuts:
            raise InvalidOption("cuts", [], "at least one interval")
        if len(self.cuts) > MAX_CUTS:
            raise EvidenceLimitExceeded("clip", "cuts", len(self.cuts), MAX_CUTS)
        for i, cut in enumerate(self.cuts):
            cut.check("interval" if self.top_level else f"cuts[{i}]")

    @classmethod
    def from_json(cls, body: dict) -> ClipRequest:
        if not isinstance(body, dict):
            raise InvalidOption("request", body, "a JSON object")
        unknown = sorted(set(body) - _TOP)
        if unknown:
            raise InvalidOption(unknown[0], body[unknown[0]], f"one of {', '.join(sorted(_TOP))}")
        has_bounds = "startFrame" in body or "endFrame" in body
        if has_bounds == ("cuts" in body):
            raise InvalidOption("cuts", body.get("cuts"), "either cuts or startFrame/endFrame (exactly one form)")
        branch = body.get("branchId")
        if has_bounds:
            cuts = (Cut(body.get("startFrame"), body.get("endFrame"), branch),)
        else:
            raw = body["cuts"]
            if not isinstance(raw, list):
                raise InvalidOption("cuts", raw, "a list of {startFrame, endFrame[, branchId]}")
            cuts = tuple(_cut_from_json(i, c, branch) for i, c in enumerate(raw))
        return cls(
            body.get("recordingPath"),
            body.get("outputPath"),
            cuts,
            body.get("maxFrames", MAX_SOURCE_IMAGES),
            top_level=has_bounds,
        )


def _cut_from_json(index: int, raw: object, branch: str | None) -> Cut:
    if not isinstance(raw, dict) or set(raw) - _CUT or not {"startFrame", "endFrame"} <= set(raw):
        raise InvalidOption(f"cuts[{index}]", raw, "an object {startFrame, endFrame[, branchId]}")
    return Cut(raw["startFrame"], raw["endFrame"], raw.get("branchId", branch))


def _nearest(route: BranchRoute, frame: int) -> str:
    frames = [s["frame"] for s in route.retained()]
    before = max((f for f in frames if f < frame), default=None)
    after = min((f for f in frames if f > frame), default=None)
    near = [
        f"{before} before" if before is not None else "none before",
        f"{after} after" if after is not None else "none after",
    ]
    return f"nearest retained frames on {route.branch_id}: {', '.join(near)} (supervisor capture frames lists them)"


def _branch_for(cut: Cut, routes: dict[str, BranchRoute], where: str) -> BranchRoute:
    if cut.branch_id is not None:
        if cut.branch_id not in routes:
            raise IntervalRefused(f"{where}.branchId", cut.branch_id, f"known branches: {', '.join(routes)}")
        return routes[cut.branch_id]
    holding = [r for r in routes.values() if {cut.start_frame, cut.end_frame} <= {s["frame"] for s in r.retained()}]
    if len(holding) == 1:
        return holding[0]
    if holding:
        raise IntervalRefused(
            f"{where}.branchId",
            None,
            f"both endpoints are retained on {', '.join(r.branch_id for r in holding)}; name the branch",
        )
    route = routes["branch-0001"] if len(routes) == 1 else None
    detail = _nearest(route, cut.start_frame) if route else "no single branch retains both endpoints"
    raise IntervalRefused(
        f"{where}.startFrame",
        cut.start_frame,
        f"endpoints {cut.start_frame}..{cut.end_frame} are not exact retained frames; {detail}",
    )


def select_sources(cut: Cut, route: BranchRoute, where: str) -> list[dict]:
    """The retained samples of ``route`` in ``[start, end]``; both endpoints must be retained."""
    sources = sorted(
        (s for s in route.retained() if cut.start_frame <= s["frame"] <= cut.end_frame), key=lambda s: s["frame"]
    )
    for name, frame in (("startFrame", cut.start_frame), ("endFrame", cut.end_frame)):
        if not any(s["frame"] == frame for s in sources):
            raise IntervalRefused(f"{where}.{name}", frame, f"not a retained frame; {_nearest(route, frame)}")
    return sources


def plan(request: ClipRequest, routes: dict[str, BranchRoute]) -> list[tuple[Cut, BranchRoute, list[dict]]]:
    """Resolve every cut to its branch and sources, then apply the occurrence and time limits."""
    planned = []
    for i, cut in enumerate(request.cuts):
        where = "interval" if request.top_level else f"cuts[{i}]"
        route = _branch_for(cut, routes, where)
        planned.append((cut, route, select_sources(cut, route, where)))
    occurrences = sum(len(sources) for _c, _r, sources in planned)
    limit = min(MAX_SOURCE_IMAGES, request.max_frames)
    if occurrences > limit:
        name = "maxFrames" if limit < MAX_SOURCE_IMAGES else "source image occurrences"
        raise EvidenceLimitExceeded("clip", f"source image occurrences (limit: {name})", occurrences, limit)
    game_frames = sum(cut.end_frame - cut.start_frame + 1 for cut in request.cuts)
    if game_frames * DOTS_PER_FRAME > MAX_GAME_SECONDS * CLOCK_HZ:
        raise EvidenceLimitExceeded(
            "clip",
            f"native frames of summed game time (60 s = {MAX_GAME_FRAMES:,} frames)",
            game_frames,
            MAX_GAME_FRAMES,
        )
    return planned


def _centis(seconds: Fraction) -> int:
    return int((seconds * 100 + Fraction(1, 2)) // 1)


def timeline(planned) -> tuple[list[dict], list[tuple[dict, int]]]:
    """Per-cut metadata (source frame → output time, gaps) and (sample, GIF delay ms) pairs."""
    cuts, frames, clock = [], [], Fraction(0)
    for number, (cut, route, sources) in enumerate(planned, start=1):
        start, rows = clock, []
        for i, sample in enumerate(sources):
            hold = (sources[i + 1]["frame"] if i + 1 < len(sources) else cut.end_frame + 1) - sample["frame"]
            end = clock + hold * FRAME_SECONDS
            delay = (_centis(end) - _centis(clock)) * 10
            rows.append(
                {
                    "frame": sample["frame"],
                    "actionIndex": sample["actionIndex"],
                    "rgbaSha256": sample["rgbaSha256"],
                    "pngSha256": sample["pngSha256"],
                    "holdFrames": hold,
                    "outputStartMs": round(float(clock * 1000), 3),
                    "outputMs": native_ms(hold),
                    "gifStartMs": _centis(clock) * 10,
                    "gifDelayMs": delay,
                }
            )
            frames.append((sample, delay))
            clock = end
        omitted = [
            s["frame"] for s in route.samples if not s.get("png") and cut.start_frame <= s["frame"] <= cut.end_frame
        ]
        cuts.append(
            {
                "cut": number,
                "branchId": route.branch_id,
                "startFrame": cut.start_frame,
                "endFrame": cut.end_frame,
                "nativeFrames": cut.end_frame - cut.start_frame + 1,
                "outputStartMs": round(float(start * 1000), 3),
                "outputEndMs": round(float(clock * 1000), 3),
                "sourceImages": len(sources),
                "sources": rows,
                "gaps": gaps([s["frame"] for s in sources], cut.start_frame, cut.end_frame),
                "omittedFrames": omitted,
            }
        )
    return cuts, frames


def verified_bytes(root: Path, samples: list[dict]) -> dict[int, bytes]:
    """PNG bytes of every distinct source (by journal line), each verified; a damaged source
    refuses the whole clip."""
    out = {}
    for sample in samples:
        if sample["seq"] in out:
            continue
        checked = verify_sample(root, sample)
        if not checked.verified:
            raise RecordingCorrupt(root, f"{sample.get('png')} (frame {sample['frame']}): {checked.problem}")
        out[sample["seq"]] = checked.data
    return out


def encode_gif(frames: list[tuple[dict, int]], data: dict[int, bytes]) -> bytes:
    images = []
    for sample, _delay in frames:
        with Image.open(io.BytesIO(data[sample["seq"]])) as image:
            images.append(image.convert("RGB").convert("P", palette=Image.Palette.ADAPTIVE, colors=256))
    buf = io.BytesIO()
    images[0].save(
        buf,
        "GIF",
        save_all=True,
        append_images=images[1:],
        loop=0,
        duration=[delay for _s, delay in frames],
        optimize=False,
    )
    return buf.getvalue()


def _encoded(gif: bytes) -> dict:
    with Image.open(io.BytesIO(gif)) as image:
        delays = []
        for i in range(image.n_frames):
            image.seek(i)
            delays.append(image.info.get("duration", 0))
    return {"gifFrames": len(delays), "durationMs": sum(delays)}


def render(req: ClipRequest, root: Path) -> tuple[RecordingReader, list[dict], list, bytes]:
    """Plan, time and encode the clip of ``root``'s committed retained frames (writes nothing):
    the reader, the per-cut metadata, the (sample, delay) frames and the GIF bytes."""
    reader = RecordingReader(root)
    planned = plan(req, branch_routes(reader.scan.events))
    cuts, frames = timeline(planned)
    data = verified_bytes(root, [sample for sample, _delay in frames])
    return reader, cuts, frames, encode_gif(frames, data)


def _rendered(req: ClipRequest) -> tuple[Path, RecordingReader, list[dict], list, bytes]:
    """The refusals every clip meets (an archived or live recording) and its rendering."""
    resolved = locate_recording(req.recording_path)
    if resolved.archived:
        raise IntervalRefused(
            "recordingPath",
            req.recording_path,
            f"archived as {resolved.archive_id}: archived bytes are immutable; restore it "
            "before creating new derived clips",
        )
    root = resolved.recording_path
    reader, cuts, frames, gif = render(req, root)
    if writer_alive(root):
        raise RecordingBusy(root)
    return root, reader, cuts, frames, gif


def preview(request: ClipRequest | dict) -> tuple[dict, bytes]:
    """The GIF :func:`clip` would write, and its timing, without writing anything (``supervisor
    view`` shows it): the same plan, limits and refusals. ``outputPath`` is required only by
    the request's shape; nothing is written there."""
    req = request if isinstance(request, ClipRequest) else ClipRequest.from_json(request)
    root, reader, cuts, frames, gif = _rendered(req)
    native = sum(c["nativeFrames"] for c in cuts)
    return {
        "kind": "gamerig.emulator.clip-preview",
        "recordingPath": str(root),
        "sessionId": reader.header.get("sessionId"),
        "bytes": len(gif),
        "sourceImages": len(frames),
        "cuts": cuts,
        "nativeFrames": native,
        "nativeMs": native_ms(native),
        **_encoded(gif),
        "interpolated": False,
        "replayed": False,
        "semanticValidity": "not-adjudicated",
    }, gif


def clip(request: ClipRequest | dict, workspace: Path | str | None = None) -> dict:
    """Write the GIF and return its metadata (see the module docstring)."""
    req = request if isinstance(request, ClipRequest) else ClipRequest.from_json(request)
    workspace = Path(os.path.abspath(workspace or Path.cwd()))
    root, reader, cuts, frames, gif = _rendered(req)
    finalized = reader.summary.stop is not None
    with lease.hold(root, lease.ARTIFACT_WORKER, "clip"):
        target = authorize_output(req.output_path, root, workspace, ".gif")
        charge = publish(target, gif, root, int(reader.header["limits"]["maxBytes"]), finalized, "clip")
    return _metadata(root, reader, target, gif, cuts, frames, charge)


def clip_live(recording, request: dict, workspace: Path | str) -> dict:
    """The clip of a live recording, made by the process that writes it (the emulator actor,
    for an agent's ``emulator_clip``: supervisor/mcp). ``recording`` is that process's open
    :class:`.recording.Recording`; ``request`` a clip request without ``recordingPath``.

    Its frames and journal are committed first (``sync``), so only committed retained frames
    are read, and nothing is captured, stepped or appended to the recording's journal. The
    writer owns the byte budget: the clip and its ledger line must fit ``maxBytes`` (minus
    the stop reserve while live), and are charged to the writer's own count, so a later
    step's budget check sees them."""
    root = Path(recording.resolved)
    req = ClipRequest.from_json({**request, "recordingPath": str(root)})
    recording.sync()
    reader, cuts, frames, gif = render(req, root)
    target = authorize_output(req.output_path, root, Path(os.path.abspath(workspace)), ".gif")
    entry = ledger_entry(target, gif, "clip")
    nbytes = len(gif) + len(json.dumps(entry, sort_keys=True)) + 1
    allowed = recording.limits.max_bytes - (0 if recording.status in FINAL_STATUSES else STOP_RESERVE)
    used = recording.bytes_used
    if used + nbytes > allowed:
        raise LimitExceeded("maxBytes", used, nbytes, allowed)
    write_no_clobber(target.path, gif)
    try:
        recording.charge(append_ledger(root, entry) + len(gif))
    except BaseException:
        os.unlink(target.path)
        raise
    return _metadata(
        root,
        reader,
        target,
        gif,
        cuts,
        frames,
        {**entry, "bytesUsedBefore": used, "maxBytes": recording.limits.max_bytes},
    )


def _metadata(
    root: Path, reader: RecordingReader, target, gif: bytes, cuts: list[dict], frames: list, charge: dict
) -> dict:
    native = sum(c["nativeFrames"] for c in cuts)
    return {
        "kind": "gamerig.emulator.clip",
        "clipVersion": 1,
        "recordingPath": str(root),
        "sessionId": reader.header.get("sessionId"),
        "outputPath": str(target.path),
        "outputRoot": target.root_kind,
        "bytes": len(gif),
        "sha256": charge["sha256"],
        "sourceImages": len(frames),
        "cuts": cuts,
        "timing": {
            "basis": "native game time: 70,224 dots per frame at 4,194,304 Hz",
            "frameMs": native_ms(1),
            "nativeFrames": native,
            "nativeMs": native_ms(native),
            "heldSamples": "each sample is held until the next retained sample of its cut; "
            "the last sample of a cut for one frame",
            "decisionPausesOmitted": True,
            "gifQuantumMs": 10,
            **_encoded(gif),
        },
        "ledger": charge,
        "interpolated": False,
        "replayed": False,
        "downsampled": False,
        "semanticValidity": "not-adjudicated",
    }
