"""``supervisor capture coverage PATH... [--expect FILE] [--json]``: the screen variants, action
kinds and runs of STS2MCP captures (``supervisor.capture.coverage``), printed.

Exit codes: 0 every expected variant reached (or none expected), 1 some never reached (named),
2 a PATH that is not a capture.

Example:
  supervisor capture coverage run/capture
  supervisor capture coverage run/capture --json --expect vendor/sts2mcp
  supervisor capture coverage campaign/seed-*/capture
"""

from __future__ import annotations

from supervisor.capture.coverage import expected_variants, render, scan
from supervisor.capture.errors import NotACapture
from supervisor.commands.base import Command, emit


class Coverage(Command):
    """Screen variants, action kinds and runs of STS2MCP captures (reads only).

    Example:
      supervisor capture coverage run/capture
      supervisor capture coverage run/capture --expect vendor/sts2mcp --json
    """

    name = "coverage"

    def add_arguments(self, p) -> None:
        p.add_argument("path", nargs="+", help="capture roots or session directories (all counted together)")
        p.add_argument(
            "--expect",
            help="variants that must appear: a samples directory "
            "(vendor/sts2mcp) or a file with one name per line; exit 1 if any is missing",
        )
        p.add_argument("--json", action="store_true", help="machine-readable output")

    def run(self, args) -> int:
        try:
            cov = scan(*args.path)
        except NotACapture as exc:
            print(f"capture coverage: {exc}")
            return 2
        missing = cov.missing(expected_variants(args.expect)) if args.expect else []
        emit(args, dict(cov.as_dict(), missing=missing), render(cov, missing))
        return 1 if missing else 0
