"""Review an interval already played: ``supervisor capture review PATH --session ID --branch B
--from N --to M [--max-images K] [--contact-sheet] [--no-images] [--json]``.

The request is the exact ``recordingSpan`` a step returned (its ``action_result`` response):
give PATH and ``--session/--branch/--from/--to`` (plus ``--from-frame/--to-frame/--prefix-pin``
to have them checked), or the span itself with ``--span JSON``. Never reconstruct indices
from step counts. The review reads the recording and writes nothing into it
(actors/emulator/tools/review.py). The individual layout prints the verified PNG paths inside the
recording; ``--contact-sheet`` saves the returned sheet under ``artifacts/review/`` (or
``--sheet-out FILE`` inside ``artifacts/``, never inside the recording) and prints its path.
"""

from __future__ import annotations

import json
import secrets
from pathlib import Path

from actors.emulator.tools.derived import authorize_output, write_no_clobber
from actors.emulator.tools.review import DEFAULT_IMAGES, ReviewResult, review
from supervisor.capture.frames import recording_dir
from supervisor.commands.base import Command, emit

from .failure import EXIT_DAMAGED, EXIT_OK, HANDLED, fail

_SPAN_FIELDS = (
    "recordingPath",
    "sessionId",
    "branchId",
    "fromActionIndex",
    "toActionIndex",
    "fromFrame",
    "toFrame",
    "prefixPin",
)


def build_request(args) -> dict:
    """The review request from ``--span`` or from PATH and the interval options."""
    if args.span is not None:
        if args.path or any(v is not None for v in (args.session_id, args.branch, args.from_index, args.to_index)):
            raise ValueError("--span replaces PATH, --session, --branch, --from and --to; give one form")
        span = json.loads(args.span)
        if not isinstance(span, dict):
            raise ValueError("--span must be a recordingSpan JSON object")
        request = {k: span[k] for k in _SPAN_FIELDS if k in span}  # fromPrefixPin is kept apart
    else:
        missing = [
            flag
            for flag, v in (
                ("PATH", args.path),
                ("--session", args.session_id),
                ("--branch", args.branch),
                ("--from", args.from_index),
                ("--to", args.to_index),
            )
            if v is None
        ]
        if missing:
            raise ValueError(f"missing {', '.join(missing)} (or give the step's span with --span)")
        request = {
            "recordingPath": recording_dir(args.path),
            "sessionId": args.session_id,
            "branchId": args.branch,
            "fromActionIndex": args.from_index,
            "toActionIndex": args.to_index,
        }
        for key, value in (("fromFrame", args.from_frame), ("toFrame", args.to_frame), ("prefixPin", args.prefix_pin)):
            if value is not None:
                request[key] = value
    if args.sheet_out and not args.contact_sheet:
        raise ValueError("--sheet-out needs --contact-sheet")
    request.update(
        maxImages=args.max_images,
        includeImages=not args.no_images,
        imageLayout="contact-sheet" if args.contact_sheet else "individual",
    )
    return request


def save_sheet(result: ReviewResult, out: str | None) -> str:
    """Write the returned sheet under artifacts/ (no-clobber); return its path."""
    meta = result.metadata
    interval = meta["interval"]
    name = out or (
        f"artifacts/review/{meta['sessionId'][:8]}-{meta['branchId']}-{interval['fromActionIndex']}-"
        f"{interval['toActionIndex']}-{secrets.token_hex(3)}.png"
    )
    target = authorize_output(name, Path(meta["recordingPath"]), Path.cwd(), ".png", allow_recording=False)
    write_no_clobber(target.path, result.sheet)
    return str(target.path)


def _gaps_line(coverage: dict) -> str:
    gaps = coverage["gaps"]
    if not gaps:
        return "every native frame of the interval is retained" if not coverage["empty"] else "empty interval"
    shown = ", ".join(f"{g['fromFrame']}-{g['toFrame']}" for g in gaps[:4]) + (", ..." if len(gaps) > 4 else "")
    return f"{len(gaps)} unsampled gaps, {sum(g['frames'] for g in gaps)} frames ({shown})"


def _input_lines(meta: dict, shown: int = 12) -> list[str]:
    physical = {p["actionIndex"]: p for p in meta["physicalEvents"]}
    lines = []
    for item in meta["inputs"][:shown]:
        done = physical.get(item["actionIndex"])
        delivered = f"pressed {done['pressed']} released {done['released']}" if done else "delivery not recorded"
        lines.append(
            f"  action {item['actionIndex']}: hold {item['buttons']} for {item['frames']} frames "
            f"({item['fromFrame']}->{item['toFrame']}); {delivered}"
        )
    if len(meta["inputs"]) > shown:
        lines.append(f"  ... {len(meta['inputs']) - shown} more (--json lists them all)")
    return lines


