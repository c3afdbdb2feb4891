"""The fleet driver's loop, the same for every backend: launch, collect, retry, stop, report.

A backend runs attempts (``runner.run_attempt``) somewhere and reports each one as finished
(its attempt record) or ``Lost`` (the process running it died: a Ray worker or node). The
loop

* keeps at most ``concurrency`` sessions running, never two on the same outside game;
* writes one results row as each session ends;
* handles a lost attempt by the retry rule: once ``settle_s`` has passed (the lost
  session's actors have exited by then, so its journal is final), ``inflight.judge`` reads
  the journal; proven idle and retries left -> run again, proven idle and none left ->
  ``failed``, otherwise ``needs_review``;
* stops launching once the ``stop`` file exists (``supervisor fleet stop``, or a signal to
  the fleet); the runners see the same file and SIGTERM their supervisors; sessions that
  never started get ``not_run`` rows;
* prints the live fleet line and writes ``fleet.json`` at the start and the end.
"""
from __future__ import annotations

import collections
import dataclasses
import json
import os
import sys
import time
from typing import Any, Protocol

from . import inflight, layout
from .matrix import SessionPlan
from .report import live_line, running_steps
from .results import append_row, outcome_of, session_row, totals, write_fleet
from .runner import session_ids

LIVE_EVERY_S = {"line": 0.5, "plain": 5.0}


@dataclasses.dataclass
class Lost:
    """The process running an attempt died; ``error`` is what the backend said."""
    error: str


class Backend(Protocol):
    name: str

    def submit(self, plan: SessionPlan, attempt: int) -> Any: ...
    def poll(self, timeout_s: float) -> list[tuple[Any, "dict | Lost"]]: ...
    def settle_s(self, plan: SessionPlan) -> float: ...
    def node_retries(self) -> int: ...
    def close(self) -> None: ...


class FleetRun:
    def __init__(self, info: dict, plans: list[SessionPlan], root: str, backend: Backend,
                 concurrency: int, progress: str = "auto", stream=None):
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

    def resume_from(self, decisions: list, rows: list[dict]) -> None:
        """A resumed fleet (``resume.decide``): only the sessions to run (again) are pending,
        with their earlier attempts and notes; the rows already written count in the totals."""
        self.pending = collections.deque((d.plan, d.next_attempt) for d in decisions
                                         if d.what in ("run", "rerun"))
        for d in decisions:
            self.attempts[d.plan.index] = list(d.attempts)
            if d.what == "rerun":
                self.notes[d.plan.index].append(d.detail)
        self.rows = list(rows)

    def run(self) -> int:
        self.info.update(state="running", started_at=time.time())
        write_fleet(self.root, self.info)
        try:
            while self.pending or self.running or self.settling:
                if not self.stopping():
                    self._launch()
                if not self.running:  # only lost attempts settling: nothing to wait on
                    time.sleep(0.25)
                for handle, result in self.backend.poll(0.25):
                    plan, attempt = self.running.pop(handle)
                    self._finished(plan, attempt, result)
                self._settle()
                if self.stopping():
                    self._cancel_pending()
                self._live()
        finally:
            self.backend.close()
        self._live(force=True)
        return self._close()

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
    def _finished(self, plan: SessionPlan, attempt: int, result: "dict | Lost") -> None:
        if isinstance(result, Lost):
            due = time.monotonic() + self.backend.settle_s(plan)
            self.settling.append((due, plan, attempt, result.error))
            return
        self.attempts[plan.index].append(result)
        self._row(plan, outcome_of(result))

    def _settle(self) -> None:
        now = time.monotonic()
        for item in [s for s in self.settling if s[0] <= now]:
            self.settling.remove(item)
            _, plan, attempt, error = item
            self._judge_lost(plan, attempt, error)

    def _judge_lost(self, plan: SessionPlan, attempt: int, error: str) -> None:
        slot = os.path.join(self.root, plan.slot)
        earlier = {s for a in self.attempts[plan.index] for s in a.get("session_ids", [])}
        ids = [s for s in session_ids(slot) if s not in earlier]
        verdict = inflight.judge(layout.capture_dir(slot), ids)
        rec = _read_attempt(slot, attempt)
        rec.update(lost=error, ended_at=time.time(), session_ids=ids, exit_code=None,
                   judged=verdict.detail)
        with open(layout.attempt_path(slot, attempt), "w", encoding="utf-8") as fh:
            json.dump(rec, fh, indent=1, sort_keys=True)
        self.attempts[plan.index].append(rec)
        note = f"attempt {attempt} lost ({error.splitlines()[0][:200]}); journal: {verdict.detail}"
        self.notes[plan.index].append(note)
        if not verdict.idle:
            self._row(plan, "needs_review")
        elif self.stopping():
            self._row(plan, "stopped", "not run again: the fleet was stopped")
        elif attempt <= self.backend.node_retries():
            self.pending.appendleft((plan, attempt + 1))
        else:
            self._row(plan, "failed", "no retries left (ray.node_retries)")

    def _row(self, plan: SessionPlan, outcome: str, detail: str = "") -> None:
        parts = [*self.notes.get(plan.index, []), detail]
        row = session_row(self.info["name"], self.root, plan, self.attempts[plan.index], outcome,
                          "; ".join(p for p in parts if p))
        self.rows.append(row)
        append_row(self.root, row)

    # -- display and the end ---------------------------------------------------------------
    def _live(self, force: bool = False) -> None:
        every = LIVE_EVERY_S.get(self.progress)
        now = time.monotonic()
        if every is None or (not force and now < self._next_live):
            return
        self._next_live = now + every
        steps = sum(r.get("steps") or 0 for r in self.rows)
        steps += sum(running_steps(self.root, p.slot) for p, _ in self.running.values())
        failed = sum(r["outcome"] in ("failed", "timed_out", "needs_review") for r in self.rows)
        started = sum(os.path.exists(layout.attempt_path(os.path.join(self.root, p.slot), n))
                      for p, n in self.running.values())  # a submitted Ray task may still queue
        text = live_line(self.info["name"], started, len(self.running) - started, len(self.rows),
                         failed, len(self.plans), steps, self.started)
        self.stream.write(("\r\x1b[K" + text) if self.progress == "line" else text + "\n")
        self.stream.flush()

    def _close(self) -> int:
        if self.progress == "line":
            self.stream.write("\n")
        elapsed = time.monotonic() - self.started
        t = totals(self.rows, elapsed)
        self.info.update(state="stopped" if self.stopping() else "finished", ended_at=time.time(),
                         totals=t)
        write_fleet(self.root, self.info)
        bad = t["failed"] + t["timed_out"] + t["needs_review"]
        return 1 if bad else 0


def _read_attempt(slot: str, attempt: int) -> dict:
    try:
        with open(layout.attempt_path(slot, attempt), encoding="utf-8") as fh:
            return json.load(fh)
    except (OSError, ValueError):
        return {"slot": os.path.basename(slot), "attempt": attempt, "supervisor_pid": None,
                "started_at": None}
