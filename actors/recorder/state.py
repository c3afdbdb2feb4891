"""The Recorder's state and how rows reach it; no request rules here (those are ``rules.py``'s).

A ``RecorderState`` is one session's capture as the recorder keeps it: the journal writer,
the ``SessionIndex`` rebuilt from rows (from the last checkpoint and the rows after it, on
resume), a cache of recent rows and states, the observation files still to fsync. It owns:

    start and resume  a new journal's ``session_start``, or the index replayed and a
                      ``recorder_resumed`` row naming the torn lines the journal holds
    rows              ``append`` / ``append_row`` (every row goes through them), the work
                      after a group (``decisions.jsonl`` lines, the checkpoint), rows read
                      back by sequence from the cache or the journal
    durability        observation files fsynced before a reply (``commit`` ends a group)

``rules.Recorder`` builds on it with one handler per request.
"""

from __future__ import annotations

import array
import collections
import importlib.metadata
import logging
import os
from typing import Any

import protocol
from actors.runtime.actor import ActorContext
from actors.runtime.bounded import BoundedDict
from actors.runtime.recorder_client import read_observation
from protocol.events import Event, RecorderResumed, SessionStart
from protocol.journal import TornRow, iter_lines, rows_between

from . import checkpoint, files, summary
from .index import RECENT, SessionIndex
from .writer import FaultPlan, JournalEnd, JournalWriter

log = logging.getLogger("recorder")

CACHE_ROWS = 4096
CACHE_STATES = 64


class RecorderState:
    """One session's capture: a new journal (``session_start``) or a resumed one, and the
    state the request rules read and change."""

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

    def cache_state(self, oid: str, state: dict) -> None:
        """Keep a stored observation's state for ``state_of`` (the newest ``CACHE_STATES``)."""
        self.states[oid] = state
        while len(self.states) > CACHE_STATES:
            self.states.popitem(last=False)

    # -- durability -----------------------------------------------------------------------
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


def version() -> str:
    try:
        return importlib.metadata.version("gamerig")
    except importlib.metadata.PackageNotFoundError:
        return "unknown"
