"""The fleet driver's loop, the same for every backend: launch, collect, retry, stop, report.

A backend runs attempts (``runner.run_attempt``) somewhere and reports each one as finished
(its attempt record) or ``Lost`` (the process running it died: a Ray worker or node). The
loop

* keeps at most ``concurrency`` sessions running, never two on the same outside game;
* writes one results row as each session ends;
* handles a lost attempt (its runner died, or locally its supervisor was killed by a signal
  the fleet did not send) by the retry rule: once ``settle_s`` has passed and nothing of the
  session runs any more (its supervisor, stopping on its parent-death SIGTERM, has
  finalized and its actors have exited, so its journal is final; at most ``SETTLE_MAX_S``),
  ``inflight.judge`` reads the journal; proven idle and retries left -> run again, proven
  idle and none left -> ``failed``, otherwise ``needs_review``;
* stops launching once the ``stop`` file exists (``supervisor fleet stop``); the runners see
  the same file and SIGTERM their supervisors; sessions that never started get ``not_run``
  rows;
* on ``interrupt`` (a signal to the driver) stops launching, stops the running sessions at
  once (SIGTERM; each finalizes) and waits for them, and ends with the fleet
  ``interrupted``: no row for a session it stopped or never started, so that
  ``fleet start --resume`` runs them (a session that ended by itself meanwhile keeps its row);
* prints the live fleet line and writes ``fleet.json`` at the start and the end.
"""

from __future__ import annotations

import collections
import dataclasses
import json
import os
import signal
import socket
import sys
import time
from typing import Any, Protocol

from . import control, inflight, layout
from .matrix import SessionPlan
from .report import live_line, running_steps
from .results import append_row, outcome_of, session_row, totals, write_fleet
from .runner import KILL_AFTER_S, session_ids

LIVE_EVERY_S = {"line": 0.5, "plain": 5.0}
POLL_S = 0.1  # the loop's turn: how soon a signal to the driver reaches its sessions
#: A lost attempt is judged at most this long after ``settle_s`` even if a process of its
#: session still seems to run (a dead Ray node's runtime record stays for ever).
SETTLE_MAX_S = 60.0


@dataclasses.dataclass
class Lost:
    """The process running an attempt died; ``error`` is what the backend said."""

    error: str


class Backend(Protocol):
    name: str

    def submit(self, plan: SessionPlan, attempt: int) -> Any: ...
    def poll(self, timeout_s: float) -> list[tuple[Any, dict | Lost]]: ...
    def settle_s(self, plan: SessionPlan) -> float: ...
    def node_retries(self) -> int: ...
    def interrupt(self) -> None: ...
    def close(self) -> None: ...


