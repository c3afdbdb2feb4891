"""Stop a running session: actors stop in reverse order and the recorder finalizes it.

Example:
  supervisor stop
  supervisor stop --session 20261129T
"""
from __future__ import annotations

from protocol.cli_to_supervisor import StopRequest

from .base import Command, RequestFailed, add_runtime_dir, control_request, emit, pick_session


class Stop(Command):
    name = "stop"

    def add_arguments(self, p) -> None:
        add_runtime_dir(p)
        p.add_argument("--json", action="store_true", help="machine-readable output")

    def run(self, args) -> int:
        rec = pick_session(args)
        if rec is None:
            return 1
        try:
            reply = control_request(rec, StopRequest(token=rec["token"]))
        except RequestFailed as exc:
            emit(args, {"ok": False, "error": str(exc)}, f"error: {exc}")
            return 1
        emit(args, {"ok": reply.accepted, "detail": reply.detail}, reply.detail)
        return 0
