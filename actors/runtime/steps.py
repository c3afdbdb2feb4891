"""Step bookkeeping shared by the consumers of the journal: which observation is the latest,
whether its step is resolved, and how.

A step is *resolved* when its proposal's disposition is not ``execute`` (wait, suppressed,
dry_run, session_stopped), or when the result of its attempt is recorded.

Pipelined steps (see ``docs/performance.md``): a policy may decide up to ``pipeline_depth``
steps ahead of their results, several on one observation. Such proposals carry
``pipeline_depth`` (> 1); the tracker counts the ones executing without a result
(``in_flight``) and the results recorded since the latest observation, which is what the
observer paces its reads by.

Memory stays flat however long the session runs: the tracker keeps, per recent step, only
the few fields it and its users read (``PROPOSAL_KEYS``, ``ATTEMPT_KEYS``, a result's
outcome), in maps bounded by ``BoundedDict``; only attempts without a result are kept whole
(the actuator's orphan recovery needs their ``requester``), and those are few.

``session.max_steps`` is enforced here, in one place: ``max_steps_reached`` (no further read,
no further decision) and ``ended_by_max_steps`` (the supervisor's stop condition).
"""

from __future__ import annotations

from actors.runtime.bounded import BoundedDict
from protocol import events as ev

#: the fields of a proposal / attempt row the tracker's users read (the rest stays in the journal)
PROPOSAL_KEYS = ("proposal_id", "observation_id", "pipeline_depth", "then_stop")
ATTEMPT_KEYS = ("attempt_id", "proposal_id", "observation_id", "action")


class StepTracker:
    def __init__(self, max_steps: int | None = None) -> None:
        self.max_steps = max_steps or None  # session.max_steps (None or 0: no limit)
        self.last_obs: str | None = None
        self.last_obs_row: dict | None = None
        self.steps = 0
        self.obs_of_proposal: dict[str, str] = BoundedDict()
        self.proposal_of_obs: dict[str, str] = BoundedDict()
        self.proposals: dict[str, dict] = BoundedDict()  # proposal_id -> PROPOSAL_KEYS of its row
        self.attempts: dict[str, dict] = BoundedDict()  # attempt_id -> ATTEMPT_KEYS of its row
        self.attempt_of_proposal: dict[str, str] = BoundedDict()
        self.results: dict[str, str] = BoundedDict()  # attempt_id -> outcome
        self.unresolved: dict[str, dict] = {}  # attempts without a result: never forgotten
        self.resolution: dict[str, str] = BoundedDict()  # observation_id -> status or outcome
        self.stopping: str | None = None
        self.read_errors = 0  # consecutive failed reads (counted by the observer)
        self.decisions = 0  # proposals recorded (a step is a decision when steps are pipelined)
        self.in_flight: dict[str, int] = {}  # pipelined proposal id -> its depth, until its result
        self.pipeline_depth = 1  # of the newest pipelined proposal
        self.results_since_obs = 0

    def feed(self, row: dict) -> None:
        kind = row.get("event")
        if kind == ev.Observation.KIND:
            self.last_obs = row["observation_id"]
            self.last_obs_row = row
            self.steps = row.get("step", self.steps + 1)
            self.read_errors = 0
            self.results_since_obs = 0
        elif kind == ev.Proposal.KIND:
            self.decisions += 1
            self.proposals[row["proposal_id"]] = slim(row, PROPOSAL_KEYS)
            self.obs_of_proposal[row["proposal_id"]] = row["observation_id"]
            self.proposal_of_obs[row["observation_id"]] = row["proposal_id"]
        elif kind == ev.ProposalStatus.KIND:
            if row["status"] == "session_stopped":
                self.stopping = row.get("stop_reason") or "session_stopped"
            if row["status"] != "execute":
                oid = self.obs_of_proposal.get(row["proposal_id"])
                if oid:
                    self.resolution[oid] = row["status"]
            else:
                depth = pipelined(self.proposals.get(row["proposal_id"]))
                if depth:
                    self.in_flight[row["proposal_id"]] = depth
                    self.pipeline_depth = depth
        elif kind == ev.ActionAttempt.KIND:
            self.attempts[row["attempt_id"]] = slim(row, ATTEMPT_KEYS)
            self.unresolved[row["attempt_id"]] = row
            self.attempt_of_proposal[row["proposal_id"]] = row["attempt_id"]
        elif kind == ev.ActionResult.KIND:
            self.results[row["attempt_id"]] = row.get("outcome", "unknown")
            self.unresolved.pop(row["attempt_id"], None)
            self.results_since_obs += 1
            att = self.attempts.get(row["attempt_id"])
            if att:
                self.in_flight.pop(att["proposal_id"], None)
                self.resolution[att["observation_id"]] = row.get("outcome", "unknown")
                then_stop = self.proposals.get(att["proposal_id"], {}).get("then_stop")
                if then_stop:  # the session ends after this action: no further reads
                    self.stopping = then_stop
        elif kind == ev.SessionStopping.KIND:
            self.stopping = row.get("reason") or "stopping"

    @property
    def steps_taken(self) -> int:
        """Observations, or decisions where a pipelining policy made more of them (the
        ``session.max_steps`` count)."""
        return max(self.steps, self.decisions)

    def max_steps_reached(self, taken: int | None = None) -> bool:
        """Whether ``session.max_steps`` steps are taken: ``steps_taken``, or ``taken`` when
        the caller knows of steps the journal does not show yet (the policy's decisions)."""
        if not self.max_steps:
            return False
        return (self.steps_taken if taken is None else taken) >= self.max_steps

    def ended_by_max_steps(self, resolved_observation: str | None) -> bool:
        """Whether the step just resolved on ``resolved_observation`` ends the session: the
        last of ``max_steps`` observations, or, when steps are pipelined, the last decision's
        result with nothing else in flight."""
        if resolved_observation is None or not self.max_steps or self.in_flight:
            return False
        if self.steps >= self.max_steps and resolved_observation == self.last_obs:
            return True
        return self.pipeline_depth > 1 and self.decisions >= self.max_steps

    def read_due(self) -> bool:
        """Whether the observer should read now: the newest observation's step is resolved
        and, while pipelined steps are in flight, a pipeline's worth of results came in."""
        if not self.latest_resolved():
            return False
        return not self.in_flight or self.results_since_obs >= self.pipeline_depth

    def latest_resolved(self) -> bool:
        return self.last_obs is None or self.last_obs in self.resolution

    def latest_resolution(self) -> str | None:
        return self.resolution.get(self.last_obs) if self.last_obs else None


def slim(row: dict, keys: tuple[str, ...]) -> dict:
    """The fields ``keys`` of ``row`` that it has."""
    return {k: row[k] for k in keys if k in row}


def pipelined(proposal: dict | None) -> int:
    """The pipeline depth a proposal row was decided with (0: an ordinary, one-at-a-time step)."""
    depth = (proposal or {}).get("pipeline_depth")
    return depth if isinstance(depth, int) and not isinstance(depth, bool) and depth > 1 else 0
