"""Following the recorder's journal stream by sequence number.

A consumer asks for rows after its cursor (``follow``); the recorder answers at once when
rows exist, or holds the request until rows are appended or ``wait_ms`` passes. Because the
consumer pulls, a slow consumer never slows the pipeline and never silently misses a row: it
can resume from any sequence, also after the recorder or the consumer restarted.

``pace_s`` spaces a consumer's requests: after a reply the next request waits that long,
so rows appended meanwhile come in one reply. Consumers that do not act on each row at once
(the supervisor's progress and stop conditions, the observer while pipelined steps run)
pace themselves and save the recorder and themselves many small round trips.

``wake`` names the event kinds a consumer acts on at once (None: every kind). Once the
consumer has caught up, its held request is answered only when a row of such a kind is
appended (or ``max_rows`` rows wait, or ``wait_ms`` passes), the rows of other kinds coming
along in the same reply: each row of a step wakes only the actor that acts on it, instead
of every follower. While behind (the first request, a resume, a full reply) it asks without
``wake`` and gets whatever rows there are at once. ``wake`` changes when rows come, never
which: every row still arrives, in order.
"""

from __future__ import annotations

import time

import zmq

import protocol
from protocol.from_recorder import RecorderError, Rows

from .recorder_client import follow_message
from .transport import Client, Counters, DropWatch, RequestFailed, connect_dealer, decode_or_count


class StreamGap(Exception):
    def __init__(self, expected: int, got: int):
        super().__init__(f"journal stream gap: expected sequence {expected}, got {got}")


