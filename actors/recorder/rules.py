"""The recorder's domain rules: what it records, what it answers and what it refuses.

No sockets here (those are ``serve.py``'s): a ``Recorder`` is the session's state
(``state.RecorderState``: the journal writer, the ``SessionIndex`` rebuilt from rows, the
caches, start and resume, durability) and one ``on_<request>`` handler per request type, each
returning its reply or raising ``Refusal`` (a stable code and a message). Every row goes
through ``append`` (a ``protocol.events`` event) or, for the kinds others record through
``record_event``, ``append_row``.

Refusal codes and the rule behind each:

    unknown_observation  a proposal for an observation this session does not have
    bad_wish             a proposal's wish is not execute, wait, suppressed or stop
    bad_proposal         an executable proposal without an action
    unknown_proposal     an intent for a proposal this session does not have
    attempt_exists       a second intent for a proposal (another requester, or resolved):
                         a proposal is never attempted twice
    not_executable       an intent for a proposal whose disposition is not execute
    session_stopping     an intent once the session is stopping
    stale_proposal       an intent for a proposal whose observation is forgotten
    unknown_attempt      a result for an attempt that awaits none
    bad_outcome          a result whose outcome is not accepted, rejected or unknown
    reserved_event       ``record_event`` for a kind only its own request records
    session_finalized    anything new once ``session_end`` is written
    no_executable        (internal) an ``await_intent`` with no proposal to take: it is parked
    bad_cursor, bad_wake (serve.py) a follow after a negative sequence, or with malformed ``wake``

Repeats are idempotent: the same ``read_id``, ``proposal_id``, intent by the same requester,
``attempt_id`` result or event ``key`` is answered from the journal, not appended again.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable

from actors.progress import progress_of
from actors.runtime.steps import pipelined
from protocol import to_recorder as req
from protocol.events import (
    ActionAttempt,
    ActionResult,
    Observation,
    ObservationError,
    OutcomeError,
    Proposal,
    ProposalStatus,
    RunIdentityChanged,
    RunIdentityUnavailable,
    SessionEnd,
    reserved_kinds,
)
from protocol.from_recorder import Finalized, IntentAck, ObservationStored, ProposalRecorded, Recorded, SnapshotReply

from . import files, summary
from .index import OUTCOMES, Attempted
from .state import RecorderState

log = logging.getLogger("recorder")

WISHES = ("execute", "wait", "suppressed", "stop")
RESERVED = reserved_kinds()  # appended only by the recorder itself, never through record_event


class Refusal(Exception):
    """A request the recorder will not carry out; ``serve`` turns it into a ``recorder_error``."""

    def __init__(self, code: str, message: str):
        super().__init__(message)
        self.code = code


class Recorder(RecorderState):
    """One session's capture (``RecorderState``) and the requests it answers: one
    ``on_<request>`` handler per request type, each returning its reply or raising ``Refusal``."""

    def _check_open(self) -> None:
        if self.finalized is not None or self.index.ended is not None:
            raise Refusal("session_finalized", "the session is finalized; nothing more is recorded")

    def handlers(self) -> dict[type, Callable]:
        """The writer endpoint's requests and their handlers; once the journal is broken,
        each refuses (``JournalError``) before anything, repeats included."""
        return {t: self._usable(h) for t, h in self._handlers().items()}

    def _usable(self, handler: Callable) -> Callable:
        def call(m):
            self.writer.check_usable()
            return handler(m)

        return call

    def _handlers(self) -> dict[type, Callable]:
        return {
            req.StoreObservation: self.on_store_observation,
            req.ReportObservationError: self.on_report_observation_error,
            req.RecordProposal: self.on_record_proposal,
            req.RecordIntent: self.on_record_intent,
            req.AwaitIntent: self.on_await_intent,
            req.RecordResult: self.on_record_result,
            req.RecordEvent: self.on_record_event,
            req.Finalize: self.on_finalize,
        }

    # -- observations ---------------------------------------------------------------------
    def on_store_observation(self, m: req.StoreObservation) -> ObservationStored:
        done = self.index.read(m.read_id)
        if done is None:
            self._check_open()
            number, relpath = self._next_observation_file()
            oid = f"o-{number:06d}"
            sha = files.write_observation(self.root, relpath, m.state)
            self.executable = None  # a newer read supersedes a proposal not yet attempted
            self.make_durable_by_reply(relpath)
            state_type = m.state.get("state_type")
            row = self.append(
                Observation(
                    observation_id=oid,
                    path=relpath,
                    sha256=sha,
                    step=self.index.observations + 1,
                    phase=m.phase,
                    state_type=state_type if isinstance(state_type, str) else None,
                    read_id=m.read_id,
                    read_ms=m.read_ms,
                    after_attempt_id=self.index.awaiting_after_attempt or None,
                    run_identity=m.identity,
                    progress=progress_of(m.state),
                )
            )
            self.cache_state(oid, m.state)
            if m.identity is not None:
                self._identity_rows(oid, m.identity)
            return ObservationStored(
                reply_to="", observation_id=oid, sequence=row["sequence"], path=relpath, sha256=sha, step=row["step"]
            )
        path = self.observation_path(done.observation_id)
        self.make_durable_by_reply(path)  # a repeat to a resumed recorder: its file was perhaps never fsynced
        return ObservationStored(
            reply_to="",
            observation_id=done.observation_id,
            sequence=done.sequence,
            path=path,
            sha256=done.sha256,
            step=done.step,
        )

    def _next_observation_file(self) -> tuple[int, str]:
        """The next free observation number. A recorder that died between writing a file
        and its row leaves an orphan file: it is never overwritten, its number is skipped."""
        number = max(self.index.last_observation_number, self.orphans_after) + 1
        relpath = files.observation_relpath(self.sid, number)
        while os.path.exists(os.path.join(self.root, relpath)):
            number += 1
            relpath = files.observation_relpath(self.sid, number)
        self.orphans_after = number
        return number, relpath

    def _identity_rows(self, oid: str, ident: dict) -> None:
        """Identity changes and identity failures are rows of their own."""
        if ident.get("status") == "ok" and isinstance(ident.get("run_id"), str):
            if ident["run_id"] != self.index.last_run_id:
                self.append(
                    RunIdentityChanged(
                        observation_id=oid,
                        previous_run_id=self.index.last_run_id,
                        run_id=ident["run_id"],
                        seed=ident.get("seed"),
                    )
                )
        else:
            self.append(
                RunIdentityUnavailable(
                    observation_id=oid,
                    status=ident.get("status"),
                    detail=ident.get("error") or ident.get("reason"),
                    last_known_run_id=self.index.last_run_id,
                )
            )

    def on_report_observation_error(self, m: req.ReportObservationError) -> Recorded:
        self._check_open()
        row = self.append(
            ObservationError(
                read_id=m.read_id,
                error=m.error,
                error_type=m.error_type,
                last_observation_id=self.index.last_observation_id,
            )
        )
        return Recorded(reply_to="", sequence=row["sequence"])

    # -- proposals ------------------------------------------------------------------------
    def on_record_proposal(self, m: req.RecordProposal) -> ProposalRecorded:
        if m.proposal_id in self.index.proposals:
            done = self.index.dispositions.get(m.proposal_id)
            if done is not None:  # a repeat: the first reply again
                return ProposalRecorded(
                    reply_to="", proposal_id=m.proposal_id, disposition=done.status, sequence=done.sequence
                )
            self._check_open()  # the recorder died between the proposal and its status
            return self._record_status(m, dict(self.index.pending.get(m.proposal_id, {})))
        self._check_open()
        if m.observation_id not in self.index.observed:
            raise Refusal("unknown_observation", f"no observation {m.observation_id!r} in this session")
        if m.wish not in WISHES:
            raise Refusal("bad_wish", f"wish {m.wish!r} is not one of {', '.join(WISHES)}")
        if m.wish == "execute" and not m.action:
            raise Refusal("bad_proposal", "an executable proposal needs an action")
        proposal = Proposal(
            proposal_id=m.proposal_id,
            observation_id=m.observation_id,
            action=m.action,
            parameters=m.parameters,
            reason=m.reason,
            source=m.source,
            decide_ms=m.decide_ms,
            model_evidence=m.model_evidence,
            extra=dict(m.extra or {}),
        )
        self.append(proposal)
        return self._record_status(m, proposal.to_row())

    def _record_status(self, m: req.RecordProposal, proposal: dict) -> ProposalRecorded:
        status, stop_reason = disposition(
            m.wish, m.reason, stopping=self.index.stopping, dry_run=bool(self.ctx.setting("session.dry_run", False))
        )
        row = self.append(ProposalStatus(proposal_id=m.proposal_id, status=status, stop_reason=stop_reason))
        if status in ("execute", "dry_run"):
            self._decide_feed(proposal, status)
        if status == "execute" and not pipelined(proposal):
            self.executable = m.proposal_id  # for an ``await_intent`` (``on_await_intent``)
        return ProposalRecorded(reply_to="", proposal_id=m.proposal_id, disposition=status, sequence=row["sequence"])

    def _decide_feed(self, proposal: dict, status: str) -> None:
        """The ``decisions.jsonl`` compatibility feed's row: the proposal's row without its
        model evidence, as a ``decide`` event with the disposition (and the status row's
        time); appended by ``after_group``."""
        row = {k: v for k, v in proposal.items() if k != "model_evidence"}
        row.update(event="decide", session=self.sid, disposition=status, recorded_at=self.cache[-1]["recorded_at"])
        self.decided.append(row)
        if not self.writer.grouped:
            self.after_group()

    # -- intents and results --------------------------------------------------------------
    def on_record_intent(self, m: req.RecordIntent) -> IntentAck:
        prop = self.index.proposals.get(m.proposal_id)
        if prop is None:
            raise Refusal("unknown_proposal", f"no proposal {m.proposal_id!r} in this session")
        self._check_open()  # never an acknowledgement after session_end, not even a repeat
        existing = self.index.attempt_by_proposal.get(m.proposal_id)
        if existing is not None:
            att = self.index.attempts.get(existing)
            if att is None or existing in self.index.results or att.requester != m.requester:
                raise Refusal(
                    "attempt_exists",
                    f"proposal {m.proposal_id!r} already has attempt {existing!r}; it is never sent twice",
                )
            return _ack(att)
        if self.index.disposition(m.proposal_id) != "execute":
            raise Refusal(
                "not_executable",
                f"proposal {m.proposal_id!r} has disposition {self.index.disposition(m.proposal_id)!r}, not execute",
            )
        if self.index.stopping:
            raise Refusal("session_stopping", f"the session is stopping ({self.index.stopping})")
        obs = self.index.observed.get(prop.observation_id)
        if obs is None:
            raise Refusal("stale_proposal", f"proposal {m.proposal_id!r} is too old to act on")
        self.make_durable(self.observation_path(obs.observation_id))  # (done at store, unless resumed)
        number = self.index.attempt_count + 1
        if self.executable == m.proposal_id:
            self.executable = None
        row = self.append(
            ActionAttempt(
                attempt_id=f"a-{number:06d}",
                proposal_id=m.proposal_id,
                observation_id=prop.observation_id,
                action=prop.action,
                parameters=prop.parameters,
                requester=m.requester,
            ),
            durable=True,
        )
        return IntentAck(
            reply_to="",
            attempt_id=row["attempt_id"],
            proposal_id=row["proposal_id"],
            action=row["action"],
            parameters=row["parameters"],
            sequence=row["sequence"],
        )

    def on_await_intent(self, m: req.AwaitIntent) -> IntentAck:
        """The intent for the waiting executable proposal, recorded for ``m.requester``
        exactly as ``on_record_intent`` records it (its refusals too); the proposal is taken
        either way, so a refused one is not offered again. ``Refusal("no_executable")`` when
        none waits (the server parks the request instead of asking)."""
        pid, self.executable = self.executable, None
        if pid is None:
            raise Refusal("no_executable", "no executable proposal awaits an intent")
        return self.on_record_intent(req.RecordIntent(proposal_id=pid, requester=m.requester))

    def on_record_result(self, m: req.RecordResult) -> Recorded:
        done = self.index.results.get(m.attempt_id)
        if done is not None:
            return Recorded(reply_to="", sequence=done)
        self._check_open()
        if m.attempt_id not in self.index.unresolved:
            raise Refusal("unknown_attempt", f"no attempt {m.attempt_id!r} awaits a result")
        if m.outcome not in OUTCOMES:
            raise Refusal("bad_outcome", f"outcome {m.outcome!r} is not one of {', '.join(OUTCOMES)}")
        row = self.append(
            ActionResult(
                attempt_id=m.attempt_id,
                outcome=m.outcome,
                http_status=m.http_status,
                response=m.response,
                error=m.error,
                request_ms=m.request_ms,
            ),
            durable=True,
        )
        return Recorded(reply_to="", sequence=row["sequence"])

    # -- other events, the end, the snapshot ----------------------------------------------
    def on_record_event(self, m: req.RecordEvent) -> Recorded:
        if m.key and m.key in self.index.event_keys:
            return Recorded(reply_to="", sequence=self.writer.sequence)
        if m.event in RESERVED:
            raise Refusal("reserved_event", f"{m.event!r} is recorded only through its own request")
        self._check_open()
        fields = dict(m.fields)
        if m.key:
            fields["event_key"] = m.key
        row = self.append_row({**fields, "event": m.event})
        return Recorded(reply_to="", sequence=row["sequence"])

    def on_finalize(self, m: req.Finalize) -> Finalized:
        """``session_end`` (unless there: a retry, or a resume after a failure between the
        row and the summary), then the summary and the feed row; repeats get the summary."""
        if self.finalized is None:
            if self.index.ended is None:
                self._append_end(m.reason, m.exit_code)
            self.finalized = summary.write(
                summary.Capture(
                    root=self.root,
                    session_id=self.sid,
                    session_dir=self.dir,
                    journal_path=self.journal_path,
                    dry_run=bool(self.ctx.setting("session.dry_run", False)),
                    last_digest=self.writer.last_digest,
                ),
                self.index,
            )
            self.after_group()  # the last decisions' feed lines, then the feeds made durable
            try:
                files.make_feeds_durable(self.root)
            except OSError as exc:  # a compatibility feed never fails the session
                log.error("the feeds could not be made durable: %s", exc)
        return Finalized(reply_to="", summary=self.finalized)

    def _append_end(self, reason: str, exit_code: int) -> None:
        outcome_dir = self.ctx.setting("capture.outcome_dir")
        candidates, outcome_error = summary.outcome_candidates(outcome_dir, self.dir)
        if outcome_error:
            self.append(OutcomeError(error=outcome_error, outcome_dir=outcome_dir))
        self.append(
            SessionEnd(
                exit_code=exit_code,
                reason=reason,
                outcome_file_candidates=candidates,
                awaiting_observation_after_attempt=self.index.awaiting_observation(),
                unresolved_attempts=self.index.unresolved_attempts(),
            ),
            durable=True,
        )

    def on_snapshot(self, m: req.Snapshot) -> SnapshotReply:
        return SnapshotReply(reply_to="", last_sequence=self.writer.sequence, summary=self.snapshot())

    def snapshot(self) -> dict:
        idx = self.index
        return {
            "session": self.sid,
            "steps": idx.observations,
            "events": dict(idx.counts),
            "dispositions": dict(idx.statuses),
            "action_results": dict(idx.outcomes),
            "attempts": idx.attempt_count,
            "unresolved_attempts": idx.unresolved_attempts(),
            "actor_restarts": dict(idx.restarts),
            "model_usage": dict(idx.model_usage),
            "stopping": idx.stopping,
            "finalized": self.finalized is not None,
        }


def _ack(att: Attempted) -> IntentAck:
    return IntentAck(
        reply_to="",
        attempt_id=att.attempt_id,
        proposal_id=att.proposal_id,
        action=att.action,
        parameters=att.parameters,
        sequence=att.sequence,
    )


def disposition(wish: str, reason: str, *, stopping: str | None, dry_run: bool) -> tuple[str, str | None]:
    """A proposal's status and stop reason: ``session_stopped`` for a ``stop`` wish (its own
    reason) or an ``execute`` while the session stops (the stop's reason), ``dry_run`` for an
    ``execute`` in a dry run; otherwise the wish itself."""
    if wish == "stop" or (wish == "execute" and stopping):
        status = "session_stopped"
    elif wish == "execute" and dry_run:
        status = "dry_run"
    else:
        status = wish
    stop_reason = reason if wish == "stop" else stopping if status == "session_stopped" else None
    return status, stop_reason
