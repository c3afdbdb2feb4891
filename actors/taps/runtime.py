"""The tap runtime: attach, take a snapshot, follow the journal from it, keep alive, detach.

Write a tap by subclassing ``AttachedTap`` and overriding the hooks you need; run it with
``supervisor attach --module your.module`` (the module defines ``Tap``) or ``run_tap``.

Hooks (all run on the thread that called ``run_tap``, one at a time, in this order):

* ``on_attach(info)`` — attached: ``info`` has ``tap_id``, ``session_id`` and
  ``reattached`` (0 at first; called again, with a new ``tap_id``, after attaching again).
* ``on_snapshot(last_sequence, summary)`` — the session's counters as of ``last_sequence``
  (``summary``: steps, events, dispositions, action_results, actor_restarts, model_usage, ...).
  Rows follow from ``last_sequence + 1``: no gap, no duplicate.
* ``on_row(row)`` — one journal row, strictly in sequence order.
* ``on_drop(n)`` — the tap fell more than ``max_lag`` rows behind; ``n`` rows were skipped, and
  ``on_snapshot`` follows at once with fresh counters. Never called when ``max_lag`` is None.
* ``on_status(status)`` — the supervisor's status (per-actor pid, RSS, CPU, starts), fetched
  at every keep-alive (``keepalive_s`` from the attach reply, 2 s by default).
* ``on_tick()`` — after every batch of rows, or every ``tick_s`` when idle (redraw here).
* ``on_detach(reason)`` — last: ``detached`` (asked to stop), ``session_ended`` (the
  ``session_end`` row was seen), ``session_gone`` (the supervisor stopped answering) or
  ``error`` (a hook raised; the exception then propagates).

Failure behaviour. The tap pulls (``follow`` long-polls), so the recorder never queues for a
tap and a tap that stalls or dies never slows the pipeline. If the recorder restarts, the
follower re-sends its request and resumes from its cursor (no gap, no duplicate). If the
supervisor declared the tap lost (silent for four keep-alives, e.g. the process was
stopped), its token is forgotten and the next keep-alive is refused: the runtime attaches
again with the session token and keeps its cursor.

Drops (``max_lag``). The journal is durable, so a lossless tap (``max_lag = None``, the
default) can be any distance behind and still read every row. A tap that prefers fresh
numbers to completeness (the metrics tap) sets ``max_lag``: when the recorder's last sequence
is more than ``max_lag`` rows past the tap's cursor, the runtime skips to a fresh snapshot,
adds the skipped rows to ``dropped`` and reports them with ``on_drop``.
"""

from __future__ import annotations

import os
import threading
import time

from actors.runtime.follow import Follower
from actors.runtime.recorder_client import RecorderClient
from actors.runtime.transport import Client, Counters, PeerRefused, PeerUnavailable, RequestFailed
from protocol.cli_to_supervisor import AttachRequest, DetachRequest, StatusRequest
from protocol.events import SessionEnd

from .connect import Access

GONE_AFTER = 3  # consecutive unanswered keep-alives


class AttachedTap:
    """Base class of attachable actors; every hook is optional (see the module docstring)."""

    name = "tap"
    max_lag: int | None = None

    def on_attach(self, info: dict) -> None: ...
    def on_snapshot(self, last_sequence: int, summary: dict) -> None: ...
    def on_row(self, row: dict) -> None: ...
    def on_drop(self, n: int) -> None: ...
    def on_status(self, status: dict) -> None: ...
    def on_tick(self) -> None: ...
    def on_detach(self, reason: str) -> None: ...


