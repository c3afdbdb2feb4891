"""Extract a supporting GIF from retained frames: ``supervisor capture clip PATH --out FILE
(--start-frame N --end-frame M [--max-frames K] | --cut A:B[@BRANCH] ...) [--branch B] [--json]``.

Uses only the recording's retained, verified PNGs (actors/emulator/tools/clips.py): no ROM is
loaded, nothing is replayed or interpolated. FILE is relative to the current directory (the
workspace) and must lie inside the recording directory or the workspace's top-level
``artifacts/``; it is never overwritten, and its bytes are charged to the recording's
``quota-ledger.jsonl``. Prints the GIF's path.
"""

from __future__ import annotations

import re
from pathlib import Path

from actors.emulator.tools.clips import MAX_SOURCE_IMAGES, clip
from supervisor.capture.frames import recording_dir
from supervisor.commands.base import Command, emit

from .failure import EXIT_OK, HANDLED, fail

_CUT = re.compile(r"^(\d+):(\d+)(?:@(\S+))?$")


def parse_cut(text: str) -> dict:
    match = _CUT.match(text)
    if not match:
        raise ValueError(f"--cut {text!r}: expected START:END or START:END@BRANCH (native frame numbers)")
    cut = {"startFrame": int(match[1]), "endFrame": int(match[2])}
    if match[3]:
        cut["branchId"] = match[3]
    return cut


def build_request(args) -> dict:
    bounds = args.start_frame is not None or args.end_frame is not None
    if bounds == bool(args.cut):
        raise ValueError("give either --start-frame/--end-frame or one or more --cut START:END")
    request = {"recordingPath": recording_dir(args.path), "outputPath": args.out}
    if bounds:
        if args.start_frame is None or args.end_frame is None:
            raise ValueError("--start-frame and --end-frame go together")
        request.update(startFrame=args.start_frame, endFrame=args.end_frame)
    else:
        request["cuts"] = [parse_cut(text) for text in args.cut]
    if args.max_frames is not None:
        request["maxFrames"] = args.max_frames
    if args.branch:
        request["branchId"] = args.branch
    return request


def render(meta: dict) -> str:
    timing = meta["timing"]
    ledger = meta["ledger"]
    lines = [
        f"clip: {meta['outputPath']}",
        f"  {meta['sourceImages']} source images ({timing['gifFrames']} GIF frames after merging identical "
        f"ones), {timing['nativeFrames']} native frames = {timing['nativeMs']} ms of game time "
        f"(GIF {timing['durationMs']} ms)",
    ]
    for cut in meta["cuts"]:
        unsampled = sum(g["frames"] for g in cut["gaps"])
        lines.append(
            f"  cut {cut['cut']}  {cut['branchId']} frames {cut['startFrame']}..{cut['endFrame']} -> "
            f"{cut['outputStartMs']}..{cut['outputEndMs']} ms, {cut['sourceImages']} images, "
            f"{len(cut['gaps'])} gaps ({unsampled} unsampled frames)"
        )
    where = "outside the recording" if ledger["outside"] else "inside the recording"
    lines.append(
        f"  {ledger['bytes']:,} bytes ({where}) charged to {Path(meta['recordingPath'], 'quota-ledger.jsonl')}"
    )
    lines.append("  nothing interpolated or replayed; semantic validity: not adjudicated")
    return "\n".join(lines)


class Clip(Command):
    """Extract a GIF from a recording's retained frames (no ROM, no replay, no interpolation).

    One interval (--start-frame/--end-frame, both exact retained frames; --max-frames caps
    its source images, at most 600) or ordered cuts (--cut START:END[@BRANCH], repeatable:
    at most 16, 600 image occurrences, 60 s of summed native game time; order and repeats
    kept, never downsampled). --out must lie inside the recording or ./artifacts/, is never
    overwritten, and is charged to the recording's quota ledger.

    Exit codes: 0 written; 1 refused (bounds, limits, output path, a live or leased
    recording); 2 usage error; 4 damaged evidence (journal chain, a source PNG that does not
    verify).

    Example (the shipped pyboy profile retains every 60th frame: 240, 300, ...):
      supervisor capture clip run/capture/sessions/<id>/recording --out artifacts/clips/door.gif \\
          --start-frame 240 --end-frame 480
      supervisor capture clip PATH --out artifacts/clips/montage.gif --cut 240:480 --cut 240:300
    """

    name = "clip"

    def add_arguments(self, p) -> None:
        p.add_argument("path", metavar="PATH", help="a recording directory, or a session directory holding recording/")
        p.add_argument(
            "--out", required=True, metavar="FILE", help="the GIF to create (inside the recording or artifacts/)"
        )
        p.add_argument("--start-frame", type=int, help="first native frame (an exact retained frame)")
        p.add_argument("--end-frame", type=int, help="last native frame (an exact retained frame)")
        p.add_argument("--max-frames", type=int, help=f"most source images (1..{MAX_SOURCE_IMAGES})")
        p.add_argument("--cut", action="append", metavar="START:END[@BRANCH]", help="an ordered cut (repeatable)")
        p.add_argument("--branch", help="the branch when several retain the frames")
        p.add_argument("--json", action="store_true", help="print the clip metadata as JSON")

    def run(self, args) -> int:
        try:
            meta = clip(build_request(args), workspace=Path.cwd())
        except HANDLED as exc:
            return fail(args, exc)
        emit(args, meta, render(meta))
        return EXIT_OK
