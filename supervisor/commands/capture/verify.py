"""``supervisor capture verify PATH [--json]``: print the verifier's report
(``supervisor.capture.verify``) and exit with its code."""

from __future__ import annotations

import sys

from supervisor.capture.errors import NotACapture
from supervisor.capture.findings import EXIT_USAGE
from supervisor.capture.report import render
from supervisor.capture.verify import verify_path
from supervisor.commands.base import Command, emit


class TtyProgress:
    """``verifying 12/340 sessions`` on one rewritten stderr line; cleared at the end."""

    def __init__(self, stream):
        self.stream = stream

    def __call__(self, done: int, total: int, name: str) -> None:
        if done >= total:
            self.stream.write("\r\x1b[K")
        else:
            self.stream.write(f"\r\x1b[Kverifying {done + 1}/{total} sessions  {name[:40]}")
        self.stream.flush()


class Verify(Command):
    """Check a session directory or a whole capture root; exit 0 only if complete and intact.

    Exit codes: 0 complete and intact; 3 incomplete evidence (a torn row, no session_end,
    no session.json); 4 damaged (edited, reordered, removed or mismatched content; wins
    over incomplete); 2 usage error or a PATH that is not a capture.

    Example:
      supervisor capture verify run/capture
      supervisor capture verify run/capture/sessions/<session-id> --json
    """

    name = "verify"

    def add_arguments(self, p) -> None:
        p.add_argument("path", metavar="PATH", help="a session directory or a capture root")
        p.add_argument("--json", action="store_true", help="print the full report as JSON")

    def run(self, args) -> int:
        stream = sys.stderr
        progress = TtyProgress(stream) if stream.isatty() else None
        try:
            report = verify_path(args.path, progress)
        except NotACapture as exc:
            if args.json:
                emit(args, {"report_version": 1, "path": exc.path, "error": exc.problem, "exit_code": EXIT_USAGE}, "")
            sys.stderr.write(f"error: {exc}\n")
            return EXIT_USAGE
        emit(args, report.to_dict(), render(report))
        return report.exit_code
