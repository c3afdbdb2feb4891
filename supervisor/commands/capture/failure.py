"""How ``capture frames``, ``capture review`` and ``capture clip`` report a failure.

Exit codes of these commands (as ``capture verify`` and the maintenance commands use them):
0 done (for review: no selected frame tampered or missing); 1 refused (bounds, limits,
session/branch/pin mismatch, output path, a recording that is live or leased by another
holder); 2 usage error (a bad option value, a PATH that is not a recording); 4 damaged
evidence (the journal's chain, or a retained PNG that does not verify).
"""

from __future__ import annotations

import sys

from actors.emulator.recording.errors import EmulatorError, IntervalRefused, InvalidOption, RecordingCorrupt
from supervisor.commands.base import emit

EXIT_OK, EXIT_REFUSED, EXIT_USAGE, EXIT_DAMAGED = 0, 1, 2, 4

HANDLED = (EmulatorError, ValueError, OSError)


def fail(args, exc: Exception) -> int:
    """Report ``exc`` (stderr, and as JSON with --json); return its exit code."""
    if isinstance(exc, RecordingCorrupt):
        code = EXIT_DAMAGED
    elif isinstance(exc, (InvalidOption, ValueError)) or (
        isinstance(exc, IntervalRefused) and exc.field == "recordingPath"
    ):
        code = EXIT_USAGE
    else:
        code = EXIT_REFUSED
    if getattr(args, "json", False):
        emit(args, {"error": str(exc), "code": getattr(exc, "code", "usage"), "exit_code": code}, "")
    sys.stderr.write(f"error: {exc}\n")
    return code
