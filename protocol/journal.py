"""Journal rows on disk: schema v1, canonical encoding, the hash chain, and a reader.

One row is one line of canonical JSON (sorted keys, no spaces, UTF-8) ending in ``\\n``.
Every row carries ``prev_sha256``: the SHA-256 of the previous row's line (without its
newline); the first row carries ``GENESIS``. Editing, removing or reordering rows therefore
breaks the chain at the first damaged row; the session summary pins the last row's digest so
that truncation after the last row is detectable too.

The reader never raises on damage: it reports what it found (``JournalScan``) and leaves
the verdict to the verifier.
"""
from __future__ import annotations

import dataclasses
import hashlib
import json
from typing import Any

from .events import SCHEMA_VERSION  # noqa: F401  (re-exported: the writer's and readers' name)

GENESIS = "0" * 64

#: Fields every row has, in addition to ``event`` and the event's own fields.
COMMON_FIELDS = ("schema_version", "session", "sequence", "recorded_at", "ts", "event",
                 "prev_sha256")


def encode_row(row: dict[str, Any]) -> bytes:
    """The canonical line for ``row`` (without the trailing newline)."""
    return json.dumps(row, sort_keys=True, separators=(",", ":"), ensure_ascii=False,
                      allow_nan=False).encode("utf-8")


def line_digest(line: bytes) -> str:
    return hashlib.sha256(line).hexdigest()


@dataclasses.dataclass
class TornRow:
    """A line that is not a whole JSON row: cut off by a crash, or damaged."""
    line_number: int  # 1-based
    offset: int
    length: int
    sha256: str
    terminated: bool  # False when the file ends without a newline


@dataclasses.dataclass
class JournalScan:
    rows: list[dict[str, Any]]
    line_numbers: list[int]
    offsets: list[int]
    digests: list[str]
    torn: list[TornRow]
    size: int

    @property
    def last_digest(self) -> str:
        return self.digests[-1] if self.digests else GENESIS

    @property
    def last_sequence(self) -> int:
        return int(self.rows[-1]["sequence"]) if self.rows else 0

    @property
    def ends_torn(self) -> bool:
        return bool(self.torn) and not self.torn[-1].terminated


def scan_bytes(data: bytes) -> JournalScan:
    scan = JournalScan([], [], [], [], [], len(data))
    offset = 0
    number = 0
    while offset < len(data):
        number += 1
        end = data.find(b"\n", offset)
        terminated = end != -1
        if not terminated:
            end = len(data)
        line = data[offset:end]
        row = None
        if terminated:
            try:
                row = json.loads(line.decode("utf-8"))
            except (UnicodeDecodeError, ValueError, RecursionError):  # nesting too deep
                row = None
        if isinstance(row, dict):
            scan.rows.append(row)
            scan.line_numbers.append(number)
            scan.offsets.append(offset)
            scan.digests.append(line_digest(line))
        else:
            scan.torn.append(TornRow(number, offset, len(line), line_digest(line), terminated))
        offset = end + 1
    return scan


def scan_file(path: str) -> JournalScan:
    with open(path, "rb") as fh:
        return scan_bytes(fh.read())
