"""What the supervisor learns from the journal stream: counters for the progress line and
status, and the conditions that end a session.

A session ends (``StreamWatch.stop_reason``) when:

* a ``proposal_status`` is ``session_stopped`` with a ``stop_reason`` (the policy asked to
  stop, e.g. ``run_changed``);
* the result of an attempt whose proposal carried ``then_stop`` arrives (e.g. the game-over
  dismissal in single-run mode: reason ``run_ended``);
* ``model.on_unreachable: stop`` and ``model.unreachable_after`` questions in a row got no
  answer from the model (``model_error`` rows with no answered call between them): reason
  ``model_unreachable``;
* ``session.max_steps`` steps have been taken and the last one is resolved (reason
  ``max_steps``). A step is an observation with its decision; when a policy pipelines its
  steps (several decisions per observation, see ``actors.runtime.steps``) it is a decision, and the
  session ends once every pipelined decision in flight has its result.

For a session that ends ``stuck``, ``stuck_line()`` says where: the screen (from the policy's
``stall`` record when it stopped itself, else the last observation's state type) and the
game's last refusals (action and the game's error text).

It is a ``JournalActor`` the supervisor pumps from its own poll loop (``socket``/``pump``);
it only counts, so its follow is always paced (``PACE_S``): progress and stop conditions need
no per-row wake-ups.
"""

from __future__ import annotations

import collections
import time

from actors.runtime.journal_actor import JournalActor
from protocol import events as ev
from supervisor.capture.facts import CapturedSession

PROGRESS = (ev.Observation.KIND, ev.ProposalStatus.KIND, ev.ActionResult.KIND)  # rows that show progress


class StreamWatch(JournalActor):
    PACE_S = 0.05

    def __init__(self, max_steps: int | None, follower=None, model_stop_after: int | None = None):
        super().__init__(follower, max_steps=max_steps)  # self.track: the actors' step bookkeeping
        self.model_stop_after = model_stop_after  # None: a model that never answers stops nothing
        self.facts = CapturedSession()  # every row: the runs that ended (the cost per run)
        self.model = self.facts.model  # the model's answers, errors, tokens and cost
        self.outcomes = {"accepted": 0, "rejected": 0, "unknown": 0}
        self.dispositions: dict[str, int] = {}
        self.last_sequence = 0
        self.last_progress = time.monotonic()
        self.stop_reason: str | None = None
        self.last_state_type: str | None = None
        self.stall: dict | None = None  # the newest ``stall`` record a proposal carried
        self.refusals: collections.deque = collections.deque(maxlen=3)  # (action, error text)

    @property
    def steps(self) -> int:
        return self.track.steps_taken

    def awaits_rows(self) -> bool:
        return False  # it only counts: no row calls for action at once

    def on_row(self, row: dict) -> None:
        self.last_sequence = row["sequence"]
        self.facts.add(row)
        kind = row.get("event")
        if kind in PROGRESS:
            self.last_progress = time.monotonic()
        if kind == ev.Observation.KIND:
            self.last_state_type = row.get("state_type")
        elif kind == ev.Proposal.KIND:
            if isinstance(row.get("stall"), dict):
                self.stall = row["stall"]
        elif kind == ev.ModelError.KIND:
            if self.model_stop_after and self.model.unanswered_in_a_row >= self.model_stop_after:
                self._stop("model_unreachable")
        elif kind == ev.ProposalStatus.KIND:
            st = row["status"]
            self.dispositions[st] = self.dispositions.get(st, 0) + 1
            if st == "session_stopped" and row.get("stop_reason"):
                self._stop(row["stop_reason"])
            if st != "execute":
                self._resolve(self.track.obs_of_proposal.get(row["proposal_id"]))
        elif kind == ev.ActionResult.KIND:
            if row.get("outcome") in self.outcomes:
                self.outcomes[row["outcome"]] += 1
            attempt = self.track.attempts.get(row["attempt_id"]) or {}
            if row.get("outcome") == "rejected":
                self.refusals.append((attempt.get("action") or "?", refusal_text(row)))
            pid = attempt.get("proposal_id")
            self._resolve(self.track.obs_of_proposal.get(pid))
            then_stop = self.track.proposals.get(pid, {}).get("then_stop") if pid else None
            if then_stop:
                self._stop(then_stop)

    def _resolve(self, oid: str | None) -> None:
        if self.track.ended_by_max_steps(oid):
            self._stop("max_steps")

    def _stop(self, reason: str) -> None:
        if self.stop_reason is None:
            self.stop_reason = reason

    def idle_seconds(self) -> float:
        return time.monotonic() - self.last_progress

    def stuck_line(self) -> str:
        """Where a stuck session stood: its screen and the game's last refusals."""
        screen = (self.stall or {}).get("screen") or self.last_state_type or "?"
        refusals = "; ".join(f"{a} -> {e}" for a, e in self.refusals) or "none"
        return f"stuck on screen {screen}; last refusals: {refusals}"


def refusal_text(row: dict) -> str:
    resp = row.get("response")
    text = resp.get("error") if isinstance(resp, dict) else None
    return str(text or row.get("error") or "rejected")[:160]
