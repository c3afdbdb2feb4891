"""The journal writer: appends canonical, hash-chained rows to ``events.jsonl``.

A new session's journal is created exclusively. A resumed one (the recorder restarted)
continues from its ``JournalEnd`` (the recorder finds it from its checkpoint and the tail
after it): sequences and the hash chain continue from the last intact row, and a torn last line
is left exactly as it is — the writer only appends the newline that ends it, so the next row
starts on a line of its own. ``append(..., durable=True)`` fsyncs before returning — except
inside a group commit (``begin_group`` .. ``end_group``), where the one fsync happens at
``end_group``, and the caller sends no acknowledgement before that.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import errno
import os
import time
from typing import Any

from actors.runtime.durable import sync
from protocol.journal import GENESIS, SCHEMA_VERSION, JournalScan, encode_row, line_digest, scan_file


class JournalError(Exception):
    """The journal could not be written; nothing after this point may be acknowledged."""


class InjectedFailure(JournalError):
    """A failure the profile asked for; nothing was written, so the journal stays usable."""


def utc_now() -> str:
    return dt.datetime.now(dt.UTC).isoformat(timespec="microseconds").replace("+00:00", "Z")


class Stamps:
    """A row's ``recorded_at`` (as ``utc_now()`` gives it: microseconds floored, as
    ``datetime.now`` does) and ``ts`` (local time, ``%Y-%m-%d %H:%M:%S``) from one clock
    read; each second's two texts are formatted once (a row costs a clock read and one
    f-string, not two datetimes and a time-zone lookup)."""

    def __init__(self) -> None:
        self.second = None
        self.utc = self.local = ""

    def now(self) -> tuple[str, str]:
        second, micro = divmod(time.time_ns() // 1000, 1_000_000)
        if second != self.second:
            self.second = second
            self.utc = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(second))
            self.local = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(second))
        return f"{self.utc}.{micro:06d}Z", self.local


class FaultPlan:
    """Fault injection for tests of the durability rules (profile key
    ``recorder.inject_failure``; off unless the profile asks):

    * ``{event: action_attempt, nth: 2}`` — the Nth append of that event kind fails before
      anything is written (``InjectedFailure``; the journal stays usable);
    * ``{event: fsync, nth: 3}`` — the Nth fsync of the journal fails after its rows were
      written, as a failing disk's would (the journal is unusable from then on).
    """

    FSYNC = "fsync"

    def __init__(self, spec: dict | None):
        spec = spec or {}
        self.event = spec.get("event")
        self.nth = int(spec.get("nth", 1))
        self.seen = 0

    def check(self, event: str) -> None:
        if self.event != event:
            return
        self.seen += 1
        if self.seen == self.nth:
            raise InjectedFailure(f"injected failure on {event} #{self.nth}")

    def check_fsync(self) -> None:
        """Raises ``OSError`` (EIO) when this is the fsync the plan fails."""
        if self.event != self.FSYNC:
            return
        self.seen += 1
        if self.seen == self.nth:
            raise OSError(errno.EIO, f"injected fsync failure #{self.nth}")


@dataclasses.dataclass(frozen=True)
class JournalEnd:
    """Where an existing journal continues: its last row's sequence and digest, its size in
    bytes, its number of lines, and whether its last line is torn and unterminated."""

    sequence: int
    digest: str
    size: int
    lines: int
    ends_torn: bool

    @classmethod
    def of_scan(cls, scan: JournalScan, lines: int) -> JournalEnd:
        return cls(scan.last_sequence, scan.last_digest, scan.size, lines, scan.ends_torn)


class JournalWriter:
    """Appends rows to a new journal, or (``resume``) to an existing one from its ``end``
    (found by a full scan when not given)."""

    def __init__(
        self,
        path: str,
        session_id: str,
        *,
        resume: bool,
        faults: FaultPlan | None = None,
        end: JournalEnd | None = None,
    ):
        self.path = path
        self.session_id = session_id
        self.faults = faults or FaultPlan(None)
        self.last_row_offset = -1  # where the last appended row's line starts
        if resume and os.path.exists(path):
            if end is None:
                scan = scan_file(path)
                end = JournalEnd.of_scan(scan, len(scan.rows) + len(scan.torn))
            self.sequence, self.last_digest = end.sequence, end.digest
            self.offset, self.lines = end.size, end.lines
            self.fd = os.open(path, os.O_WRONLY | os.O_APPEND)
            if end.ends_torn:
                os.write(self.fd, b"\n")
                self.offset += 1
            sync(self.fd)  # the rows it adopts (some perhaps never fsynced) are durable first
        else:
            self.sequence, self.last_digest, self.offset, self.lines = 0, GENESIS, 0, 0
            self.fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_EXCL, 0o644)
        self.broken: str | None = None
        self._grouped = False
        self._sync_due = False
        self._stamps = Stamps()

    def check_usable(self) -> None:
        """Raises ``JournalError`` once an append or fsync has failed: from then on nothing is
        acknowledged, not even a repeat answered from rows already written (they may not be
        durable)."""
        if self.broken:
            raise JournalError(f"journal unusable after an earlier failure: {self.broken}")

    @property
    def grouped(self) -> bool:
        """Whether a group commit is open (durable appends wait for ``end_group``)."""
        return self._grouped

    def begin_group(self) -> None:
        """Durable appends from here on share one fsync, done by ``end_group``."""
        self._grouped = True

    def end_group(self) -> None:
        """fsync once if a durable append is pending. Raises ``JournalError``."""
        self._grouped = False
        if self._sync_due:
            self._sync_due = False
            try:
                self._fsync()
            except OSError as exc:
                self.broken = str(exc)
                raise JournalError(f"fsync of the journal failed: {exc}") from exc

    def append(self, event: str, fields: dict[str, Any], *, durable: bool = False) -> tuple[dict, int]:
        """Append one row; return it and its byte offset. Raises ``JournalError``."""
        self.check_usable()
        self.faults.check(event)
        row = dict(fields)
        recorded_at, ts = self._stamps.now()
        row.update(
            schema_version=SCHEMA_VERSION,
            session=self.session_id,
            sequence=self.sequence + 1,
            recorded_at=recorded_at,
            ts=ts,
            event=event,
            prev_sha256=self.last_digest,
        )
        line = encode_row(row)
        try:
            written = os.write(self.fd, line + b"\n")
            if written != len(line) + 1:
                raise OSError(f"short write: {written} of {len(line) + 1} bytes")
            if durable and self._grouped:
                self._sync_due = True
            elif durable:
                self._fsync()
        except OSError as exc:
            self.broken = str(exc)
            raise JournalError(f"appending {event} failed: {exc}") from exc
        offset = self.offset
        self.offset += len(line) + 1
        self.lines += 1
        self.last_row_offset = offset
        self.sequence += 1
        self.last_digest = line_digest(line)
        return row, offset

    def _fsync(self) -> None:
        self.faults.check_fsync()
        sync(self.fd)

    def sync(self) -> None:
        sync(self.fd)

    def close(self) -> None:
        """fsync and close the journal (a second close does nothing)."""
        if self.fd < 0:
            return
        try:
            sync(self.fd)
        finally:
            os.close(self.fd)
            self.fd = -1
