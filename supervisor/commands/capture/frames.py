"""``supervisor capture frames PATH [--branch B] [--json]``: a recording's retained frames
(``supervisor.capture.frames``), one line each, then its checkpoints and branches.

Exit codes: 0 listed; 2 a PATH that is not a recording; 4 the recording's journal does not
verify.
"""

from __future__ import annotations

import os
import sys

from actors.emulator.recording.limits import MANIFEST
from supervisor.capture.frames import listing, recording_dir
from supervisor.commands.base import Command, emit

from .failure import EXIT_OK, EXIT_USAGE, HANDLED, fail


def render(data: dict) -> str:
    lines = [
        f"recording {data['recordingPath']} (session {data['sessionId']}, {data['status']}): "
        f"{len(data['frames'])} retained frames, every {data['sampleEveryFrames']} frames; "
        f"branches {', '.join(b for b in data['branches'] if b)}",
        f"{'branch':<12} {'frame':>7} {'action':>7}  png",
    ]
    lines += [f"{f['branchId']:<12} {f['frame']:>7} {f['actionIndex']:>7}  {f['png']}" for f in data["frames"]]
    if data["checkpoints"]:
        lines.append(
            "checkpoints: "
            + ", ".join(
                f"{c['checkpointId']} (frame {c['frame']}, action {c['actionIndex']}, {c['branchId']})"
                for c in data["checkpoints"]
            )
        )
    if data["frames"]:
        a, b = data["frames"][0], data["frames"][min(len(data["frames"]) - 1, 4)]
        lines.append(
            f"e.g. supervisor capture clip PATH --out artifacts/clips/x.gif --start-frame {a['frame']} "
            f"--end-frame {b['frame']}"
        )
    return "\n".join(lines)


class Frames(Command):
    """List a recording's retained frames (what clip and review can use), checkpoints and branches.

    Exit codes: 0 listed; 2 not a recording; 4 the recording's journal does not verify.

    Example:
      supervisor capture frames run/capture/sessions/<session-id>
      supervisor capture frames RECORDING --branch branch-0002 --json
    """

    name = "frames"

    def add_arguments(self, p) -> None:
        p.add_argument("path", metavar="PATH", help="a recording directory, or a session directory with recording/")
        p.add_argument("--branch", help="only this branch's frames")
        p.add_argument("--json", action="store_true", help="machine-readable output")

    def run(self, args) -> int:
        if not os.path.isfile(os.path.join(recording_dir(args.path), MANIFEST)):
            sys.stderr.write(
                f"error: {args.path} is not a recording (no {MANIFEST}) nor a session directory holding recording/\n"
            )
            return EXIT_USAGE
        try:
            data = listing(args.path, args.branch)
        except HANDLED as exc:
            return fail(args, exc)
        emit(args, data, render(data))
        return EXIT_OK
