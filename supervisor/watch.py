"""What the supervisor learns from the journal stream: counters for the progress line and
status, and the conditions that end a session.

A session ends (``StreamWatch.stop_reason``) when:

* a ``proposal_status`` is ``session_stopped`` with a ``stop_reason`` (the policy asked to
  stop, e.g. ``run_changed``);
* the result of an attempt whose proposal carried ``then_stop`` arrives (e.g. the game-over
  dismissal in single-run mode: reason ``run_ended``);
* ``session.max_steps`` observations have been read and the last one is resolved (reason
  ``max_steps``).
"""
from __future__ import annotations

import time

from actors.bounded import BoundedDict


class StreamWatch:
    def __init__(self, max_steps: int | None):
        self.max_steps = max_steps
        self.steps = 0
        self.outcomes = {"accepted": 0, "rejected": 0, "unknown": 0}
        self.dispositions: dict[str, int] = {}
        self.last_sequence = 0
        self.last_progress = time.monotonic()
        self.stop_reason: str | None = None
        self.last_state_type: str | None = None
        self._then_stop: dict[str, str] = BoundedDict()  # proposal_id -> reason
        self._attempt_proposal: dict[str, str] = BoundedDict()
        self._obs_of_proposal: dict[str, str] = BoundedDict()
        self._last_obs: str | None = None

    def feed(self, row: dict) -> None:
        self.last_sequence = row["sequence"]
        ev = row.get("event")
        if ev in ("observation", "proposal_status", "action_result"):
            self.last_progress = time.monotonic()
        if ev == "observation":
            self.steps = row.get("step", self.steps + 1)
            self._last_obs = row["observation_id"]
            self.last_state_type = row.get("state_type")
        elif ev == "proposal":
            self._obs_of_proposal[row["proposal_id"]] = row["observation_id"]
            if row.get("then_stop"):
                self._then_stop[row["proposal_id"]] = row["then_stop"]
        elif ev == "proposal_status":
            st = row["status"]
            self.dispositions[st] = self.dispositions.get(st, 0) + 1
            if st == "session_stopped" and row.get("stop_reason"):
                self._stop(row["stop_reason"])
            if st != "execute":
                self._resolve(self._obs_of_proposal.get(row["proposal_id"]))
        elif ev == "action_attempt":
            self._attempt_proposal[row["attempt_id"]] = row["proposal_id"]
        elif ev == "action_result":
            if row.get("outcome") in self.outcomes:
                self.outcomes[row["outcome"]] += 1
            pid = self._attempt_proposal.get(row["attempt_id"])
            self._resolve(self._obs_of_proposal.get(pid))
            if pid in self._then_stop:
                self._stop(self._then_stop[pid])

    def _resolve(self, oid: str | None) -> None:
        if oid is None:
            return
        if self.max_steps and self.steps >= self.max_steps and oid == self._last_obs:
            self._stop("max_steps")

    def _stop(self, reason: str) -> None:
        if self.stop_reason is None:
            self.stop_reason = reason

    def idle_seconds(self) -> float:
        return time.monotonic() - self.last_progress
