"""The supervisor's book of attached taps: who is attached, with which token, heard when.

The supervisor's control dispatch hands every ``attach_request`` and ``detach_request``, and
every request carrying a tap token, to ``TapRegistry.handle``; refusals become
``control_error`` replies here, with stable codes:

* ``unauthorized`` — an attach without the session token (recorded as ``control_refused``);
* ``read_only`` — a tap token used for anything but ``status_request``/``detach_request``
  (recorded as ``control_refused`` with the tap's id);
* ``unknown_tap`` — a detach with a token no tap holds.

Journal rows (``protocol.events``, through the supervisor's outbox): ``TapAttached``,
``TapDetached`` (``silent_s`` when lost), ``ControlRefused``. Tokens are never recorded.
A tap not heard for ``LOST_AFTER`` keep-alive intervals is dropped (``reason: lost``); if it
comes back, its token is refused and its runtime attaches again (see ``runtime.py``).
"""

from __future__ import annotations

import dataclasses
import secrets
import time
from collections.abc import Callable

from protocol.cli_to_supervisor import AttachRequest, DetachRequest, StatusRequest
from protocol.events import ControlRefused, Event, TapAttached, TapDetached
from protocol.supervisor_to_cli import AttachReply, ControlError, DetachReply, StatusReply

KEEPALIVE_S = 2.0
LOST_AFTER = 4  # keep-alive intervals


@dataclasses.dataclass
class Tap:
    tap_id: str
    name: str
    pid: int
    transport: str
    last_heard: float


class TapRegistry:
    def __init__(
        self,
        *,
        session_token: str,
        streams: dict[str, str],
        record: Callable[[Event], None],
        status: Callable[[], dict],
        keepalive_s: float = KEEPALIVE_S,
    ):
        self._session_token = session_token
        self.streams = streams  # transport -> stream endpoint
        self.record, self.status = record, status
        self.keepalive_s = max(0.1, keepalive_s)
        self.taps: dict[str, Tap] = {}  # tap token -> tap
        self._n = 0

    def wants(self, body) -> bool:
        """True for the requests this registry answers (the supervisor asks before dispatch)."""
        return isinstance(body, (AttachRequest, DetachRequest)) or body.token in self.taps

    def handle(self, msg_id: str, body):
        if isinstance(body, AttachRequest):
            return self._attach(msg_id, body)
        tap = self.taps.get(body.token)
        if tap is None:
            return ControlError(
                reply_to=msg_id, code="unknown_tap", message="no tap holds this token (detached or lost?)"
            )
        tap.last_heard = time.monotonic()
        if isinstance(body, StatusRequest):
            return StatusReply(reply_to=msg_id, status=self.status())
        if isinstance(body, DetachRequest):
            self._drop(body.token, body.reason or "detach")
            return DetachReply(reply_to=msg_id, tap_id=tap.tap_id)
        self.record(ControlRefused(request=body.TYPE, reason="read-only tap token", tap_id=tap.tap_id))
        return ControlError(reply_to=msg_id, code="read_only", message=f"taps are read-only: {body.TYPE} refused")

    def _attach(self, msg_id: str, body: AttachRequest):
        if not secrets.compare_digest(body.token.encode(), self._session_token.encode()):
            self.record(ControlRefused(request=body.TYPE, reason="bad token", name=body.name))
            return ControlError(reply_to=msg_id, code="unauthorized", message="wrong session token")
        stream = self.streams.get(body.transport)
        if stream is None:
            return ControlError(
                reply_to=msg_id,
                code="no_transport",
                message=f"this session has no {body.transport!r} stream endpoint "
                f"(available: {', '.join(sorted(self.streams))})",
            )
        self._n += 1
        token = secrets.token_hex(16)
        tap = Tap(
            tap_id=f"tap-{self._n}", name=body.name, pid=body.pid, transport=body.transport, last_heard=time.monotonic()
        )
        self.taps[token] = tap
        self.record(TapAttached(tap_id=tap.tap_id, name=tap.name, pid=tap.pid, transport=tap.transport))
        return AttachReply(
            reply_to=msg_id, tap_id=tap.tap_id, tap_token=token, stream=stream, keepalive_s=self.keepalive_s
        )

    def _drop(self, token: str, reason: str, silent_s: float | None = None) -> None:
        tap = self.taps.pop(token)
        self.record(TapDetached(tap_id=tap.tap_id, name=tap.name, reason=reason, silent_s=silent_s))

    def sweep(self, now: float | None = None) -> None:
        """Drop taps not heard for ``LOST_AFTER`` keep-alive intervals (they crashed or hang)."""
        now = time.monotonic() if now is None else now
        limit = LOST_AFTER * self.keepalive_s
        for token, tap in list(self.taps.items()):
            if now - tap.last_heard > limit:
                self._drop(token, "lost", silent_s=round(now - tap.last_heard, 1))

    def listing(self) -> list[dict]:
        return [
            {"tap_id": t.tap_id, "name": t.name, "pid": t.pid, "transport": t.transport} for t in self.taps.values()
        ]
