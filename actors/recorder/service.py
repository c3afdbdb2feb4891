"""The recorder's request handlers and its serving loop.

The recorder binds a ROUTER. Each request gets exactly one reply; a failure becomes a
``recorder_error`` reply in exactly one place (``_dispatch``), with a stable code. Follow
requests with nothing to return are parked until rows are appended or they time out.
"""
from __future__ import annotations

import array
import collections
import dataclasses
import json
import logging
import os
import time
from typing import Any, Callable

import zmq

import protocol
from protocol.errors import ProtocolError
from actors.runtime.actor import ActorContext
from actors.runtime.transport import decode_or_count, send_envelope
from protocol import to_recorder as req
from protocol.from_recorder import (BatchReplies, Finalized, IntentAck, ObservationStored, ProposalRecorded,
                                    RecorderError, Recorded, Rows, SnapshotReply)

from . import files
from actors.runtime.bounded import BoundedDict

from .index import OUTCOMES, SessionIndex
from .writer import FaultPlan, InjectedFailure, JournalError, JournalWriter

log = logging.getLogger("recorder")

WISHES = ("execute", "wait", "suppressed", "stop")
RESERVED = {"session_start", "observation", "observation_error", "proposal", "proposal_status",
            "action_attempt", "action_result", "session_end", "run_identity_changed",
            "run_identity_unavailable", "recorder_resumed", "tap_write_refused"}
CACHE_ROWS = 4096
CACHE_STATES = 64
BATCH = 64  # requests taken off the socket before one group fsync and the replies
GROUPED = (req.StoreObservation, req.ReportObservationError, req.RecordProposal, req.RecordIntent,
           req.RecordResult, req.RecordEvent)  # and batches of them



class Refusal(Exception):
    """A request the recorder will not carry out; becomes a ``recorder_error`` reply."""

    def __init__(self, code: str, message: str):
        super().__init__(message)
        self.code = code


