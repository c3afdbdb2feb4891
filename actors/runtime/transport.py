"""ZeroMQ plumbing shared by actors and the supervisor: sockets, send/receive of envelopes.

Everything that turns bytes into messages goes through ``protocol.decode``; a frame that does
not decode is counted and logged by the caller, never allowed to crash it.
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Callable, Iterable

import zmq

import protocol
from protocol import Envelope, ProtocolError
from protocol.message import Message

log = logging.getLogger("gamerig.transport")


class RequestFailed(Exception):
    """Root of request failures at the transport boundary.

    RequestFailed
    ├── PeerUnavailable   no reply before the deadline (the peer is down or restarting)
    ├── PeerRefused       the peer answered with an error reply (code and message kept)
    └── NotEncodable      the request itself cannot be put on the wire (nothing was sent)
    """


class PeerUnavailable(RequestFailed):
    def __init__(self, endpoint: str, what: str, waited_s: float):
        super().__init__(f"no reply from {endpoint} to {what} within {waited_s:.1f}s")
        self.endpoint, self.what, self.waited_s = endpoint, what, waited_s


class NotEncodable(RequestFailed):
    def __init__(self, what: str, exc: Exception):
        super().__init__(f"{what} cannot be encoded: {type(exc).__name__}: {exc}")
        self.what = what


class PeerRefused(RequestFailed):
    def __init__(self, what: str, code: str, message: str):
        super().__init__(f"{what} refused: {code}: {message}")
        self.what, self.code, self.message = what, code, message


def connect_dealer(zctx: zmq.Context, endpoint: str) -> zmq.Socket:
    """A DEALER connected to ``endpoint`` that drops unsent frames when closed (LINGER 0)."""
    sock = zctx.socket(zmq.DEALER)
    sock.setsockopt(zmq.LINGER, 0)
    sock.connect(endpoint)
    return sock


class DropWatch:
    """Whether a DEALER's connection to its peer dropped: a socket monitor for
    ``ZMQ_EVENT_DISCONNECTED``. On ``ipc://`` a peer that dies (kill -9 included) has its end
    closed by the kernel at once, so a request sent to it is known lost the moment it died,
    instead of after a per-try timeout. ``monitor`` may be polled beside the socket."""

    def __init__(self, sock: zmq.Socket):
        self.sock = sock
        self.monitor = sock.get_monitor_socket(zmq.EVENT_DISCONNECTED)

    def dropped(self) -> bool:
        """True if the connection dropped since the last call (the events are consumed)."""
        seen = False
        while self.monitor.poll(0):
            self.monitor.recv_multipart()
            seen = True
        return seen

    def close(self) -> None:
        try:
            self.sock.disable_monitor()
        except zmq.ZMQError:
            pass
        self.monitor.close(0)


def ipc_endpoint(directory: str, name: str) -> str:
    path = os.path.join(directory, f"{name}.sock")
    if len(path) > 100:
        raise ValueError(f"ipc path too long for a unix socket ({len(path)} > 100): {path}")
    return f"ipc://{path}"


class Counters:
    """Counts of frames refused by the decoder, by error code (reported in heartbeats)."""

    def __init__(self) -> None:
        self.bad_frames: dict[str, int] = {}

    def bad(self, exc: ProtocolError, where: str) -> None:
        self.bad_frames[exc.code] = self.bad_frames.get(exc.code, 0) + 1
        log.warning("refused a frame on %s: %s", where, exc)


def decode_or_count(data: bytes, counters: Counters, where: str) -> Envelope | None:
    try:
        return protocol.decode(data)
    except ProtocolError as exc:
        counters.bad(exc, where)
        return None


class Client:
    """A request/reply client over DEALER with the Lazy Pirate pattern.

    On a per-try timeout, or as soon as the connection to the peer drops (``DropWatch``: the
    peer died with the request), the socket is closed and reopened (dropping anything queued
    to a dead peer) and the same request is sent again, until the overall deadline; a request
    resent to a peer not yet back waits in the new socket until it binds again. Requests must
    therefore be idempotent; every recorder request is (see ``protocol.to_recorder``).
    An error reply (``Message.ERROR_REPLY``) is raised as ``PeerRefused``. Requests to the
    recorder go through ``actors.runtime.recorder_client.RecorderClient``.
    """

    def __init__(
        self,
        zctx: zmq.Context,
        endpoint: str,
        *,
        session: str,
        sender: str,
        counters: Counters,
        curve: dict | None = None,
    ):
        self.zctx, self.endpoint, self.session, self.sender = zctx, endpoint, session, sender
        self.counters = counters
        self.curve = curve
        self.sock: zmq.Socket | None = None
        self.watch: DropWatch | None = None
        self.poller: zmq.Poller | None = None

    def _open(self) -> zmq.Socket:
        if self.sock is None:
            self.sock = connect_dealer(self.zctx, self.endpoint)
            self.watch = DropWatch(self.sock)
            self.poller = zmq.Poller()
            self.poller.register(self.sock, zmq.POLLIN)
            self.poller.register(self.watch.monitor, zmq.POLLIN)
        return self.sock

    def reset(self) -> None:
        if self.sock is not None:
            self.watch.close()
            self.sock.close(0)
            self.sock = self.watch = self.poller = None

    def close(self) -> None:
        self.reset()

    def request(
        self,
        body: Message,
        *,
        deadline_s: float = 10.0,
        try_s: float = 2.0,
        should_stop=lambda: False,
        max_tries: int | None = None,
        after_send: Callable[[], object] | None = None,
    ) -> Message:
        """Send ``body`` and return the reply; ``max_tries=1`` sends it exactly once.
        ``after_send`` is called once, right after the first send, before the wait for the
        reply (for a message of the caller's own to go out meanwhile, on another socket)."""
        env = protocol.wrap(body, session=self.session, sender=self.sender)
        try:
            data = protocol.encode(env)
        except (ProtocolError, OverflowError, TypeError, ValueError) as exc:
            raise NotEncodable(body.TYPE, exc) from exc
        start = time.monotonic()
        tries = 0
        while True:
            tries += 1
            sock = self._open()
            wait_s = min(try_s, max(0.05, start + deadline_s - time.monotonic()))
            reply = None
            if self._send_within(sock, data, wait_s):
                if after_send is not None:
                    after_send()
                    after_send = None
                reply = self._await_reply(sock, env.id, wait_s)
            if reply is not None:
                if reply.ERROR_REPLY:  # the recorder's or the supervisor's refusal
                    raise PeerRefused(body.TYPE, reply.code, reply.message)
                return reply
            self.reset()
            if time.monotonic() - start >= deadline_s or should_stop() or tries == max_tries:
                raise PeerUnavailable(self.endpoint, body.TYPE, time.monotonic() - start)

    @staticmethod
    def _send_within(sock: zmq.Socket, data: bytes, wait_s: float) -> bool:
        """Queue ``data`` unless the socket has had no peer to queue it to for ``wait_s``.
        A DEALER normally queues at once (its pipe exists from ``connect``, so a request waits
        for a peer that is not bound yet), but a peer whose handshake failed (a CURVE server
        meeting a client without its key) takes that pipe away, and a plain send would then
        block for ever."""
        for wait_ms in (0, int(wait_s * 1000) + 1):  # the usual case queues at once, no poll
            if wait_ms and not sock.poll(wait_ms, zmq.POLLOUT):
                return False
            try:
                sock.send(data, zmq.NOBLOCK)
                return True
            except zmq.Again:
                continue
        return False

    def _await_reply(self, sock: zmq.Socket, msg_id: str, wait_s: float) -> Message | None:
        end = time.monotonic() + wait_s
        while True:
            left = end - time.monotonic()
            if left <= 0:
                return None
            ready = dict(self.poller.poll(int(left * 1000) + 1))
            if not ready:
                return None
            if sock not in ready:  # only the monitor: the peer went away with the request
                if self.watch.dropped():
                    return None
                continue
            env = decode_or_count(sock.recv(), self.counters, self.endpoint)
            if env is not None and getattr(env.body, "reply_to", None) == msg_id:
                return env.body
            # a stale reply to an earlier try, or garbage: keep waiting


def send_envelope(sock: zmq.Socket, body: Message, *, session: str, sender: str, routing: Iterable[bytes] = ()) -> str:
    env = protocol.wrap(body, session=session, sender=sender)
    sock.send_multipart([*routing, protocol.encode(env)])
    return env.id
