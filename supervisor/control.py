"""The supervisor's control endpoint: what actors and command-line clients say to it, and
the pings it sends. Process lifecycle (start, stop, reap, restart) is ``session.py``'s.

One ROUTER socket (``Control.socket``), bound on the session's ``control`` endpoint. An
actor's DEALER connects with its name as routing id; a CLI client or a tap with any id.

* ``hello`` — from an actor the supervisor started (its name and pid match a ``Child``):
  ``welcome`` with the session's facts; a protocol major this supervisor does not speak:
  ``refused`` (recorded as ``actor_refused``); any other process: ``refused``.
* ``heartbeat`` — the actor is alive; its counters become its status.
* ``request_stop`` — an actor asks to end the session (recorded as ``stop_requested``).
* ``status_request`` / ``stop_request`` — need the session token (else ``control_error``
  ``unauthorized``, recorded as ``control_refused``); ``attach_request``,
  ``detach_request`` and anything sent with a tap token go to the ``TapRegistry``.
* a frame of another protocol version gets ``refused``; an undecodable one is counted.
* ``ping_all`` pings every welcomed actor and names the ones silent too long.

Nothing here blocks: replies are sent at once, journal rows (``protocol.events`` kinds) go
through ``record`` (the outbox), a stop through ``request_stop`` (the session decides what
stopping means).
"""

from __future__ import annotations

import time
from collections.abc import Callable

import zmq

import protocol
from actors.runtime.transport import Counters, send_envelope
from protocol.actor_to_supervisor import Heartbeat, Hello, RequestStop
from protocol.cli_to_supervisor import AttachRequest, DetachRequest, StatusRequest, StopRequest
from protocol.errors import ProtocolError, VersionMismatch
from protocol.events import ActorRefused, ControlRefused, Event, StopRequested
from protocol.message import Message
from protocol.supervisor_to_actor import Ping, Refused, SessionInfo, Welcome
from protocol.supervisor_to_cli import ControlError, StatusReply, StopReply

from .children import Child
from .taps import TapRegistry

#: an actor silent for this many heartbeat intervals is unresponsive
SILENT_BEATS = 3
CLI_REQUESTS = (StatusRequest, StopRequest, AttachRequest, DetachRequest)


class Control:
    """The control ROUTER and its handlers; ``handle_waiting()`` answers every waiting frame."""

    def __init__(
        self,
        zctx: zmq.Context,
        session: SessionInfo,
        *,
        token: str,
        startup_timeout_s: float,
        children: dict[str, Child],
        taps: TapRegistry,
        counters: Counters,
        record: Callable[[Event], None],
        request_stop: Callable[[str, str], None],
        status: Callable[[], dict],
    ):
        """``session``: what a ``welcome`` tells an actor; ``token``: what CLI requests must
        carry; ``startup_timeout_s``: how much longer an actor not yet welcomed may be silent."""
        self.session, self.token, self.startup_timeout_s = session, token, startup_timeout_s
        self.children, self.taps, self.counters = children, taps, counters
        self.record, self.request_stop, self.status = record, request_stop, status
        self.socket = zctx.socket(zmq.ROUTER)
        self.socket.setsockopt(zmq.LINGER, 0)
        self.socket.setsockopt(zmq.ROUTER_HANDOVER, 1)  # a restarted actor takes its name back
        self.socket.bind(session.endpoints["control"])

    def close(self) -> None:
        self.socket.close(0)

    # -- sending ----------------------------------------------------------------------------
    def reply(self, routing: list[bytes], body: Message) -> None:
        send_envelope(self.socket, body, session=self.session.session_id, sender="supervisor", routing=routing)

    def tell(self, actor: str, body: Message) -> None:
        """Send ``body`` to an actor's control connection (e.g. ``stop_actor``)."""
        self.reply([actor.encode()], body)

    def ping_all(self, now: float) -> list[Child]:
        """Ping every welcomed live actor; return those silent for more than
        ``SILENT_BEATS`` heartbeats (plus the start-up timeout before their welcome)."""
        silent = []
        for c in self.children.values():
            if not c.alive() or c.stopping:
                continue
            if c.welcomed:
                self.tell(c.name, Ping())
            grace = 0.0 if c.welcomed else self.startup_timeout_s
            if now - c.last_heard > SILENT_BEATS * self.session.heartbeat_s + grace:
                silent.append(c)
        return silent

    # -- receiving --------------------------------------------------------------------------
    def handle_waiting(self) -> None:
        """Answer every frame waiting on the socket (never blocks)."""
        while self.socket.poll(0):
            self.on_frames(self.socket.recv_multipart())

    def on_frames(self, frames: list[bytes]) -> None:
        routing, data = frames[:-1], frames[-1]
        try:
            env = protocol.decode(data)
        except VersionMismatch as exc:  # refuse clearly instead of leaving the peer waiting
            self.counters.bad(exc, "control")
            self.reply(routing, Refused(reason=str(exc)))
            return
        except ProtocolError as exc:
            self.counters.bad(exc, "control")
            return
        body = env.body
        child = self.children.get(routing[0].decode(errors="replace")) if routing else None
        if isinstance(body, Hello):
            self.on_hello(routing, body)
        elif isinstance(body, Heartbeat) and child is not None:
            child.last_heard = time.monotonic()
            child.status = body.counters or {}
        elif isinstance(body, RequestStop):
            self.record(StopRequested(actor=body.actor, reason=body.reason, detail=body.detail))
            self.request_stop(body.reason, f"asked by {body.actor}: {body.detail}")
        elif isinstance(body, CLI_REQUESTS):
            self.reply(routing, self.on_cli(env.id, body))

    def on_hello(self, routing: list[bytes], hello: Hello) -> None:
        child = self.children.get(hello.actor)
        if hello.protocol_major != protocol.PROTOCOL_MAJOR:
            reason = (
                f"protocol version {hello.protocol_major}.{hello.protocol_minor} is not "
                f"accepted; this supervisor speaks {protocol.PROTOCOL_MAJOR}.x — "
                "run every actor from the same gamerig installation"
            )
            self.reply(routing, Refused(reason=reason))
            self.record(ActorRefused(actor=hello.actor, reason=reason))
            return
        if child is None or child.pid != hello.pid:
            self.reply(routing, Refused(reason=f"{hello.actor!r} (pid {hello.pid}) was not started by this supervisor"))
            return
        child.welcomed = True
        child.last_heard = time.monotonic()
        self.reply(routing, Welcome.to(child.name, self.session))

    def on_cli(self, msg_id: str, body) -> Message:
        if self.taps.wants(body):  # attach, detach, and anything sent with a tap token
            return self.taps.handle(msg_id, body)
        if body.token != self.token:
            self.record(ControlRefused(request=body.TYPE, reason="bad token"))
            return ControlError(reply_to=msg_id, code="unauthorized", message="wrong session token")
        if isinstance(body, StopRequest):
            self.request_stop(body.reason or "stop_command", "")
            return StopReply(reply_to=msg_id, accepted=True, detail=f"stopping session {self.session.session_id}")
        return StatusReply(reply_to=msg_id, status=self.status())
