"""The recorder's in-memory index of a session, rebuilt from journal rows.

``SessionIndex.apply(row)`` is the only way the index changes, both while recording and
when a restarted recorder replays its journal, so a resumed recorder answers exactly as the
one that died would have. A kind the index keeps something of has one ``_<kind>`` method in
``_APPLY`` (keyed by ``protocol.events`` classes' ``KIND``); every other kind is only counted.

Memory stays flat however long the session runs: per-step entries are small tuples of what a
rule or a repeated request's reply needs (not whole rows), and each map keeps its newest
``RECENT`` entries; only attempts without a result are never forgotten. A repeated request
comes within seconds (its sender retries the one it awaits), so ``RECENT`` observations,
proposals and attempts are ample; and a proposal is forgotten no later than its attempt (one
entry each, the attempts' map fills slower), so forgetting can refuse an intent
(``unknown_proposal``) but never allow a second attempt.
``to_state``/``from_state`` turn the index into JSON and back (the recorder's checkpoint; a
bounded map is a JSON object, its tuples arrays).
"""

from __future__ import annotations

import dataclasses
import logging
from typing import Any, NamedTuple

from actors.emulator.session.score_tally import ScoreTally
from actors.runtime.bounded import BoundedDict
from protocol import events as ev

log = logging.getLogger("recorder")

OUTCOMES = ("accepted", "rejected", "unknown")
RECENT = 4096  # entries each per-step map keeps


def _recent() -> BoundedDict:
    return BoundedDict(RECENT)


class Observed(NamedTuple):
    """What a repeated ``store_observation`` is answered with (the file's path follows from
    the id: ``files.observation_relpath``)."""

    observation_id: str
    sequence: int
    sha256: str
    step: int


class Proposed(NamedTuple):
    observation_id: str
    action: str | None
    parameters: Any


class Disposed(NamedTuple):
    status: str
    sequence: int  # of the proposal_status row


class Attempted(NamedTuple):
    attempt_id: str
    proposal_id: str
    action: str
    parameters: Any
    requester: str
    sequence: int


#: the bounded maps and the tuple each holds (None: the value is stored as it is)
_RECENT_MAPS = {
    "reads": None,
    "observed": Observed,
    "proposals": Proposed,
    "pending": None,
    "dispositions": Disposed,
    "attempts": Attempted,
    "attempt_by_proposal": None,
    "results": None,
    "event_keys": None,
}


