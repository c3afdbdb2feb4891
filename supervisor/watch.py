"""What the supervisor learns from the journal stream: counters for the progress line and
status, and the conditions that end a session.

A session ends (``StreamWatch.stop_reason``) when:

* a ``proposal_status`` is ``session_stopped`` with a ``stop_reason`` (the policy asked to
  stop, e.g. ``run_changed``);
* the result of an attempt whose proposal carried ``then_stop`` arrives (e.g. the game-over
  dismissal in single-run mode: reason ``run_ended``);
* ``session.max_steps`` steps have been taken and the last one is resolved (reason
  ``max_steps``). A step is an observation with its decision; when a policy pipelines its
  steps (several decisions per observation, see ``actors.steps``) it is a decision, and the
  session ends once every pipelined decision in flight has its result.
"""
from __future__ import annotations

import time

from actors.bounded import BoundedDict
from actors.steps import pipelined


class StreamWatch:
    def __init__(self, max_steps: int | None):
        self.max_steps = max_steps
        self.steps = 0  # max(observations, decisions)
        self.observations = 0
        self.decisions = 0
        self._in_flight: dict[str, None] = {}  # pipelined proposal ids executing, no result yet
        self._pipelined = False
        self._proposals: dict[str, dict] = BoundedDict()
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
            self.observations = row.get("step", self.observations + 1)
            self.steps = max(self.observations, self.decisions)
            self._last_obs = row["observation_id"]
            self.last_state_type = row.get("state_type")
        elif ev == "proposal":
            self.decisions += 1
            self.steps = max(self.observations, self.decisions)
            self._proposals[row["proposal_id"]] = row
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
            elif pipelined(self._proposals.get(row["proposal_id"])):
                self._in_flight[row["proposal_id"]] = None
                self._pipelined = True
        elif ev == "action_attempt":
            self._attempt_proposal[row["attempt_id"]] = row["proposal_id"]
        elif ev == "action_result":
            if row.get("outcome") in self.outcomes:
                self.outcomes[row["outcome"]] += 1
            pid = self._attempt_proposal.get(row["attempt_id"])
            self._in_flight.pop(pid, None)
            self._resolve(self._obs_of_proposal.get(pid))
            if pid in self._then_stop:
                self._stop(self._then_stop[pid])

    def _resolve(self, oid: str | None) -> None:
        if oid is None or not self.max_steps or self._in_flight:
            return
        if self.observations >= self.max_steps and oid == self._last_obs:
            self._stop("max_steps")
        elif self._pipelined and self.decisions >= self.max_steps:
            self._stop("max_steps")

    def _stop(self, reason: str) -> None:
        if self.stop_reason is None:
            self.stop_reason = reason

    def idle_seconds(self) -> float:
        return time.monotonic() - self.last_progress
