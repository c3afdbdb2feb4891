"""Step bookkeeping shared by the consumers of the journal: which observation is the latest,
whether its step is resolved, and how.

A step is *resolved* when its proposal's disposition is not ``execute`` (wait, suppressed,
dry_run, session_stopped), or when the result of its attempt is recorded.
"""
from __future__ import annotations

from actors.bounded import BoundedDict


class StepTracker:
    def __init__(self) -> None:
        self.last_obs: str | None = None
        self.last_obs_row: dict | None = None
        self.steps = 0
        self.obs_of_proposal: dict[str, str] = BoundedDict()
        self.proposal_of_obs: dict[str, str] = BoundedDict()
        self.proposals: dict[str, dict] = BoundedDict()
        self.attempts: dict[str, dict] = BoundedDict()  # attempt_id -> row
        self.attempt_of_proposal: dict[str, str] = BoundedDict()
        self.results: dict[str, dict] = BoundedDict()  # attempt_id -> row
        self.unresolved: dict[str, dict] = {}  # attempts without a result: never forgotten
        self.resolution: dict[str, str] = BoundedDict()  # observation_id -> status or outcome
        self.stopping: str | None = None
        self.read_errors = 0  # consecutive failed reads (counted by the observer)

    def feed(self, row: dict) -> None:
        ev = row.get("event")
        if ev == "observation":
            self.last_obs = row["observation_id"]
            self.last_obs_row = row
            self.steps = row.get("step", self.steps + 1)
            self.read_errors = 0
        elif ev == "proposal":
            self.proposals[row["proposal_id"]] = row
            self.obs_of_proposal[row["proposal_id"]] = row["observation_id"]
            self.proposal_of_obs[row["observation_id"]] = row["proposal_id"]
        elif ev == "proposal_status":
            if row["status"] == "session_stopped":
                self.stopping = row.get("stop_reason") or "session_stopped"
            if row["status"] != "execute":
                oid = self.obs_of_proposal.get(row["proposal_id"])
                if oid:
                    self.resolution[oid] = row["status"]
        elif ev == "action_attempt":
            self.attempts[row["attempt_id"]] = row
            self.unresolved[row["attempt_id"]] = row
            self.attempt_of_proposal[row["proposal_id"]] = row["attempt_id"]
        elif ev == "action_result":
            self.results[row["attempt_id"]] = row
            self.unresolved.pop(row["attempt_id"], None)
            att = self.attempts.get(row["attempt_id"])
            if att:
                self.resolution[att["observation_id"]] = row.get("outcome", "unknown")
                then_stop = self.proposals.get(att["proposal_id"], {}).get("then_stop")
                if then_stop:  # the session ends after this action: no further reads
                    self.stopping = then_stop
        elif ev == "session_stopping":
            self.stopping = row.get("reason") or "stopping"

    def latest_resolved(self) -> bool:
        return self.last_obs is None or self.last_obs in self.resolution

    def latest_resolution(self) -> str | None:
        return self.resolution.get(self.last_obs) if self.last_obs else None
