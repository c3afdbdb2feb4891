"""The recorder's in-memory index of a session, rebuilt from journal rows.

``SessionIndex.apply(row)`` is the only way the index changes, both while recording and
when a restarted recorder replays its journal, so a resumed recorder answers exactly as the
one that died would have. A kind the index keeps something of has one ``_<kind>`` method in
``_APPLY`` (keyed by ``protocol.events`` classes' ``KIND``); every other kind is only counted.
"""
from __future__ import annotations

import dataclasses
import logging
from typing import Any

from actors.runtime.bounded import BoundedDict
from protocol import events as ev

log = logging.getLogger("recorder")

OUTCOMES = ("accepted", "rejected", "unknown")


@dataclasses.dataclass
class SessionIndex:
    observations: int = 0
    last_observation_number: int = 0  # file numbers can skip an orphan left by a crash
    last_observation_id: str | None = None
    reads: dict[str, dict] = dataclasses.field(default_factory=BoundedDict)  # read_id -> obs row
    observation_rows: dict[str, dict] = dataclasses.field(default_factory=BoundedDict)
    proposals: dict[str, dict] = dataclasses.field(default_factory=BoundedDict)
    dispositions: dict[str, str] = dataclasses.field(default_factory=BoundedDict)
    status_sequences: dict[str, int] = dataclasses.field(default_factory=BoundedDict)  # proposal_id -> its status row
    attempts: dict[str, dict] = dataclasses.field(default_factory=BoundedDict)  # attempt_id -> row
    attempt_by_proposal: dict[str, str] = dataclasses.field(default_factory=BoundedDict)
    results: dict[str, dict] = dataclasses.field(default_factory=BoundedDict)  # attempt_id -> row
    awaiting_after_attempt: str | None = None
    awaiting_at_end: list[str] = dataclasses.field(default_factory=list)
    event_keys: BoundedDict = dataclasses.field(default_factory=BoundedDict)
    unresolved: dict[str, None] = dataclasses.field(default_factory=dict)  # never forgotten
    attempt_count: int = 0
    counts: dict[str, int] = dataclasses.field(default_factory=dict)
    outcomes: dict[str, int] = dataclasses.field(default_factory=lambda: {o: 0 for o in OUTCOMES})
    statuses: dict[str, int] = dataclasses.field(default_factory=dict)
    stopping: str | None = None
    started: dict | None = None
    ended: dict | None = None
    restarts: dict[str, int] = dataclasses.field(default_factory=dict)
    model_usage: dict[str, float] = dataclasses.field(default_factory=dict)
    last_run_id: str | None = None  # the last usable reported run id (kept through outages)

    def apply(self, row: dict[str, Any]) -> None:
        event = row.get("event")
        self.counts[event] = self.counts.get(event, 0) + 1
        key = row.get("event_key")
        if key:
            self.event_keys[key] = None
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
        self.observation_rows[oid] = row
        if row.get("read_id"):
            self.reads[row["read_id"]] = row
        if row.get("after_attempt_id"):
            self.awaiting_after_attempt = None

    def _proposal(self, row: dict) -> None:
        self.proposals[row["proposal_id"]] = row
        usage = row.get("model_usage")
        if isinstance(usage, dict):
            self._add_usage(usage)
        else:  # no explicit model_usage: sum what the model evidence reports
            for ev in row.get("model_evidence") or ():
                if isinstance(ev, dict):
                    self._add_usage({"answered": 1, **_call_usage(ev)})

    def _add_usage(self, usage: dict) -> None:
        for k, v in usage.items():
            if isinstance(v, (int, float)) and not isinstance(v, bool):
                self.model_usage[k] = round(self.model_usage.get(k, 0) + v, 3)

    def _status(self, row: dict) -> None:
        self.dispositions[row["proposal_id"]] = row["status"]
        self.status_sequences[row["proposal_id"]] = row["sequence"]
        self.statuses[row["status"]] = self.statuses.get(row["status"], 0) + 1

    def _attempt(self, row: dict) -> None:
        self.attempts[row["attempt_id"]] = row
        self.unresolved[row["attempt_id"]] = None
        self.attempt_count += 1
        self.attempt_by_proposal[row["proposal_id"]] = row["attempt_id"]
        self.awaiting_after_attempt = row["attempt_id"]

    def _result(self, row: dict) -> None:
        self.results[row["attempt_id"]] = row
        self.unresolved.pop(row["attempt_id"], None)
        if row.get("outcome") in self.outcomes:
            self.outcomes[row["outcome"]] += 1

    def _stopping(self, row: dict) -> None:
        self.stopping = row.get("reason") or "stopping"

    def _start(self, row: dict) -> None:
        self.started = row

    def _end(self, row: dict) -> None:
        self.ended = row

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
    def unresolved_attempts(self) -> list[str]:
        return list(self.unresolved)

    def awaiting_observation(self) -> list[str]:
        return [self.awaiting_after_attempt] if self.awaiting_after_attempt else []


def _call_usage(record: dict) -> dict:
    """Tokens (as reported), latency and HTTP requests of one model call's evidence or error."""
    usage = record.get("usage") if isinstance(record.get("usage"), dict) else {}
    out = {k: usage.get(k) for k in ("prompt_tokens", "completion_tokens", "total_tokens")}
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
    ev.ActorRestart.KIND: SessionIndex._restart,
    ev.ModelError.KIND: SessionIndex._model_error,
    ev.ModelLateAnswer.KIND: SessionIndex._model_late,
    ev.RunIdentityChanged.KIND: SessionIndex._identity,
}
