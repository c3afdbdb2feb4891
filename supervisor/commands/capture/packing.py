"""``supervisor capture pack PATH`` and ``capture unpack PATH``: a finished session's observation
files as one compressed, indexed file beside the journal, and back (``supervisor.capture.packing``
does the work, session by session; these commands report each session and the exit code).

Exit codes: 0 done (or nothing to do); 1 refused (named); 2 a PATH that is not a capture;
4 a pack that cannot prove its files (damaged or cut short).
"""

from __future__ import annotations

import os
import sys

from protocol import obspack
from supervisor.capture.errors import NotACapture, PackRefused
from supervisor.capture.packing import pack_session, sessions_of, unpack_session
from supervisor.commands.base import Command, emit


def _line(r: dict) -> str:
    if r["done"] != "packed":
        return f"{r['session']}: {r['done']}" + (f" ({r['observations']} observations)" if "observations" in r else "")
    return (
        f"{r['session']}: packed {r['observations']} observations, {r['bytes_before'] / 1e6:.2f} MB into "
        f"{obspack.PACK} ({r['pack_bytes'] / 1e6:.2f} MB, {r['segments']} segments): "
        f"{r['bytes_before'] / max(1, r['observations']):.0f} -> {r['pack_bytes'] / max(1, r['observations']):.0f} "
        "bytes per observation"
    )


def _run(args, what) -> int:
    try:
        sessions = sessions_of(args.path)
    except NotACapture as exc:
        sys.stderr.write(f"error: {exc}\n")
        return 2
    tty = sys.stderr.isatty()
    progress = (lambda m: sys.stderr.write(f"\r\x1b[K{m}")) if tty else None
    results, refused, damaged = [], 0, 0
    for sd in sessions:
        try:
            r = pack_session(sd, progress) if what == "pack" else unpack_session(sd)
        except PackRefused as exc:
            refused += 1
            r = {"session": os.path.basename(sd), "done": "refused", "error": str(exc)}
        except obspack.PackDamaged as exc:
            damaged += 1
            r = {"session": os.path.basename(sd), "done": "refused", "error": f"damaged pack: {exc}"}
        if tty:
            sys.stderr.write("\r\x1b[K")
        results.append(r)
    text = "\n".join(_line(r) if "error" not in r else f"{r['session']}: refused: {r['error']}" for r in results)
    emit(args, {"sessions": results}, text or "no sessions")
    return 4 if damaged else 1 if refused else 0


class PackCommand(Command):
    """Pack a finished session's observation files into one compressed, indexed file.

    PATH is a session directory, a capture root or a fleet root (every finished session in
    it). The files are removed only once the pack is durable and every file was read back
    from it byte for byte; verify, audit, coverage and supervisor view read packed sessions as
    they read unpacked ones, and capture unpack gives the files back.

    Exit codes: 0 packed (or already); 1 a session refused (not finished); 2 not a capture;
    4 a damaged pack or observation file.

    Example:
      supervisor capture pack run/capture
      supervisor capture pack run/capture/sessions/<session-id> --json
    """

    name = "pack"

    def add_arguments(self, p) -> None:
        p.add_argument("path", metavar="PATH")
        p.add_argument("--json", action="store_true", help="machine-readable output")

    def run(self, args) -> int:
        return _run(args, "pack")


class UnpackCommand(Command):
    """Give a packed session its observation files back, byte for byte.

    Every file is checked against the pack's index and the journal's SHA-256 before anything
    is written; a pack that cannot prove its files is refused and left as it is.

    Exit codes: 0 unpacked (or nothing to do); 2 not a capture; 4 a damaged or cut-short pack.

    Example:
      supervisor capture unpack run/capture/sessions/<session-id>
    """

    name = "unpack"

    def add_arguments(self, p) -> None:
        p.add_argument("path", metavar="PATH")
        p.add_argument("--json", action="store_true", help="machine-readable output")

    def run(self, args) -> int:
        return _run(args, "unpack")