@dataclasses.dataclass
class SessionIndex:
    observations: int = 0
    last_observation_number: int = 0  # file numbers can skip an orphan left by a crash
    last_observation_id: str | None = None
    reads: BoundedDict = dataclasses.field(default_factory=_recent)  # read_id -> observation_id
    observed: BoundedDict = dataclasses.field(default_factory=_recent)  # observation_id -> Observed
    proposals: BoundedDict = dataclasses.field(default_factory=_recent)  # proposal_id -> Proposed
    pending: BoundedDict = dataclasses.field(default_factory=_recent)  # proposal_id -> row, until its status
    dispositions: BoundedDict = dataclasses.field(default_factory=_recent)  # proposal_id -> Disposed
    attempts: BoundedDict = dataclasses.field(default_factory=_recent)  # attempt_id -> Attempted
    attempt_by_proposal: BoundedDict = dataclasses.field(default_factory=_recent)
    results: BoundedDict = dataclasses.field(default_factory=_recent)  # attempt_id -> sequence
    event_keys: BoundedDict = dataclasses.field(default_factory=_recent)
    unresolved: dict[str, None] = dataclasses.field(default_factory=dict)  # never forgotten
    awaiting_after_attempt: str | None = None
    attempt_count: int = 0
    counts: dict[str, int] = dataclasses.field(default_factory=dict)
    outcomes: dict[str, int] = dataclasses.field(default_factory=lambda: dict.fromkeys(OUTCOMES, 0))
    statuses: dict[str, int] = dataclasses.field(default_factory=dict)
    stopping: str | None = None
    started_at: str | None = None
    ended: dict | None = None  # the session_end row
    outcome_error: str | None = None  # the first outcome_error's error
    restarts: dict[str, int] = dataclasses.field(default_factory=dict)
    model_usage: dict[str, float] = dataclasses.field(default_factory=dict)
    last_run_id: str | None = None  # the last usable reported run id (kept through outages)
    score: dict = dataclasses.field(default_factory=dict)  # a Game Boy run's score (ScoreTally.state)

    def apply(self, row: dict[str, Any]) -> None:
        event = row.get("event")
        self.counts[event] = self.counts.get(event, 0) + 1
        key = row.get("event_key")
        if key and isinstance(key, str):  # (a request's key is a string: no other can repeat one,
            self.event_keys[key] = None  # and a checkpoint's JSON would turn it into one)
        handler = _APPLY.get(event)
        if handler:
            try:
                handler(self, row)
            except (KeyError, TypeError, ValueError, AttributeError) as exc:  # one odd row
                log.error("row %s (%s) not indexed: %s", row.get("sequence"), event, exc)

    # -- per event ----------------------------------------------------------------------
    def _observation(self, row: dict) -> None:
        self.observations += 1
        oid = row["observation_id"]
        self.last_observation_id = oid
        self.last_observation_number = max(self.last_observation_number, int(oid.rsplit("-", 1)[-1]))
        self.observed[oid] = Observed(oid, row["sequence"], row["sha256"], row["step"])
        if row.get("read_id"):
            self.reads[row["read_id"]] = oid
        if row.get("after_attempt_id"):
            self.awaiting_after_attempt = None

    def _proposal(self, row: dict) -> None:
        pid = row["proposal_id"]
        self.proposals[pid] = Proposed(row["observation_id"], row.get("action"), row.get("parameters"))
        self.pending[pid] = row  # a recorder that dies before the status finishes it from this
        usage = row.get("model_usage")
        if isinstance(usage, dict):
            self._add_usage(usage)
        else:  # no explicit model_usage: sum what the model evidence reports
            for e in row.get("model_evidence") or ():
                if isinstance(e, dict):
                    self._add_usage({"answered": 1, **_call_usage(e)})

    def _add_usage(self, usage: dict) -> None:
        for k, v in usage.items():
            if isinstance(v, (int, float)) and not isinstance(v, bool):  # a cost: to 1e-9 USD
                self.model_usage[k] = round(self.model_usage.get(k, 0) + v, 9 if k == "cost_usd" else 3)

    def _status(self, row: dict) -> None:
        self.dispositions[row["proposal_id"]] = Disposed(row["status"], row["sequence"])
        self.pending.pop(row["proposal_id"], None)
        self.statuses[row["status"]] = self.statuses.get(row["status"], 0) + 1

    def _attempt(self, row: dict) -> None:
        aid = row["attempt_id"]
        self.attempts[aid] = Attempted(
            aid, row["proposal_id"], row["action"], row["parameters"], row.get("requester"), row["sequence"]
        )
        self.unresolved[aid] = None
        self.attempt_count += 1
        self.attempt_by_proposal[row["proposal_id"]] = aid
        self.awaiting_after_attempt = aid

    def _result(self, row: dict) -> None:
        self.results[row["attempt_id"]] = row["sequence"]
        self.unresolved.pop(row["attempt_id"], None)
        if row.get("outcome") in self.outcomes:
            self.outcomes[row["outcome"]] += 1
        ScoreTally(self.score).add_row(row)  # an emulator step's score values, when it reads some

    def _stopping(self, row: dict) -> None:
        self.stopping = row.get("reason") or "stopping"

    def _start(self, row: dict) -> None:
        self.started_at = row.get("recorded_at")

    def _end(self, row: dict) -> None:
        self.ended = row

    def _outcome_error(self, row: dict) -> None:
        if self.outcome_error is None:
            self.outcome_error = row.get("error")

    def _restart(self, row: dict) -> None:
        actor = row.get("actor", "?")
        self.restarts[actor] = self.restarts.get(actor, 0) + 1

    def _identity(self, row: dict) -> None:
        self.last_run_id = row.get("run_id")

    def _model_error(self, row: dict) -> None:
        self.model_usage["errors"] = self.model_usage.get("errors", 0) + 1
        self._add_usage(_call_usage(row))

    def _model_late(self, row: dict) -> None:  # answered after the policy stopped waiting
        self.model_usage["late_answers"] = self.model_usage.get("late_answers", 0) + 1
        self._add_usage(_call_usage(row))

    # -- queries ------------------------------------------------------------------------
    def read(self, read_id: str) -> Observed | None:
        """The observation stored for ``read_id``, if remembered."""
        oid = self.reads.get(read_id)
        return self.observed.get(oid) if oid is not None else None

    def disposition(self, proposal_id: str) -> str | None:
        done = self.dispositions.get(proposal_id)
        return done.status if done is not None else None

    def unresolved_attempts(self) -> list[str]:
        return list(self.unresolved)

    def awaiting_observation(self) -> list[str]:
        return [self.awaiting_after_attempt] if self.awaiting_after_attempt else []

    # -- persistence --------------------------------------------------------------------
    def to_state(self) -> dict[str, Any]:
        """The whole index as JSON-ready values: each bounded map as itself (a JSON object
        keeps its order, oldest first; its tuples become arrays), copied by no Python loop,
        so the C encoder does all the work."""
        state: dict[str, Any] = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}
        state["unresolved"] = list(self.unresolved)
        return state

    @classmethod
    def from_state(cls, state: dict[str, Any]) -> SessionIndex:
        """The index ``to_state`` described. Raises KeyError, TypeError or ValueError when
        ``state`` is not one."""
        idx = cls()
        for f in dataclasses.fields(idx):
            value = state[f.name]
            if f.name in _RECENT_MAPS:
                shape = _RECENT_MAPS[f.name]
                target = getattr(idx, f.name)
                for k, v in value.items():
                    target[k] = shape(*v) if shape is not None else v
            elif f.name == "unresolved":
                idx.unresolved = dict.fromkeys(value)
            else:
                setattr(idx, f.name, value)
        return idx