def render(meta: dict, sheet_path: str | None) -> str:
    iv, cov, auth = meta["interval"], meta["coverage"], meta["authentication"]
    lines = [
        f"review  session {meta['sessionId']}  {meta['branchId']}  actions ({iv['fromActionIndex']},"
        f"{iv['toActionIndex']}]  frames ({iv['fromFrame']},{iv['toFrame']}]  recording {meta['recordingStatus']}",
        f"inputs {len(meta['inputs'])}  physical events {len(meta['physicalEvents'])}  "
        f"missing physical events {len(cov['physicalEventsMissing'])}  lost intervals {len(cov['lostIntervals'])}",
        *_input_lines(meta),
        f"retained frames {cov['retainedFrames']} (sampled every {cov['sampleEveryFrames']} frames), "
        f"selected {cov['selectedFrames']}, verified {cov['verifiedFrames']}",
        f"coverage: {_gaps_line(cov)}",
        f"authenticated: chain verified; interval pin {auth['intervalPrefixPin']}"
        + (f"; requested pin {auth['requestedPrefixPin']} covers it" if auth["requestedPrefixPin"] else ""),
    ]
    for bad in cov["unverifiedFrames"]:
        lines.append(f"NOT VERIFIED frame {bad['frame']}: {bad['status']}: {bad['problem']}")
    if sheet_path:
        lines.append(f"contact sheet: {sheet_path}")
    elif meta["contactSheet"] is not None:
        lines.append(f"contact sheet: none ({meta['contactSheet']['reason']})")
    elif meta["images"]["includeImages"]:
        lines += [
            f"frame {f['frame']} (action {f['actionIndex']}): {f['path']}" for f in meta["frames"] if f["verified"]
        ]
    lines.append("semantic validity: not adjudicated (inspect the evidence before claiming an outcome)")
    return "\n".join(lines)


class Review(Command):
    """Review an interval already played: inputs, physical events, verified frames, coverage.

    Copy the step's recordingSpan (from its action_result): --session, --branch, --from, --to
    (and optionally --from-frame, --to-frame, --prefix-pin), or pass it whole with --span.
    The interval is (from, to] on that branch; --from = --to is an explicit empty interval.
    Limits: 4,096 actions, 3,600 native frames, 2 MiB of metadata. Writes nothing into the
    recording; --contact-sheet saves the sheet under artifacts/review/ and prints its path.

    Exit codes: 0 no selected frame tampered or missing; 1 refused (bounds, limits, session, branch
    or pin mismatch, sheet path); 2 usage error; 4 damaged evidence (journal chain, tampered
    or missing PNG).

    Example:
      supervisor capture review run/capture/sessions/<id>/recording --session <sessionId> \\
          --branch branch-0001 --from 40 --to 48 --contact-sheet
    """

    name = "review"

    def add_arguments(self, p) -> None:
        p.add_argument(
            "path", metavar="PATH", nargs="?", help="a recording directory, or a session directory holding recording/"
        )
        p.add_argument("--span", help="a step's recordingSpan JSON (replaces PATH and the interval options)")
        p.add_argument("--session", dest="session_id", help="the span's sessionId")
        p.add_argument("--branch", help="the span's branchId")
        p.add_argument("--from", dest="from_index", type=int, help="the span's fromActionIndex (exclusive)")
        p.add_argument("--to", dest="to_index", type=int, help="the span's toActionIndex (inclusive)")
        p.add_argument("--from-frame", type=int, help="the span's fromFrame (checked)")
        p.add_argument("--to-frame", type=int, help="the span's toFrame (checked)")
        p.add_argument("--prefix-pin", help="the span's prefixPin (checked; not fromPrefixPin)")
        p.add_argument("--max-images", type=int, default=DEFAULT_IMAGES, help="1..8 (default 4)")
        p.add_argument("--contact-sheet", action="store_true", help="compose the images into one sheet")
        p.add_argument("--sheet-out", metavar="FILE", help="where to save the sheet (inside artifacts/)")
        p.add_argument("--no-images", action="store_true", help="deliver no image (selection is unchanged)")
        p.add_argument("--json", action="store_true", help="print the review metadata as JSON")

    def run(self, args) -> int:
        try:
            result = review(build_request(args))
            sheet_path = save_sheet(result, args.sheet_out) if result.sheet is not None else None
        except HANDLED as exc:
            return fail(args, exc)
        emit(args, {**result.metadata, "sheetPath": sheet_path}, render(result.metadata, sheet_path))
        damaged = [f for f in result.metadata["coverage"]["unverifiedFrames"] if f["status"] in ("tampered", "missing")]
        return EXIT_DAMAGED if damaged else EXIT_OK
