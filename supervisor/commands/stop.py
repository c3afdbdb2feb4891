"""Stop a running session: actors stop in reverse order and the recorder finalizes it.

By default ``stop`` returns once the session is finalized (its ``session.json`` and the root
feeds written, its supervisor gone), so ``capture verify`` right after it sees the whole
session; ``--timeout`` bounds the wait (exit 1 and a message naming the session when it
passes), ``--no-wait`` returns as soon as the stop was accepted.

Exit codes: 0 stopped (and finalized, unless --no-wait); 1 no such session, the request
failed, or the session was still finalizing at --timeout.

Example:
  supervisor stop
  supervisor stop --session 20261129T
  supervisor stop --no-wait
"""

from __future__ import annotations

import os
import time

from protocol.cli_to_supervisor import StopRequest

from .base import Command, RequestFailed, add_runtime_dir, control_request, emit, pick_session

POLL_S = 0.05


def running(rec: dict) -> bool:
    """Is the session's supervisor still there? Its record goes when it has finalized and
    exited; a process that exited but was not yet reaped (a zombie) counts as gone."""
    if not os.path.exists(rec.get("_path", "")):
        return False
    try:
        with open(f"/proc/{int(rec['pid'])}/stat", encoding="ascii") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError, ValueError, KeyError):
        try:
            os.kill(int(rec["pid"]), 0)
        except (OSError, ValueError, KeyError):
            return False
        return True


def wait_finalized(rec: dict, timeout_s: float) -> bool:
    end = time.monotonic() + timeout_s
    while running(rec):
        if time.monotonic() > end:
            return False
        time.sleep(POLL_S)
    return True


class Stop(Command):
    name = "stop"

    def add_arguments(self, p) -> None:
        add_runtime_dir(p)
        p.add_argument("--json", action="store_true", help="machine-readable output")
        p.add_argument(
            "--no-wait", action="store_true", help="return once the stop is accepted, before the session is finalized"
        )
        p.add_argument(
            "--timeout",
            type=float,
            default=60.0,
            metavar="S",
            help="how long to wait for the finalization (default: 60 s)",
        )

    def run(self, args) -> int:
        rec = pick_session(args)
        if rec is None:
            return 1
        try:
            reply = control_request(rec, StopRequest(token=rec["token"]))
        except RequestFailed as exc:
            emit(args, {"ok": False, "error": str(exc)}, f"error: {exc}")
            return 1
        if args.no_wait or not reply.accepted:
            emit(args, {"ok": reply.accepted, "detail": reply.detail, "finalized": None}, reply.detail)
            return 0
        if not wait_finalized(rec, args.timeout):
            detail = (
                f"session {rec['session_id']} was asked to stop and was still finalizing after {args.timeout:g} s "
                f"(its supervisor, pid {rec['pid']}, is still running): check `supervisor status` and "
                f"`supervisor capture verify {rec.get('session_dir', 'SESSION_DIR')}` later"
            )
            emit(args, {"ok": False, "detail": detail, "finalized": False}, f"error: {detail}")
            return 1
        detail = f"{reply.detail}: finalized"
        emit(args, {"ok": True, "detail": detail, "finalized": True, "session_dir": rec.get("session_dir")}, detail)
        return 0