def _call_usage(record: dict) -> dict:
    """Tokens (as reported), cost, latency and HTTP requests of one model call's evidence or
    error. A call with usage whose ``cost_usd`` is not a number counts in
    ``calls_cost_unknown`` (its cost is unknown, never 0)."""
    usage = record.get("usage") if isinstance(record.get("usage"), dict) else {}
    out = {k: usage.get(k) for k in ("prompt_tokens", "completion_tokens", "total_tokens", "cached_tokens", "cost_usd")}
    if usage:
        cost = usage.get("cost_usd")
        out["calls_cost_unknown"] = int(not isinstance(cost, (int, float)) or isinstance(cost, bool))
    out["latency_ms_total"] = usage.get("latency_ms")
    out["http_requests"] = record.get("attempts")
    return out


_APPLY = {
    ev.Observation.KIND: SessionIndex._observation,
    ev.Proposal.KIND: SessionIndex._proposal,
    ev.ProposalStatus.KIND: SessionIndex._status,
    ev.ActionAttempt.KIND: SessionIndex._attempt,
    ev.ActionResult.KIND: SessionIndex._result,
    ev.SessionStopping.KIND: SessionIndex._stopping,
    ev.SessionStart.KIND: SessionIndex._start,
    ev.SessionEnd.KIND: SessionIndex._end,
    ev.OutcomeError.KIND: SessionIndex._outcome_error,
    ev.ActorRestart.KIND: SessionIndex._restart,
    ev.ModelError.KIND: SessionIndex._model_error,
    ev.ModelLateAnswer.KIND: SessionIndex._model_late,
    ev.RunIdentityChanged.KIND: SessionIndex._identity,
}
