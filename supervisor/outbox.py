"""Journal events the supervisor owes the recorder (actor lifecycle, session stopping).

The supervisor's loop must never block on the recorder, which may itself be the actor that
just died. Events wait here, are sent one at a time with an idempotency key, and are sent
again on a fresh socket when no reply arrives, so a restarted recorder gets them exactly once.
"""
from __future__ import annotations

import collections
import time

import zmq

import protocol
from actors.runtime.transport import Counters, connect_dealer, decode_or_count
from protocol.to_recorder import RecordEvent


class Outbox:
    RESEND_S = 2.0

    def __init__(self, zctx: zmq.Context, endpoint: str, session: str, counters: Counters):
        self.zctx, self.endpoint, self.session, self.counters = zctx, endpoint, session, counters
        self.queue: collections.deque[RecordEvent] = collections.deque()
        self.socket: zmq.Socket | None = None
        self._inflight: str | None = None
        self._sent_at = 0.0
        self._n = 0

    def put(self, event: str, fields: dict) -> None:
        self._n += 1
        self.queue.append(RecordEvent(event=event, fields=fields, key=f"supervisor:{self._n}"))

    def _open(self) -> zmq.Socket:
        if self.socket is None:
            self.socket = connect_dealer(self.zctx, self.endpoint)
        return self.socket

    def pump(self) -> None:
        """Read a reply if one is waiting, and send the next event if none is in flight."""
        sock = self.socket
        while sock is not None and sock.poll(0):
            env = decode_or_count(sock.recv(), self.counters, "recorder")
            if env is not None and getattr(env.body, "reply_to", None) == self._inflight:
                self.queue.popleft()  # recorded, or refused for good (never block on it)
                self._inflight = None
        now = time.monotonic()
        if self._inflight and now - self._sent_at > self.RESEND_S:
            self.socket.close(0)
            self.socket = None
            self._inflight = None
        if self.queue and self._inflight is None:
            env = protocol.wrap(self.queue[0], session=self.session, sender="supervisor")
            self._open().send(protocol.encode(env))
            self._inflight, self._sent_at = env.id, now

    def empty(self) -> bool:
        return not self.queue

    def close(self) -> None:
        if self.socket is not None:
            self.socket.close(0)
            self.socket = None
