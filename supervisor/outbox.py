"""Journal events the supervisor owes the recorder (actor lifecycle, session stopping).

The supervisor's loop must never block on the recorder, which may itself be the actor that
just died. Events (``protocol.events`` kinds) wait here, are sent one at a time with an
idempotency key through ``RecorderClient.send_nowait``, and are sent again on a fresh
socket when no reply arrives, so a restarted recorder gets them exactly once.
"""

from __future__ import annotations

import collections

import zmq

from actors.runtime.recorder_client import Pending, RecorderClient
from protocol.events import Event
from protocol.to_recorder import RecordEvent


class Outbox:
    RESEND_S = 2.0

    def __init__(self, recorder: RecorderClient):
        self.recorder = recorder
        self.queue: collections.deque[RecordEvent] = collections.deque()
        self.pending: Pending | None = None  # the event at the head of the queue, sent
        self.sent = 0  # events queued so far: the idempotency keys are supervisor:1, :2, ...

    def put(self, event: Event) -> None:
        self.sent += 1
        self.queue.append(RecordEvent.of(event, key=f"supervisor:{self.sent}"))

    @property
    def socket(self) -> zmq.Socket | None:
        """The socket a reply will come on (register it with the loop's poller), if any."""
        return self.pending.socket if self.pending is not None else None

    def pump(self) -> None:
        """Take a reply if one is waiting, and send the next event if none is in flight."""
        p = self.pending
        if p is not None and p.reply() is not None:
            self.queue.popleft()  # recorded, or refused for good (never block on it)
            self._drop()
        elif p is not None and p.age_s() > self.RESEND_S:
            self._drop()  # sent again below, on a fresh socket
        if self.queue and self.pending is None:
            self.pending = self.recorder.send_nowait(self.queue[0])

    def _drop(self) -> None:
        if self.pending is not None:
            self.pending.close()
            self.pending = None

    def empty(self) -> bool:
        return not self.queue

    def close(self) -> None:
        self._drop()
