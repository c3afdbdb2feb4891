"""``JournalActor``: the one loop of everything that follows the journal.

    class Mine(JournalActor):
        PACE_S = 0.004                        # see "Pacing" below
        def on_row(self, row): ...            # each row, after ``self.track`` (StepTracker) saw it
        def on_caught_up(self): ...           # after a read, when every recorded row is in
        def on_stop(self): ...                # the loop ended because the actor is stopping
        def close(self): ...; super().close() # always, last (release clients; closes the follower)

    Mine(follower, max_steps=..., stopping=ctx.stopping).run()

One turn of ``run`` (``step``): read rows (blocking up to ``wait_s()``, or — when
``wake_sockets()`` names other sockets — until the journal or one of them has input), feed each
to the tracker and ``on_row``, call ``on_wake()``, and ``on_caught_up()`` if the follower has
caught up. The loop runs until ``stopping`` is set, then ``on_stop()``; ``close()`` runs in
every case. The supervisor, which has its own poll loop, does not ``run``: it registers
``socket()`` with its poller and calls ``pump()``, which never blocks longer than asked.

Pacing (one rule, in ``pace_s``): after each reply the next follow request waits ``PACE_S``
(declared per actor) whenever no single row can call for action at once (``awaits_rows()``
is False); otherwise 0. By default a row is awaited unless pipelined steps are in flight:
then results and decisions come a pipeline at a time, so taking rows in batches saves the
recorder and the actor many round trips without delaying anything. One-at-a-time steps are
never delayed. A consumer that only counts (the supervisor's watch) never awaits a row.

Waking (``wake_kinds``): the rows the actor acts on at once, declared as ``WAKE`` (None:
every row; so too while the follow is paced). The follow request carries them: the recorder
answers it when such a row is appended, and the other rows come along in the same reply, so
a row wakes only the actors that act on it (``actors.runtime.follow``; an entry is a kind,
``kind.field`` or ``kind.field=value``). ``session_stopping`` is always among them. Rows
still arrive all and in order; a kind left out only comes later (at the next waking row, or
after the follow's ``wait_ms``).

``session.max_steps`` lives in the tracker (``StepTracker.max_steps``): the observer, the
policy and the supervisor ask it (``max_steps_reached``, ``ended_by_max_steps``).

``follower`` is an ``actors.runtime.follow.Follower`` or, in tests, an
``actors.runtime.memory.MemoryFollower``. ``stop_event`` is the event the loop watches
(``ctx.stopping`` in an actor process).

Adding a journal-driven actor: subclass this in ``actors/<name>/__main__.py``, write to the
recorder only through ``ctx.recorder()`` (``actors.runtime.recorder_client``), and end with
``run_actor(name, lambda ctx: Mine(Follower(...), ...).run())``; name it in a profile's
``actors`` with its ``module``. Its unit tests feed rows through a ``MemoryFollower`` (see
tests/runtime/, tests/actuator/).
"""

from __future__ import annotations

import threading
from typing import ClassVar

import zmq

from protocol import events as ev

from .steps import StepTracker


class JournalActor:
    PACE_S: ClassVar[float] = 0.0  # the follow pace while no row is awaited (see the docstring)
    WAIT_S: ClassVar[float] = 0.2  # how long a read blocks for rows by default
    WAKE: ClassVar[tuple[str, ...] | None] = None  # the kinds acted on at once (see the docstring)

    def __init__(self, follower=None, *, max_steps: int | None = None, stopping: threading.Event | None = None):
        self.follower = follower
        self.track = StepTracker(max_steps)
        self.stop_event = stopping if stopping is not None else threading.Event()

    # -- hooks (override what you need) ---------------------------------------------------
    def on_row(self, row: dict) -> None:
        """One journal row, in order, after ``self.track`` saw it."""

    def on_wake(self) -> None:
        """After every read, rows or not (before ``on_caught_up``)."""

    def on_caught_up(self) -> None:
        """The follower holds every row the recorder had at its latest reply."""

    def on_stop(self) -> None:
        """The loop ended because the actor is stopping (not called when it raised)."""

    def close(self) -> None:
        """Release what the actor holds; always called last. Closes the follower."""
        if self.follower is not None:
            self.follower.close()

    def wait_s(self) -> float:
        """How long the next read may wait for rows."""
        return self.WAIT_S

    def wake_sockets(self) -> list[zmq.Socket] | None:
        """Other sockets whose input ends the wait for rows (None: wait on the journal alone)."""
        return None

    def awaits_rows(self) -> bool:
        """Whether a row may call for action at once (then the follow is not paced)."""
        return not self.track.in_flight

    def wake_kinds(self) -> tuple[str, ...] | None:
        """The event kinds whose rows answer the follow at once (None: every kind, as while
        pipelined steps are in flight: then the follow is paced instead)."""
        if self.WAKE is None or not self.awaits_rows():
            return None
        return (*self.WAKE, ev.SessionStopping.KIND)

    # -- the loop -------------------------------------------------------------------------
    def pace_s(self) -> float:
        return 0.0 if self.awaits_rows() else self.PACE_S

    def _prepare(self) -> None:
        """Set the next follow request's pace and waking kinds."""
        self.follower.pace_s = self.pace_s()
        self.follower.wake = self.wake_kinds()

    @property
    def caught_up(self) -> bool:
        return self.follower.caught_up

    def feed(self, row: dict) -> None:
        self.track.feed(row)
        self.on_row(row)

    def follow(self, timeout_s: float) -> int:
        """Wait up to ``timeout_s`` for rows and feed them; how many came."""
        self._prepare()
        rows = self.follower.next_rows(timeout_s)
        for row in rows:
            self.feed(row)
        return len(rows)

    def step(self) -> None:
        """One turn of the loop (see the module docstring); ``follow`` and ``pump`` set the
        pace and the waking kinds."""
        timeout = self.wait_s()
        others = self.wake_sockets()
        if others is None:
            self.follow(timeout)
        else:
            self.pump(timeout, others)
        self.on_wake()
        if self.follower.caught_up:
            self.on_caught_up()

    def run(self) -> int:
        try:
            while not self.stop_event.is_set():
                self.step()
            self.on_stop()
        finally:
            self.close()
        return 0

    # -- for a caller with its own poll loop ----------------------------------------------
    def socket(self) -> zmq.Socket | None:
        """The follow socket to poll (a request is made outstanding first, paced)."""
        self._prepare()
        return self.follower.ensure_request()

    def pump(self, timeout_s: float = 0.0, others: list[zmq.Socket] = ()) -> int:
        """Feed the rows that are waiting, after waiting at most ``timeout_s`` for the journal
        or ``others`` to have input; how many rows came."""
        sock = self.socket()
        if timeout_s > 0:
            poller = zmq.Poller()
            for s in ([sock] if sock is not None else []) + [s for s in others if s is not None]:
                poller.register(s, zmq.POLLIN)
            wait = min(timeout_s, self.follower.idle_s())
            if poller.sockets:
                poller.poll(max(1, int(wait * 1000)))
        rows = self.follower.pump()
        for row in rows:
            self.feed(row)
        return len(rows)
