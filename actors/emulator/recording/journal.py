"""The hash-chained ``events.jsonl`` journal: record kinds, writer and verifying reader.

Every line is one JSON object::

    {"hash": H, "kind": K, "prev": <hash of line N-1 or 64 zeros>, "seq": N, ...fields}

where ``H = sha256(canonical JSON of the object without "hash")``. Canonical JSON sorts keys
and uses ``(",", ":")`` separators. Truncation, edits or reordering break the chain.

A *prefix pin* ``"v1:<seq>:<hash>"`` names the journal up to and including line ``seq``;
earlier pins stay valid after later appends.

A writer killed mid-line can leave a torn tail (bytes after the last newline). A writer
that later resumes the recording terminates it with a newline and appends a ``torn-tail``
event naming its byte offset and SHA-256; the reader then skips exactly that line.
Readers skip fields they do not know; kinds are only ever appended.

This is deliberately not the session journal's format (``protocol/events.py``, docs/emulator.md
"Journal" says why), but it is the same canonical encoding and digest: the row hash is
``protocol.journal.line_digest(encode_row(row without "hash"))``.
"""

from __future__ import annotations

import datetime as dt
import json
from dataclasses import dataclass, field
from pathlib import Path

from actors.runtime.durable import sync
from protocol.journal import GENESIS, encode_row, line_digest, read_lines

from .errors import RecordingCorrupt