class Follower:
    """Pull rows in order. Use ``next_rows`` (blocking), or ``socket``/``pump`` with a poller."""

    def __init__(
        self,
        zctx: zmq.Context,
        endpoint: str,
        *,
        session: str,
        sender: str,
        counters: Counters,
        after: int = 0,
        with_states: bool = False,
        wait_ms: int = 500,
        max_rows: int = 256,
        pace_s: float = 0.0,
        wake: tuple[str, ...] | None = None,
    ):
        self.zctx, self.endpoint, self.session, self.sender = zctx, endpoint, session, sender
        self.counters = counters
        self.cursor = after
        self.with_states = with_states
        self.wait_ms, self.max_rows = wait_ms, max_rows
        self.socket: zmq.Socket | None = None
        self.watch: DropWatch | None = None
        self._pending: str | None = None
        self._sent_at = 0.0
        self._seen_reply = False
        self.states: dict[str, dict] = {}
        self.last_known = 0  # the recorder's last sequence at its latest reply
        self.pace_s = pace_s
        self.wake = wake
        self._next_request_at = 0.0
        self._now_client: Client | None = None  # read_now's socket, kept for the next call

    @property
    def caught_up(self) -> bool:
        return self._seen_reply and self.cursor >= self.last_known

    def _ensure_socket(self) -> zmq.Socket:
        if self.socket is None:
            self.socket = connect_dealer(self.zctx, self.endpoint)
            self.watch = DropWatch(self.socket)
        return self.socket

    def ensure_request(self) -> zmq.Socket:
        """Make sure a follow request is outstanding; re-send it if it went unanswered, or at
        once if the connection dropped (the recorder died with it)."""
        sock = self._ensure_socket()
        now = time.monotonic()
        if self._pending is not None and (now - self._sent_at > self.wait_ms / 1000 + 2.0 or self.watch.dropped()):
            self.close()  # the recorder restarted or is gone: drop the stale request
            sock = self._ensure_socket()
        if self._pending is None and now >= self._next_request_at:
            wake = self.wake if self.caught_up else None  # behind: whatever rows there are, now
            env = protocol.wrap(
                follow_message(
                    self.cursor, max_rows=self.max_rows, wait_ms=self.wait_ms, with_states=self.with_states, wake=wake
                ),
                session=self.session,
                sender=self.sender,
            )
            try:  # never blocking: a peer whose handshake failed leaves no pipe to queue to
                sock.send(protocol.encode(env), zmq.NOBLOCK)
            except zmq.Again:
                self.close()  # a new socket, a new connection, at the next call
                self._next_request_at = now + 0.25
                return self._ensure_socket()
            self._pending, self._sent_at = env.id, now
        return sock

    def idle_s(self) -> float:
        """How long a caller polling this socket may wait before calling ``ensure_request`` again."""
        if self._pending is not None:
            return 0.25
        return max(0.0, self._next_request_at - time.monotonic())

    def pump(self) -> list[dict]:
        """Read whatever is waiting on the socket; return new rows in order."""
        out: list[dict] = []
        sock = self.socket
        while sock is not None and sock.poll(0):
            env = decode_or_count(sock.recv(), self.counters, self.endpoint)
            if env is None or getattr(env.body, "reply_to", None) != self._pending:
                continue
            self._pending = None
            self._next_request_at = time.monotonic() + self.pace_s
            if isinstance(env.body, RecorderError):
                raise RuntimeError(f"follow refused: {env.body.code}: {env.body.message}")
            if isinstance(env.body, Rows):
                self._seen_reply = True
                self.last_known = max(self.last_known, env.body.last_sequence)
                if env.body.states:
                    self.states.update(env.body.states)
                for row in env.body.rows:
                    seq = int(row["sequence"])
                    if seq <= self.cursor:
                        continue
                    if seq != self.cursor + 1:
                        raise StreamGap(self.cursor + 1, seq)
                    self.cursor = seq
                    out.append(row)
        return out

    def next_rows(self, timeout_s: float) -> list[dict]:
        """Block up to ``timeout_s`` for new rows."""
        end = time.monotonic() + timeout_s
        while True:
            sock = self.ensure_request()
            now = time.monotonic()
            wait = min(end - now, 0.25)
            if self._pending is None:  # paced: the next request goes out at _next_request_at
                wait = min(wait, self._next_request_at - now)
            if sock.poll(max(1, int(wait * 1000))):
                rows = self.pump()
                if rows:
                    return rows
            if time.monotonic() >= end:
                return []

    def read_now(self, deadline_s: float = 5.0) -> list[dict]:
        """Every row appended since the cursor, read at once with immediate follows
        (``wait_ms`` 0) on a separate socket instead of the long poll (for a caller that was
        away, e.g. an agent thinking); [] when the recorder does not answer. The cursor and
        the states advance as with ``pump``; an outstanding long poll is left as it is. Its
        socket is kept for the next call (a new connection per call cost about half a
        millisecond of an agent's tool call)."""
        if self._now_client is None:
            self._now_client = Client(
                self.zctx, self.endpoint, session=self.session, sender=self.sender, counters=self.counters
            )
        client = self._now_client
        out: list[dict] = []
        try:
            while True:
                reply = client.request(
                    follow_message(self.cursor, max_rows=self.max_rows, wait_ms=0, with_states=self.with_states),
                    deadline_s=deadline_s,
                    try_s=min(2.0, deadline_s),
                )
                if not isinstance(reply, Rows):
                    return out
                self.states.update(reply.states or {})
                self.last_known = max(self.last_known, reply.last_sequence)
                for row in reply.rows:
                    if int(row["sequence"]) == self.cursor + 1:
                        self.cursor += 1
                        out.append(row)
                if not reply.rows or self.cursor >= reply.last_sequence:
                    return out
        except RequestFailed:
            return out  # the recorder is gone: the caller learns why elsewhere

    def take_state(self, observation_id: str) -> dict | None:
        return self.states.pop(observation_id, None)

    def close(self) -> None:
        if self.socket is not None:
            self.watch.close()
            self.socket.close(0)
            self.socket = self.watch = None
        self._pending = None
        if self._now_client is not None:
            self._now_client.close()
            self._now_client = None