class FleetRun:
    def __init__(
        self,
        info: dict,
        plans: list[SessionPlan],
        root: str,
        backend: Backend,
        concurrency: int,
        progress: str = "auto",
        stream=None,
    ):
        self.info, self.plans, self.root, self.backend = info, plans, root, backend
        self.concurrency = concurrency
        self.stream = stream or sys.stderr
        tty = hasattr(self.stream, "isatty") and self.stream.isatty()
        self.progress = ("line" if tty else "plain") if progress == "auto" else progress
        self.pending = collections.deque((p, 1) for p in plans)
        self.running: dict[Any, tuple[SessionPlan, int]] = {}
        self.settling: list[tuple[float, SessionPlan, int, str]] = []
        self.attempts: dict[int, list[dict]] = collections.defaultdict(list)
        self.notes: dict[int, list[str]] = collections.defaultdict(list)
        self.rows: list[dict] = []
        self.started = time.monotonic()
        self._next_live = 0.0
        self._orphans: dict[int, list] = {}  # a lost attempt's actors still alive, read once
        self._prior_steps = 0
        self.interrupted: int | None = None  # the signal that interrupted the driver
        self.cut: list[SessionPlan] = []  # sessions the interrupt stopped: run again on resume

    def interrupt(self, signum: int) -> None:
        """A signal to the driver (from its handler): wind down at the next turn of the loop."""
        self.interrupted = self.interrupted or signum

    def resume_from(self, decisions: list, rows: list[dict]) -> None:
        """A resumed fleet (``resume.decide``): only the sessions to run (again) are pending,
        with their earlier attempts and notes; the rows already written count in the totals."""
        self.pending = collections.deque((d.plan, d.next_attempt) for d in decisions if d.what in ("run", "rerun"))
        for d in decisions:
            self.attempts[d.plan.index] = list(d.attempts)
            if d.what == "rerun":
                self.notes[d.plan.index].append(d.detail)
        self.rows = list(rows)
        self._prior_steps = sum(r.get("steps") or 0 for r in rows)  # not this driver's: not in its rate

    def run(self) -> int:
        self.info.update(state="running", started_at=time.time())
        write_fleet(self.root, self.info)
        try:
            while (self.pending or self.running or self.settling) and not self.interrupted:
                if not self.stopping():
                    self._launch()
                if not self.running:  # only lost attempts settling: nothing to wait on
                    time.sleep(0.25)
                for handle, result in self.backend.poll(POLL_S):
                    plan, attempt = self.running.pop(handle)
                    self._finished(plan, attempt, result)
                self._settle()
                if self.stopping():
                    self._cancel_pending()
                self._live()
            if self.interrupted:
                self._wind_down()
        finally:
            self.backend.close()
        self._live(force=True)
        return self._close()

    def _wind_down(self) -> None:
        """Stop every running session at once and wait for each to finalize. What the interrupt
        stopped gets no row (the resume judges it from its journal); a session that ended
        before the signal reached it gets its row as usual."""
        self.stream.write(
            f"\nfleet {self.info['name']}: interrupted by {signal.Signals(self.interrupted).name}; "
            f"stopping {len(self.running)} running session(s)\n"
        )
        self.backend.interrupt()
        self.cut = [p for p, _ in self.settling]
        self.settling.clear()
        end = time.monotonic() + KILL_AFTER_S + 10
        while self.running and time.monotonic() < end:
            for handle, result in self.backend.poll(0.25):
                plan, attempt = self.running.pop(handle)
                if isinstance(result, Lost) or result.get("interrupted"):
                    self.cut.append(plan)
                else:
                    self._finished(plan, attempt, result)
        self.cut += [p for p, _ in self.running.values()]
        slots = {p.slot for p in self.cut}
        while slots and control.live_supervisors(self.root, slots) and time.monotonic() < end:
            time.sleep(0.1)  # a Ray task is gone at once; its supervisor finalizes a moment later

    def stopping(self) -> bool:
        return os.path.exists(layout.stop_path(self.root))

    # -- launching -------------------------------------------------------------------------
    def _launch(self) -> None:
        busy = {p.game for p, _ in self.running.values() if p.game}
        busy |= {p.game for _, p, _, _ in self.settling if p.game}
        for item in list(self.pending):
            if len(self.running) >= self.concurrency:
                return
            plan, attempt = item
            if plan.game and plan.game in busy:
                continue
            self.pending.remove(item)
            self.running[self.backend.submit(plan, attempt)] = (plan, attempt)
            if plan.game:
                busy.add(plan.game)

    def _cancel_pending(self) -> None:
        while self.pending:
            plan, attempt = self.pending.popleft()
            self._row(plan, "not_run", "the fleet was stopped before this session started")

    # -- results ---------------------------------------------------------------------------
    def _finished(self, plan: SessionPlan, attempt: int, result: dict | Lost) -> None:
        result = killed(result) or result
        if isinstance(result, Lost):
            due = time.monotonic() + self.backend.settle_s(plan)
            self.settling.append((due, plan, attempt, result.error))
            return
        self.attempts[plan.index].append(result)
        self._row(plan, outcome_of(result))

    def _settle(self) -> None:
        now = time.monotonic()
        for item in [s for s in self.settling if s[0] <= now]:
            due, plan, attempt, error = item
            if now < due + SETTLE_MAX_S and self._still_running(plan, attempt):
                continue
            self.settling.remove(item)
            self._orphans.pop(plan.index, None)
            self._judge_lost(plan, attempt, error)

    def _still_running(self, plan: SessionPlan, attempt: int) -> bool:
        """Does anything of the lost attempt still run, and so may still write its journal: its
        supervisor (finalizing on its parent-death signal), or an actor of its session here;
        on another host, its supervisor's runtime record still there."""
        slot = os.path.join(self.root, plan.slot)
        if control.live_supervisors(self.root, {plan.slot}):
            return True
        if _read_attempt(slot, attempt).get("host") not in (None, socket.gethostname()):
            return control.has_runtime_record(slot)
        if plan.index not in self._orphans:  # its journal names them; read it once
            earlier = {s for a in self.attempts[plan.index] for s in a.get("session_ids", [])}
            self._orphans[plan.index] = control.live_actors(slot, [s for s in session_ids(slot) if s not in earlier])
        self._orphans[plan.index] = [a for a in self._orphans[plan.index] if control.actor_alive(a)]
        return bool(self._orphans[plan.index])

    def _judge_lost(self, plan: SessionPlan, attempt: int, error: str) -> None:
        slot = os.path.join(self.root, plan.slot)
        earlier = {s for a in self.attempts[plan.index] for s in a.get("session_ids", [])}
        ids = [s for s in session_ids(slot) if s not in earlier]
        verdict = inflight.judge(layout.capture_dir(slot), ids)
        rec = _read_attempt(slot, attempt)
        rec.update(lost=error, ended_at=time.time(), session_ids=ids, exit_code=None, judged=verdict.detail)
        with open(layout.attempt_path(slot, attempt), "w", encoding="utf-8") as fh:
            json.dump(rec, fh, indent=1, sort_keys=True)
        self.attempts[plan.index].append(rec)
        note = f"attempt {attempt} lost ({error.splitlines()[0][:200]}); journal: {verdict.detail}"
        self.notes[plan.index].append(note)
        if not verdict.idle:
            self._row(plan, "needs_review")
        elif self.stopping():
            self._row(plan, "stopped", "not run again: the fleet was stopped")
        elif sum(bool(a.get("lost")) for a in self.attempts[plan.index]) <= self.backend.node_retries():
            self.pending.appendleft((plan, attempt + 1))  # attempts a driver's death cut do not count
        else:
            self._row(
                plan,
                "failed",
                f"no retries left ({self.backend.node_retries()} after a loss"
                + (", ray.node_retries)" if self.backend.name == "ray" else ")"),
            )

    def _row(self, plan: SessionPlan, outcome: str, detail: str = "") -> None:
        parts = [*self.notes.get(plan.index, []), detail]
        row = session_row(
            self.info["name"], self.root, plan, self.attempts[plan.index], outcome, "; ".join(p for p in parts if p)
        )
        self.rows.append(row)
        append_row(self.root, row)

    # -- display and the end ---------------------------------------------------------------
    def _live(self, force: bool = False) -> None:
        every = LIVE_EVERY_S.get(self.progress)
        now = time.monotonic()
        if every is None or (not force and now < self._next_live):
            return
        self._next_live = now + every
        steps = sum(r.get("steps") or 0 for r in self.rows) - self._prior_steps
        steps += sum(running_steps(self.root, p.slot) for p, _ in self.running.values())
        failed = sum(r["outcome"] in ("failed", "timed_out", "needs_review") for r in self.rows)
        started = sum(
            os.path.exists(layout.attempt_path(os.path.join(self.root, p.slot), n)) for p, n in self.running.values()
        )  # a submitted Ray task may still queue
        text = live_line(
            self.info["name"],
            started,
            len(self.running) - started,
            len(self.rows),
            failed,
            len(self.plans),
            steps,
            self.started,
        )
        self.stream.write(("\r\x1b[K" + text) if self.progress == "line" else text + "\n")
        self.stream.flush()

    def _close(self) -> int:
        if self.progress == "line":
            self.stream.write("\n")
        elapsed = time.monotonic() - self.started
        t = totals(self.rows, elapsed)
        state = "interrupted" if self.interrupted else "stopped" if self.stopping() else "finished"
        self.info.update(state=state, ended_at=time.time(), totals=t)
        if self.interrupted:
            self.info["interrupted_by"] = signal.Signals(self.interrupted).name
        write_fleet(self.root, self.info)
        if self.interrupted:
            return 128 + self.interrupted
        bad = t["failed"] + t["timed_out"] + t["needs_review"]
        return 1 if bad else 0


def killed(result: dict | Lost) -> Lost | None:
    """An attempt whose supervisor died by a signal the fleet did not send (the OOM killer, a
    ``kill -9``) is lost, as if its runner had died: judged by its journal, not failed."""
    code = result.get("exit_code") if isinstance(result, dict) else None
    if (
        not isinstance(code, int)
        or code >= 0
        or any(result.get(k) for k in ("stop_requested", "timed_out", "interrupted"))
    ):
        return None
    try:
        name = signal.Signals(-code).name
    except ValueError:
        name = f"signal {-code}"
    return Lost(f"its supervisor (pid {result.get('supervisor_pid')}) was killed by {name}")


def _read_attempt(slot: str, attempt: int) -> dict:
    try:
        with open(layout.attempt_path(slot, attempt), encoding="utf-8") as fh:
            return json.load(fh)
    except (OSError, ValueError):
        return {"slot": os.path.basename(slot), "attempt": attempt, "supervisor_pid": None, "started_at": None}
