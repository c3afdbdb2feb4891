"""The recorder's domain rules: what it records, what it answers and what it refuses.

No sockets here (those are ``serve.py``'s): a ``Recorder`` is the session's state — the
journal writer, the ``SessionIndex`` rebuilt from rows (from the last checkpoint and the rows
after it, on resume), a cache of recent rows and states — and one ``on_<request>`` handler
per request type, each returning its reply or raising ``Refusal`` (a stable code and a
message). Every row goes through ``append`` (a ``protocol.events`` event) or, for the kinds
others record through ``record_event``, ``append_row``.

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

import array
import collections
import importlib.metadata
import logging
import os
from collections.abc import Callable
from typing import Any

import protocol
from actors.progress import progress_of
from actors.runtime.actor import ActorContext
from actors.runtime.bounded import BoundedDict
from actors.runtime.recorder_client import read_observation
from actors.runtime.steps import pipelined
from protocol import to_recorder as req
from protocol.events import (
    ActionAttempt,
    ActionResult,
    Event,
    Observation,
    ObservationError,
    OutcomeError,
    Proposal,
    ProposalStatus,
    RecorderResumed,
    RunIdentityChanged,
    RunIdentityUnavailable,
    SessionEnd,
    SessionStart,
    reserved_kinds,
)
from protocol.from_recorder import Finalized, IntentAck, ObservationStored, ProposalRecorded, Recorded, SnapshotReply
from protocol.journal import TornRow, iter_lines, rows_between

from . import checkpoint, files, summary
from .index import OUTCOMES, RECENT, Attempted, SessionIndex
from .writer import FaultPlan, JournalEnd, JournalWriter

log = logging.getLogger("recorder")

WISHES = ("execute", "wait", "suppressed", "stop")
RESERVED = reserved_kinds()  # appended only by the recorder itself, never through record_event
CACHE_ROWS = 4096
CACHE_STATES = 64


class Refusal(Exception):
    """A request the recorder will not carry out; ``serve`` turns it into a ``recorder_error``."""

    def __init__(self, code: str, message: str):
        super().__init__(message)
        self.code = code


class Recorder:
    """One session's capture: a new journal (``session_start``) or a resumed one."""

    def __init__(self, ctx: ActorContext):
        self.ctx = ctx
        self.root = ctx.capture_root
        self.sid = ctx.session_id
        self.dir = ctx.session_dir
        self.journal_path = os.path.join(self.dir, "events.jsonl")
        resume = os.path.exists(self.journal_path)
        faults = FaultPlan(ctx.setting("recorder.inject_failure"))
        self.index = SessionIndex()
        self.cache: collections.deque[dict] = collections.deque(maxlen=CACHE_ROWS)
        self.rows = 0  # rows in the journal
        self.marks = array.array("Q")  # offsets of rows 1, 1 + MARK_EVERY, ... (reading back from disk)
        self.torn: list[TornRow] = []  # torn lines the journal holds (found when resuming)
        self.checkpointed = 0  # rows covered by the last checkpoint
        self.states: collections.OrderedDict[str, dict] = collections.OrderedDict()
        self.finalized: dict | None = None
        self.orphans_after = 0
        self.durable_files: BoundedDict = BoundedDict(RECENT)  # observation files already fsynced
        self.undurable: list[str] = []  # observation files stored in the open group, fsynced by commit
        self.executable: str | None = None  # the newest ordinary executable proposal, not yet attempted
        self.decided: list[dict] = []  # decide rows of the open group, for ``after_group``
        if resume:
            end = self.replay()
            self.writer = JournalWriter(self.journal_path, self.sid, resume=True, faults=faults, end=end)
            self.resume(end)
        else:
            files.create_session_dir(self.root, self.sid)
            self.writer = JournalWriter(self.journal_path, self.sid, resume=False, faults=faults)
            files.make_session_durable(self.root, self.sid)  # before any row can be acknowledged
            self.start()

    # -- start and resume ---------------------------------------------------------------
    def start(self) -> None:
        outcome_dir = self.ctx.setting("capture.outcome_dir")
        baseline = files.list_outcome_dir(outcome_dir) if outcome_dir and os.path.isdir(outcome_dir) else None
        if baseline is not None:
            files.write_json_atomic(os.path.join(self.dir, "outcome_baseline.json"), baseline)
        self.append(
            SessionStart(
                gamerig_version=version(),
                protocol_version=f"{protocol.PROTOCOL_MAJOR}.{protocol.PROTOCOL_MINOR}",
                profile=self.ctx.profile,
                dry_run=bool(self.ctx.setting("session.dry_run", False)),
                max_steps=self.ctx.setting("session.max_steps"),
                game_backend=self.ctx.setting("game.backend"),
                capture_root=os.path.abspath(self.root),
            ),
            durable=True,
        )

    def replay(self) -> JournalEnd:
        """Rebuild the index from the last checkpoint and the rows after it (from every row
        when there is no checkpoint that matches the journal); where the journal ends."""
        cp = checkpoint.load(self.dir, self.sid, self.journal_path)
        point = checkpoint.Point.start()
        if cp is not None:
            self.index, self.torn, self.marks, point = cp.index, cp.torn, cp.marks, cp.point
            self.rows = self.checkpointed = point.rows
        sequence, digest, size, lines, ends_torn = point.sequence, point.digest, point.offset, point.lines, False
        for line in iter_lines(self.journal_path, offset=point.offset, number=point.lines):
            size, lines, ends_torn = line.offset + len(line.data) + line.terminated, line.number, not line.terminated
            if line.row is None:
                self.torn.append(TornRow(line.number, line.offset, len(line.data), line.sha256, line.terminated))
                continue
            self.remember(line.row, line.offset)
            sequence, digest = line.row.get("sequence", sequence), line.sha256
        return JournalEnd(sequence=int(sequence), digest=digest, size=size, lines=lines, ends_torn=ends_torn)

    def resume(self, end: JournalEnd) -> None:
        """A finalized session only serves reads; any other is continued after a
        ``recorder_resumed`` row naming the torn lines the journal holds."""
        if self.index.ended:  # finalized: serve reads, never append after session_end
            self.finalized = summary.read(self.dir)  # None: the summary is still to be written
            return
        torn = [
            {
                "line": t.line_number,
                "offset": t.offset,
                "length": t.length,
                "sha256": t.sha256,
                "terminated": t.terminated,
            }
            for t in self.torn
        ]
        self.append(
            RecorderResumed(start_count=self.ctx.start_count, resumed_after_sequence=end.sequence, torn_rows=torn),
            durable=True,
        )

    # -- rows -----------------------------------------------------------------------------
    def append(self, event: Event, *, durable: bool = False) -> dict:
        """Write ``event``'s row (fsynced before return when ``durable``, or at the group's
        commit) and apply it to the index; return the row. Raises ``JournalError``."""
        return self.append_row(event.to_row(), durable=durable)

    def append_row(self, fields: dict[str, Any], *, durable: bool = False) -> dict:
        """Write a row of any kind (``fields`` with its ``event``): the kinds others record
        through ``record_event``, which the recorder passes through as they come."""
        fields = dict(fields)
        row, offset = self.writer.append(fields.pop("event"), fields, durable=durable)
        self.remember(row, offset)
        if not self.writer.grouped:
            self.after_group()
        return row

    def after_group(self) -> None:
        """The work no reply waits for, kept off the replies' path: the ``decisions.jsonl``
        lines of the proposals decided and, every ``checkpoint.EVERY`` rows, the checkpoint.
        The server calls it once a group's replies are sent; outside a group, each append
        does."""
        decided, self.decided = self.decided, []
        for row in decided:
            try:
                files.append_feed(os.path.join(self.root, "decisions.jsonl"), row)
            except OSError as exc:  # a compatibility feed never stops the session
                log.error("decisions.jsonl append failed: %s", exc)
        if self.rows - self.checkpointed >= checkpoint.EVERY:
            self.write_checkpoint()

    def remember(self, row: dict, offset: int) -> None:
        self.index.apply(row)
        self.cache.append(row)
        if self.rows % checkpoint.MARK_EVERY == 0:
            self.marks.append(offset)
        self.rows += 1

    def write_checkpoint(self) -> None:
        """Persist the index as of the last row (a resume then reads only what follows)."""
        w = self.writer
        point = checkpoint.Point(
            rows=self.rows,
            lines=w.lines,
            offset=w.offset,
            row_offset=w.last_row_offset,
            sequence=w.sequence,
            digest=w.last_digest,
        )
        checkpoint.write(self.dir, self.sid, checkpoint.Checkpoint(point, self.index, self.torn, self.marks))
        self.checkpointed = self.rows

    def rows_after(self, after: int, limit: int) -> list[dict]:
        """Up to ``limit`` rows after sequence ``after``: from the cache, or from disk."""
        last = self.writer.sequence
        if after >= last:
            return []
        upto = min(last, after + limit)
        first_cached = self.cache[0]["sequence"] if self.cache else last + 1
        if after + 1 >= first_cached:
            start = after + 1 - first_cached
            return [self.cache[i] for i in range(start, start + upto - after)]
        return self.rows_from_disk(after + 1, upto)

    def rows_from_disk(self, first: int, last: int) -> list[dict]:
        """Rows ``first..last`` read back from the journal (torn lines skipped)."""
        return rows_between(self.journal_path, self.marks[(first - 1) // checkpoint.MARK_EVERY], first, last)

    def state_of(self, observation_id: str) -> dict | None:
        """The stored state of a recent observation (None when forgotten or unreadable)."""
        if observation_id in self.states:
            return self.states[observation_id]
        seen = self.index.observed.get(observation_id)
        if seen is None:
            return None
        try:
            return read_observation(self.root, self.observation_path(seen.observation_id))
        except (OSError, ValueError):
            return None

    def _cache_state(self, oid: str, state: dict) -> None:
        self.states[oid] = state
        while len(self.states) > CACHE_STATES:
            self.states.popitem(last=False)

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
            self._cache_state(oid, m.state)
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

    def make_durable_by_reply(self, relpath: str) -> None:
        """The observation file and its directory fsynced before the reply: by ``commit``
        inside a group (after the row went to its followers), else now."""
        if relpath in self.durable_files:
            return
        if self.writer.grouped:
            self.undurable.append(relpath)
        else:
            self.make_durable(relpath)

    def commit(self) -> None:
        """End the group: fsync the observation files stored in it (and their directory),
        then the journal's durable rows. Before any reply of the group is sent, so a stored
        observation is acknowledged, and an intent citing it recorded, only once its file is
        durable. Raises ``OSError`` / ``JournalError``."""
        pending, self.undurable = self.undurable, []
        try:
            for relpath in pending:
                self.make_durable(relpath)
        finally:
            self.writer.end_group()

    def make_durable(self, relpath: str) -> None:
        """fsync an observation file and its directory, once: before any intent citing it."""
        if relpath not in self.durable_files:
            files.make_durable(self.root, relpath)
            self.durable_files[relpath] = None

    def observation_path(self, observation_id: str) -> str:
        """The observation file's path, relative to the capture root (``o-000012`` is file 12)."""
        return files.observation_relpath(self.sid, int(observation_id.rsplit("-", 1)[-1]))

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


def version() -> str:
    try:
        return importlib.metadata.version("gamerig")
    except importlib.metadata.PackageNotFoundError:
        return "unknown"


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