class TapRunner:
    """One attached tap's connection state; ``run()`` returns the detach reason."""

    def __init__(self, tap: AttachedTap, access: Access, stop: threading.Event | None = None, tick_s: float = 0.25):
        self.tap, self.access = tap, access
        self.stop = stop or threading.Event()
        self.tick_s = tick_s
        self.zctx = access.context()
        self.counters = Counters()
        self.control = Client(
            self.zctx, access.control, session=access.session_id, sender=f"tap:{tap.name}", counters=self.counters
        )
        self.tap_id = self.tap_token = self.stream = ""
        self.keepalive_s = 2.0
        self.dropped = self.reattached = 0
        self.follower: Follower | None = None

    # -- requests ---------------------------------------------------------------------------
    def attach(self) -> None:
        reply = self.control.request(
            AttachRequest(
                token=self.access.token, name=self.tap.name, pid=os.getpid(), transport=self.access.transport
            ),
            deadline_s=5,
            try_s=2,
        )
        self.tap_id, self.tap_token = reply.tap_id, reply.tap_token
        self.stream, self.keepalive_s = reply.stream, reply.keepalive_s

    def snapshot(self):
        client = RecorderClient(
            self.zctx, self.stream, session=self.access.session_id, sender=self.tap_id, counters=self.counters
        )
        try:
            return client.snapshot()
        finally:
            client.close()

    def keepalive(self) -> bool:
        """Fetch status with the tap token; attach again if the supervisor forgot this tap."""
        try:
            reply = self.control.request(StatusRequest(token=self.tap_token), deadline_s=1.5, try_s=1.5)
        except PeerRefused as exc:
            if exc.code not in ("unknown_tap", "unauthorized"):  # forgotten: a lost tap's token
                raise
            self.attach()
            self.reattached += 1
            self.tap.on_attach(self._info())
            return True
        self.tap.on_status(reply.status)
        return True

    def _info(self) -> dict:
        return {"tap_id": self.tap_id, "session_id": self.access.session_id, "reattached": self.reattached}

    def detach(self, reason: str) -> None:
        try:
            self.control.request(DetachRequest(token=self.tap_token, reason=reason), deadline_s=2, try_s=2)
        except RequestFailed:
            pass  # the supervisor is gone or already forgot us: nothing to undo

    # -- the loop ---------------------------------------------------------------------------
    def _resync(self) -> None:
        snap = self.snapshot()
        f = self.follower
        skipped = max(0, snap.last_sequence - f.cursor)
        f.close()  # drop the in-flight request for the old cursor
        f.cursor = max(f.cursor, snap.last_sequence)
        self.dropped += skipped
        self.tap.on_drop(skipped)
        self.tap.on_snapshot(snap.last_sequence, snap.summary)

    def _follow(self) -> str:
        silent = 0
        next_keepalive = 0.0
        while not self.stop.is_set():
            before = self.follower.cursor
            rows = self.follower.next_rows(self.tick_s)
            if rows and self.tap.max_lag is not None and self.follower.last_known - before > self.tap.max_lag:
                self.follower.cursor, rows = before, []  # too far behind: skip to a snapshot
                self._resync()
            for row in rows:
                self.tap.on_row(row)
                if row.get("event") == SessionEnd.KIND:
                    return "session_ended"
            if time.monotonic() >= next_keepalive:
                try:
                    self.keepalive()
                    silent = 0
                except PeerUnavailable:
                    silent += 1
                    if silent >= GONE_AFTER:
                        return "session_gone"
                next_keepalive = time.monotonic() + self.keepalive_s
            self.tap.on_tick()
        return "detached"

    def run(self) -> str:
        reason = "error"
        try:
            self.attach()
        except BaseException:
            self.close()
            raise
        try:
            self.tap.on_attach(self._info())
            snap = self.snapshot()
            self.tap.on_snapshot(snap.last_sequence, snap.summary)
            self.follower = Follower(
                self.zctx,
                self.stream,
                session=self.access.session_id,
                sender=self.tap_id,
                counters=self.counters,
                after=snap.last_sequence,
                wait_ms=int(self.tick_s * 1000),
            )
            reason = self._follow()
            return reason
        finally:
            if reason not in ("session_gone", "session_ended"):
                self.detach(reason)
            try:
                self.tap.on_detach(reason)
            finally:
                self.close()

    def close(self) -> None:
        if self.follower is not None:
            self.follower.close()
        self.control.close()
        self.zctx.term()


def run_tap(tap: AttachedTap, access: Access, stop: threading.Event | None = None) -> str:
    """Attach ``tap`` to the session ``access`` names and run it until it detaches."""
    return TapRunner(tap, access, stop).run()