class Recorder:
    def __init__(self, ctx: ActorContext):
        self.ctx = ctx
        self.root = ctx.capture_root
        self.sid = ctx.session_id
        self.dir = ctx.session_dir
        self.journal_path = os.path.join(self.dir, "events.jsonl")
        resume = os.path.exists(self.journal_path)
        if not resume:
            files.create_session_dir(self.root, self.sid)
        faults = FaultPlan(ctx.setting("recorder.inject_failure"))
        self.writer = JournalWriter(self.journal_path, self.sid, resume=resume, faults=faults)
        self.index = SessionIndex()
        self.cache: collections.deque[dict] = collections.deque(maxlen=CACHE_ROWS)
        self.offsets = array.array("Q")
        self.states: collections.OrderedDict[str, dict] = collections.OrderedDict()
        self.parked: list[tuple[list[bytes], str, req.Follow, float]] = []
        self.finalized: dict | None = None
        self._orphans_after = 0
        self._durable_files: BoundedDict = BoundedDict()  # observation files already fsynced
        self.writers = self.handlers()  # the writer endpoint's table, for requests and batch items
        if resume:
            self._replay()
        else:
            self._start()

    # -- start and resume ---------------------------------------------------------------
    def _start(self) -> None:
        outcome_dir = self.ctx.setting("capture.outcome_dir")
        baseline = files.list_outcome_dir(outcome_dir) if outcome_dir and os.path.isdir(outcome_dir) else None
        if baseline is not None:
            files.write_json_atomic(os.path.join(self.dir, "outcome_baseline.json"), baseline)
        self.append("session_start", {
            "gamerig_version": _version(), "protocol_version": f"{protocol.PROTOCOL_MAJOR}.{protocol.PROTOCOL_MINOR}",
            "profile": self.ctx.profile, "dry_run": bool(self.ctx.setting("session.dry_run", False)),
            "max_steps": self.ctx.setting("session.max_steps"),
            "game_backend": self.ctx.setting("game.backend"),
            "capture_root": os.path.abspath(self.root),
        }, durable=True)

    def _replay(self) -> None:
        scan = self.writer.scan
        assert scan is not None
        for row, offset in zip(scan.rows, scan.offsets):
            self._remember(row, offset)
        if self.index.ended:  # finalized: serve reads, never append after session_end
            self.finalized = self._read_summary()  # None: the summary is still to be written
            return
        torn = [{"line": t.line_number, "offset": t.offset, "length": t.length,
                 "sha256": t.sha256, "terminated": t.terminated} for t in self.writer.torn_at_resume]
        self.append("recorder_resumed", {
            "start_count": self.ctx.start_count, "resumed_after_sequence": scan.last_sequence,
            "torn_rows": torn}, durable=True)

    def _read_summary(self) -> dict | None:
        try:
            with open(os.path.join(self.dir, "session.json"), encoding="utf-8") as fh:
                return json.load(fh)
        except (OSError, ValueError):
            return None

    # -- appending ----------------------------------------------------------------------
    def append(self, event: str, fields: dict[str, Any], *, durable: bool = False) -> dict:
        row, offset = self.writer.append(event, fields, durable=durable)
        self._remember(row, offset)
        return row

    def _remember(self, row: dict, offset: int) -> None:
        self.index.apply(row)
        self.cache.append(row)
        self.offsets.append(offset)

    def rows_after(self, after: int, limit: int) -> list[dict]:
        last = self.writer.sequence
        if after >= last:
            return []
        upto = min(last, after + limit)
        first_cached = self.cache[0]["sequence"] if self.cache else last + 1
        if after + 1 >= first_cached:
            start = after + 1 - first_cached
            return [self.cache[i] for i in range(start, start + upto - after)]
        return self._rows_from_disk(after + 1, upto)

    def _rows_from_disk(self, first: int, last: int) -> list[dict]:
        out = []
        with open(self.journal_path, "rb") as fh:
            fh.seek(self.offsets[first - 1])
            while len(out) < last - first + 1:
                line = fh.readline()
                if not line:
                    break
                try:
                    row = json.loads(line)
                except ValueError:
                    continue  # a torn line left by an earlier crash
                if isinstance(row, dict) and first <= row.get("sequence", 0) <= last:
                    out.append(row)
        return out

    def state_of(self, observation_id: str) -> dict | None:
        if observation_id in self.states:
            return self.states[observation_id]
        row = self.index.observation_rows.get(observation_id)
        if row is None:
            return None
        try:
            return files.read_observation(self.root, row["path"])
        except (OSError, ValueError):
            return None

    def _cache_state(self, oid: str, state: dict) -> None:
        self.states[oid] = state
        while len(self.states) > CACHE_STATES:
            self.states.popitem(last=False)

    def _check_open(self) -> None:
        if self.finalized is not None or self.index.ended is not None:
            raise Refusal("session_finalized", "the session is finalized; nothing more is recorded")

    # -- handlers -----------------------------------------------------------------------
    def on_store_observation(self, m: req.StoreObservation) -> ObservationStored:
        done = self.index.reads.get(m.read_id)
        if done is None:
            self._check_open()
            number, relpath = self._next_observation_file()
            oid = f"o-{number:06d}"
            sha = files.write_observation(self.root, relpath, m.state)
            step = self.index.observations + 1
            state_type = m.state.get("state_type")
            fields = {"observation_id": oid, "path": relpath, "sha256": sha, "step": step,
                      "phase": m.phase, "state_type": state_type if isinstance(state_type, str) else None,
                      "read_id": m.read_id, "read_ms": m.read_ms}
            if self.index.awaiting_after_attempt:
                fields["after_attempt_id"] = self.index.awaiting_after_attempt
            if m.identity is not None:
                fields["run_identity"] = m.identity
            done = self.append("observation", fields)
            self._cache_state(oid, m.state)
            if m.identity is not None:
                self._identity_rows(oid, m.identity)
        return ObservationStored(reply_to="", observation_id=done["observation_id"],
                                 sequence=done["sequence"], path=done["path"],
                                 sha256=done["sha256"], step=done["step"])

    def _next_observation_file(self) -> tuple[int, str]:
        """The next free observation number. A recorder that died between writing a file
        and its row leaves an orphan file: it is never overwritten, its number is skipped."""
        number = max(self.index.last_observation_number, self._orphans_after) + 1
        relpath = files.observation_relpath(self.sid, number)
        while os.path.exists(os.path.join(self.root, relpath)):
            number += 1
            relpath = files.observation_relpath(self.sid, number)
        self._orphans_after = number
        return number, relpath

    def _identity_rows(self, oid: str, ident: dict) -> None:
        """Identity changes and identity failures are rows of their own."""
        if ident.get("status") == "ok" and isinstance(ident.get("run_id"), str):
            if ident["run_id"] != self.index.last_run_id:
                self.append("run_identity_changed", {
                    "observation_id": oid, "previous_run_id": self.index.last_run_id,
                    "run_id": ident["run_id"], "seed": ident.get("seed")})
        else:
            self.append("run_identity_unavailable", {
                "observation_id": oid, "status": ident.get("status"),
                "detail": ident.get("error") or ident.get("reason"),
                "last_known_run_id": self.index.last_run_id})

    def on_report_observation_error(self, m: req.ReportObservationError) -> Recorded:
        self._check_open()
        row = self.append("observation_error", {
            "read_id": m.read_id, "error": m.error, "error_type": m.error_type,
            "last_observation_id": self.index.last_observation_id})
        return Recorded(reply_to="", sequence=row["sequence"])

    def on_record_proposal(self, m: req.RecordProposal) -> ProposalRecorded:
        if m.proposal_id in self.index.proposals:
            if m.proposal_id in self.index.dispositions:
                return ProposalRecorded(reply_to="", proposal_id=m.proposal_id,
                                        disposition=self.index.dispositions[m.proposal_id],
                                        sequence=self.index.proposals[m.proposal_id]["sequence"])
            self._check_open()  # the recorder died between the proposal and its status
            return self._record_status(m, dict(self.index.proposals[m.proposal_id]))
        self._check_open()
        if m.observation_id not in self.index.observation_rows:
            raise Refusal("unknown_observation", f"no observation {m.observation_id!r} in this session")
        if m.wish not in WISHES:
            raise Refusal("bad_wish", f"wish {m.wish!r} is not one of {', '.join(WISHES)}")
        if m.wish == "execute" and not m.action:
            raise Refusal("bad_proposal", "an executable proposal needs an action")
        fields = dict(m.extra or {})
        fields.update(proposal_id=m.proposal_id, observation_id=m.observation_id, action=m.action,
                      parameters=m.parameters, reason=m.reason, source=m.source,
                      decide_ms=m.decide_ms)
        if m.model_evidence is not None:
            fields["model_evidence"] = m.model_evidence
        self.append("proposal", fields)
        return self._record_status(m, fields)

    def _record_status(self, m: req.RecordProposal, fields: dict) -> ProposalRecorded:
        status = self._disposition(m.wish)
        status_fields = {"proposal_id": m.proposal_id, "status": status}
        if m.wish == "stop":
            status_fields["stop_reason"] = m.reason
        elif status == "session_stopped":
            status_fields["stop_reason"] = self.index.stopping
        row = self.append("proposal_status", status_fields)
        if status in ("execute", "dry_run"):
            self._decide_feed(fields, status)
        return ProposalRecorded(reply_to="", proposal_id=m.proposal_id, disposition=status,
                                sequence=row["sequence"])

    def _disposition(self, wish: str) -> str:
        if wish == "stop" or (wish == "execute" and self.index.stopping):
            return "session_stopped"
        if wish == "execute" and self.ctx.setting("session.dry_run", False):
            return "dry_run"
        return wish

    def _decide_feed(self, fields: dict, status: str) -> None:
        row = {k: v for k, v in fields.items() if k != "model_evidence"}
        row.update(event="decide", session=self.sid, disposition=status,
                   recorded_at=self.cache[-1]["recorded_at"])
        try:
            files.append_feed(os.path.join(self.root, "decisions.jsonl"), row)
        except OSError as exc:  # a compatibility feed never stops the session
            log.error("decisions.jsonl append failed: %s", exc)

    def on_record_intent(self, m: req.RecordIntent) -> IntentAck:
        prop = self.index.proposals.get(m.proposal_id)
        if prop is None:
            raise Refusal("unknown_proposal", f"no proposal {m.proposal_id!r} in this session")
        self._check_open()  # never an acknowledgement after session_end, not even a repeat
        existing = self.index.attempt_by_proposal.get(m.proposal_id)
        if existing is not None:
            att = self.index.attempts.get(existing)
            if att is None or existing in self.index.results or att.get("requester") != m.requester:
                raise Refusal("attempt_exists",
                              f"proposal {m.proposal_id!r} already has attempt {existing!r}; "
                              "it is never sent twice")
            return self._ack(att)
        if self.index.dispositions.get(m.proposal_id) != "execute":
            raise Refusal("not_executable", f"proposal {m.proposal_id!r} has disposition "
                          f"{self.index.dispositions.get(m.proposal_id)!r}, not execute")
        if self.index.stopping:
            raise Refusal("session_stopping", f"the session is stopping ({self.index.stopping})")
        obs = self.index.observation_rows.get(prop["observation_id"])
        if obs is None:
            raise Refusal("stale_proposal", f"proposal {m.proposal_id!r} is too old to act on")
        if obs["path"] not in self._durable_files:
            files.make_durable(self.root, obs["path"])
            self._durable_files[obs["path"]] = None
        number = self.index.attempt_count + 1
        att = self.append("action_attempt", {
            "attempt_id": f"a-{number:06d}", "proposal_id": m.proposal_id,
            "observation_id": prop["observation_id"], "action": prop["action"],
            "parameters": prop["parameters"], "requester": m.requester}, durable=True)
        return self._ack(att)

    @staticmethod
    def _ack(att: dict) -> IntentAck:
        return IntentAck(reply_to="", attempt_id=att["attempt_id"], proposal_id=att["proposal_id"],
                         action=att["action"], parameters=att["parameters"], sequence=att["sequence"])

    def on_record_result(self, m: req.RecordResult) -> Recorded:
        done = self.index.results.get(m.attempt_id)
        if done is not None:
            return Recorded(reply_to="", sequence=done["sequence"])
        self._check_open()
        if m.attempt_id not in self.index.unresolved:
            raise Refusal("unknown_attempt", f"no attempt {m.attempt_id!r} awaits a result")
        if m.outcome not in OUTCOMES:
            raise Refusal("bad_outcome", f"outcome {m.outcome!r} is not one of {', '.join(OUTCOMES)}")
        row = self.append("action_result", {
            "attempt_id": m.attempt_id, "outcome": m.outcome, "http_status": m.http_status,
            "response": m.response, "error": m.error, "request_ms": m.request_ms}, durable=True)
        return Recorded(reply_to="", sequence=row["sequence"])

    def on_record_event(self, m: req.RecordEvent) -> Recorded:
        if m.key and m.key in self.index.event_keys:
            return Recorded(reply_to="", sequence=self.writer.sequence)
        if m.event in RESERVED:
            raise Refusal("reserved_event", f"{m.event!r} is recorded only through its own request")
        self._check_open()
        fields = dict(m.fields)
        if m.key:
            fields["event_key"] = m.key
        row = self.append(m.event, fields)
        return Recorded(reply_to="", sequence=row["sequence"])

    def on_finalize(self, m: req.Finalize) -> Finalized:
        if self.finalized is None:
            from .summary import finalize
            self.finalized = finalize(self, m.reason, m.exit_code)
        return Finalized(reply_to="", summary=self.finalized)

    # -- serving ------------------------------------------------------------------------
    def handlers(self) -> dict[type, Callable]:
        return {req.StoreObservation: self.on_store_observation,
                req.ReportObservationError: self.on_report_observation_error,
                req.RecordProposal: self.on_record_proposal,
                req.RecordIntent: self.on_record_intent,
                req.RecordResult: self.on_record_result,
                req.RecordEvent: self.on_record_event,
                req.RecordBatch: self.on_batch,
                req.Finalize: self.on_finalize}

    def on_snapshot(self, m: req.Snapshot) -> SnapshotReply:
        return SnapshotReply(reply_to="", last_sequence=self.writer.sequence, summary=self.snapshot())

    def snapshot(self) -> dict:
        idx = self.index
        return {"session": self.sid, "steps": idx.observations, "events": dict(idx.counts),
                "dispositions": dict(idx.statuses), "action_results": dict(idx.outcomes),
                "attempts": idx.attempt_count, "unresolved_attempts": idx.unresolved_attempts(),
                "actor_restarts": dict(idx.restarts), "model_usage": dict(idx.model_usage),
                "stopping": idx.stopping, "finalized": self.finalized is not None}

    def serve(self) -> None:
        """Serve the writers' endpoint and the read-only stream endpoint taps attach to."""
        sock = self._bind("recorder")
        stream = self._bind("stream") if "stream" in self.ctx.endpoints else None
        writers = self.writers
        readers = {req.Snapshot: self.on_snapshot}
        poller = zmq.Poller()
        for s in (sock, stream):
            if s is not None:
                poller.register(s, zmq.POLLIN)
        self.ctx.status["sequence"] = self.writer.sequence
        while not self.ctx.stopping.is_set():
            timeout = 200
            if self.parked:
                timeout = max(1, min(timeout, int((min(p[4] for p in self.parked) - time.monotonic()) * 1000)))
            ready = dict(poller.poll(timeout))
            if sock in ready:
                self._serve_batch(sock, writers)
            if stream is not None and stream in ready:
                answer = self._dispatch(stream, stream.recv_multipart(), readers, read_only=True)
                if answer is not None:
                    self._reply(stream, *answer)
            self._serve_parked()
            self.ctx.status["sequence"] = self.writer.sequence
        for s in (sock, stream):
            if s is not None:
                s.close(0)
        self.writer.close()

    def _bind(self, name: str) -> zmq.Socket:
        s = self.ctx.zctx.socket(zmq.ROUTER)
        s.setsockopt(zmq.LINGER, 0)
        s.bind(self.ctx.endpoints[name])
        return s

    def _reply(self, sock: zmq.Socket, routing: list[bytes], body) -> None:
        send_envelope(sock, body, session=self.sid, sender="recorder", routing=routing)

    def _serve_batch(self, sock: zmq.Socket, writers: dict) -> None:
        """Group commit: answer up to ``BATCH`` waiting requests with one fsync for all the
        durable rows among them, and send no reply before that fsync (a failed fsync turns
        every reply that waited for it into ``journal_failed``)."""
        unsynced: list[tuple[list[bytes], object]] = []
        synced: list[tuple[list[bytes], object]] = []
        self.writer.begin_group()
        try:
            for _ in range(BATCH):
                try:
                    frames = sock.recv_multipart(zmq.NOBLOCK)
                except zmq.Again:
                    break
                answer = self._dispatch(sock, frames, writers)
                if answer is not None:
                    unsynced.append(answer)
            self.writer.end_group()
            synced.extend(unsynced)
        except JournalError as exc:  # the fsync failed: nothing that waited for it is acknowledged
            log.error("%s", exc)
            self.ctx.request_stop("journal_failed", str(exc))
            synced.extend((routing, RecorderError(reply_to=reply.reply_to, code="journal_failed",
                                                  message=str(exc)))
                          for routing, reply in unsynced)
        for routing, reply in synced:
            self._reply(sock, routing, reply)

    def _dispatch(self, sock: zmq.Socket, frames: list[bytes], handlers: dict,
                  read_only: bool = False) -> tuple[list[bytes], object] | None:
        """Decode and answer one request: ``(routing, reply)`` to send, or None when there
        is nothing to send now (an undecodable frame, or a follow parked until rows come)."""
        routing, data = frames[:-1], frames[-1]
        env = decode_or_count(data, self.ctx.counters, "stream" if read_only else "recorder")
        if env is None:
            return None
        if isinstance(env.body, req.Follow) and env.body.after >= 0:
            self.parked.append((sock, routing, env.id, env.body,
                                time.monotonic() + min(env.body.wait_ms, 60_000) / 1000))
            return None
        if not isinstance(env.body, (*GROUPED, req.RecordBatch)):  # finalizing writes its files in order: no deferred fsync
            self.writer.end_group()
        if isinstance(env.body, req.Follow):
            reply = RecorderError(reply_to=env.id, code="bad_cursor",
                                  message=f"follow after {env.body.after}: must be >= 0")
        elif type(env.body) not in handlers and read_only:
            self._refuse_write(env)
            reply = RecorderError(reply_to=env.id, code="read_only",
                                  message=f"the stream endpoint is read-only; {env.type!r} refused")
        else:
            reply = self._answer(env.body, env.type, handlers)
        return routing, dataclasses.replace(reply, reply_to=env.id)

    def _answer(self, body, type_name: str, handlers: dict):
        """One request's reply (``reply_to`` left for the caller); failures become
        ``recorder_error`` replies here and nowhere else."""
        handler = handlers.get(type(body))
        try:
            if handler is None:
                raise Refusal("unexpected_type", f"the recorder does not take {type_name!r}")
            return handler(body)
        except Refusal as exc:
            return RecorderError(reply_to="", code=exc.code, message=str(exc))
        except InjectedFailure as exc:
            self.ctx.request_stop("journal_failed", str(exc))
            return RecorderError(reply_to="", code="journal_failed", message=str(exc))
        except JournalError as exc:
            log.error("%s", exc)
            self.ctx.request_stop("journal_failed", str(exc))
            return RecorderError(reply_to="", code="journal_failed", message=str(exc))
        except OSError as exc:
            self.ctx.request_stop("storage_failed", str(exc))
            return RecorderError(reply_to="", code="storage_failed", message=str(exc))
        except (ValueError, TypeError, OverflowError) as exc:  # a value JSON cannot hold
            return RecorderError(reply_to="", code="bad_request", message=f"{type_name}: {exc}")

    def on_batch(self, m: req.RecordBatch) -> BatchReplies:
        """Each item answered as if sent alone, in order (see ``RecordBatch``)."""
        out = []
        for n, item in enumerate(m.items):
            name = item.get("type")
            try:
                cls = protocol.message.lookup(name)
                if cls not in GROUPED:
                    raise Refusal("bad_batch_item", f"items[{n}]: {name!r} cannot be batched")
                reply = self._answer(cls.from_body(item.get("body")), name, self.writers)
            except ProtocolError as exc:
                reply = RecorderError(reply_to="", code="bad_request", message=f"items[{n}]: {exc}")
            except Refusal as exc:
                reply = RecorderError(reply_to="", code=exc.code, message=str(exc))
            out.append(reply.to_item())
        return BatchReplies(reply_to="", items=out)

    def _refuse_write(self, env) -> None:
        """Record a write attempted on the read-only endpoint (a tap overstepping)."""
        if self.finalized is None:
            try:
                self.append("tap_write_refused", {"request": env.type, "sender": env.sender})
            except JournalError as exc:
                log.error("%s", exc)

    def _serve_parked(self) -> None:
        now = time.monotonic()
        keep = []
        for sock, routing, msg_id, follow, deadline in self.parked:
            rows = self.rows_after(follow.after, max(1, min(follow.max_rows, 1024)))
            if rows or now >= deadline:
                states = None
                if follow.with_states:
                    states = {r["observation_id"]: s for r in rows if r["event"] == "observation"
                              for s in [self.state_of(r["observation_id"])] if s is not None}
                try:
                    self._reply(sock, routing, Rows(reply_to=msg_id, rows=rows,
                                                    last_sequence=self.writer.sequence, states=states))
                except ProtocolError:  # too big for one frame: send the rows without states
                    self._reply(sock, routing, Rows(reply_to=msg_id, rows=rows[:1],
                                                    last_sequence=self.writer.sequence))
            else:
                keep.append((sock, routing, msg_id, follow, deadline))
        self.parked = keep


def _version() -> str:
    try:
        from importlib.metadata import version
        return version("gamerig")
    except Exception:
        return "unknown"