def now() -> str:
    """UTC now, ISO 8601 with milliseconds and a ``Z``: every timestamp a recording, its
    ledger, lease or archive mapping writes."""
    return dt.datetime.now(dt.UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


# Record kinds (schema 1). Fields per kind are documented in docs/emulator.md.
HEADER = "header"  # first line: schema, writer, session, ROM, limits
INPUT = "input"  # a normalized action, written before the frames run
SAMPLE = "sample"  # a retained frame (PNG under frames/)
STEPPED = "stepped"  # the action's frames all ran
OBSERVATION = "observation"  # an observe() frame stored as evidence
CHECKPOINT = "checkpoint"  # a saved checkpoint and its file hash
BRANCH = "branch"  # a new branch (restore or resume) from a checkpoint
LOST_INTERVAL = "lost-interval"  # work after the newest checkpoint lost to a crash
TORN_TAIL = "torn-tail"  # acknowledges an incomplete line left by a killed writer
STOP = "stop"  # final status, outcome and reason
KINDS = (HEADER, INPUT, SAMPLE, STEPPED, OBSERVATION, CHECKPOINT, BRANCH, LOST_INTERVAL, TORN_TAIL, STOP)


#: The one canonical JSON encoding (sorted keys, ``,``/``:``, UTF-8; NaN refused).
canonical = encode_row


def row_hash(row: dict) -> str:
    """The hash a line carries: the digest of the canonical encoding of the rest of it."""
    return line_digest(encode_row({k: v for k, v in row.items() if k != "hash"}))


def make_pin(seq: int, head: str) -> str:
    return f"v1:{seq}:{head}"


def parse_pin(pin: str) -> tuple[int, str]:
    try:
        version, seq, head = pin.split(":")
        if version != "v1" or len(head) != 64:
            raise ValueError(pin)
        return int(seq), head
    except (ValueError, AttributeError) as exc:
        raise RecordingCorrupt("prefix pin", f"malformed pin {pin!r}") from exc


@dataclass
class JournalScan:
    """What a verified read found: events, chain head, and any torn tail."""

    events: list[dict] = field(default_factory=list)
    head: str = GENESIS
    seq: int = 0
    size: int = 0  # bytes including any torn tail
    torn_tail: tuple[int, bytes] | None = None  # (offset, bytes) after the last newline

    @property
    def pin(self) -> str:
        return make_pin(self.seq, self.head)


def _verify_line(path: Path, line: bytes, expect_seq: int, prev: str) -> dict:
    try:
        row = json.loads(line)
    except ValueError as exc:
        raise RecordingCorrupt(path, f"line {expect_seq} is not JSON") from exc
    if not isinstance(row, dict) or row.get("seq") != expect_seq:
        raise RecordingCorrupt(path, f"line {expect_seq} has seq {row.get('seq') if isinstance(row, dict) else None}")
    if row.get("prev") != prev:
        raise RecordingCorrupt(path, f"line {expect_seq} does not chain to the previous line")
    try:
        digest = row_hash(row)
    except ValueError:  # NaN or Infinity: never written by the one canonical encoding
        digest = None
    if row.get("hash") != digest:
        raise RecordingCorrupt(path, f"line {expect_seq} hash does not match its content")
    return row


def read_journal(path: Path) -> JournalScan:
    """Read and verify the whole chain, line by line (``protocol.journal.read_lines``); raise
    :class:`RecordingCorrupt` on any break."""
    scan = JournalScan()
    pending_torn = None
    with open(path, "rb") as fh:
        for line in read_lines(fh, parse=False):
            scan.size = line.offset + len(line.data) + line.terminated
            if not line.terminated:  # after the last newline: a torn tail
                scan.torn_tail = (line.offset, line.data)
                break
            if pending_torn is None:
                try:
                    row = _verify_line(path, line.data, scan.seq + 1, scan.head)
                except RecordingCorrupt:
                    pending_torn = (line.offset, line.data)
                    continue
            else:
                row = _verify_line(path, line.data, scan.seq + 1, scan.head)
                if (
                    row["kind"] != TORN_TAIL
                    or row.get("offset") != pending_torn[0]
                    or row.get("sha256") != line_digest(pending_torn[1])
                ):
                    raise RecordingCorrupt(path, f"unreadable line at byte {pending_torn[0]}")
                pending_torn = None
            scan.events.append(row)
            scan.seq, scan.head = row["seq"], row["hash"]
    if pending_torn is not None:
        raise RecordingCorrupt(path, f"unreadable line at byte {pending_torn[0]}")
    if not scan.events or scan.events[0].get("kind") != HEADER:
        raise RecordingCorrupt(path, "journal does not start with a header")
    return scan


def verify_pin(scan: JournalScan, pin: str) -> bool:
    """True when ``pin`` names a prefix of the scanned journal."""
    seq, head = parse_pin(pin)
    if seq == 0:
        return head == GENESIS
    return 0 < seq <= len(scan.events) and scan.events[seq - 1]["hash"] == head


class JournalWriter:
    """Append-only writer continuing a chain. ``append`` writes one whole line per call."""

    def __init__(self, path: Path, head: str = GENESIS, seq: int = 0):
        self.path = path
        self._fh = open(path, "ab", buffering=0)
        self.head, self.seq = head, seq
        self.bytes_written = 0
        self._pending: list[bytes] = []

    @property
    def pin(self) -> str:
        return make_pin(self.seq, self.head)

    def append(self, kind: str, fields: dict, *, defer: bool = False) -> dict:
        """Chain and write one line. ``defer=True`` holds it until the next write or ``flush``
        (used for a step's samples, which are written with its ``stepped`` line)."""
        row = {"seq": self.seq + 1, "kind": kind, "prev": self.head, **fields}
        body = encode_row(row)
        digest = line_digest(body)
        row["hash"] = digest
        line = b'{"hash":"' + digest.encode() + b'",' + body[1:] + b"\n"
        self._pending.append(line)
        if not defer:
            self.flush()
        self.seq, self.head = row["seq"], digest
        self.bytes_written += len(line)
        return row

    def flush(self) -> None:
        """Write deferred lines in one ``write`` call (whole lines only)."""
        if self._pending:
            data = b"".join(self._pending)
            self._pending.clear()
            self._fh.write(data)

    def write_raw(self, data: bytes) -> None:
        """Only for terminating a torn tail before a ``torn-tail`` event."""
        self.flush()
        self._fh.write(data)
        self.bytes_written += len(data)

    def sync(self) -> None:
        self.flush()
        sync(self._fh.fileno())

    def close(self) -> None:
        if not self._fh.closed:
            self.flush()
            self._fh.close()
