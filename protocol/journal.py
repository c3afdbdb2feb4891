"""Journal rows on disk: schema v1, canonical encoding, the hash chain, and a reader.

One row is one line of canonical JSON (sorted keys, no spaces, UTF-8) ending in ``\\n``.
Every row carries ``prev_sha256``: the SHA-256 of the previous row's line (without its
newline); the first row carries ``GENESIS``. Editing, removing or reordering rows therefore
breaks the chain at the first damaged row; the session summary pins the last row's digest so
that truncation after the last row is detectable too.

The ONE reader of JSONL journals and feeds is ``read_lines`` / ``iter_lines``: line by line
from a byte offset, each line with its number, offset, bytes, digest and parsed row, never
the whole file in memory. ``scan_bytes`` / ``scan_file`` (the recorder's resume),
``rows_between`` (the recorder's follow-from-disk) and the verifier
(``supervisor/capture``) stand on it. It never raises on damage: it reports what it found
and leaves the verdict to the verifier.
"""

from __future__ import annotations

import dataclasses
import hashlib
import io
import json
import os
from collections.abc import Iterable, Iterator
from typing import Any, BinaryIO

from .events import SCHEMA_VERSION as SCHEMA_VERSION  # re-exported: the writer's and readers' name

GENESIS = "0" * 64

#: Fields every row has, in addition to ``event`` and the event's own fields.
COMMON_FIELDS = ("schema_version", "session", "sequence", "recorded_at", "ts", "event", "prev_sha256")


def encode_row(row: dict[str, Any]) -> bytes:
    """The canonical line for ``row`` (without the trailing newline)."""
    return json.dumps(row, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False).encode("utf-8")


def is_int(value: object) -> bool:
    """A row's value is a whole number (JSON's ``true`` reads as a Python bool, which is an
    int: it is not one here)."""
    return isinstance(value, int) and not isinstance(value, bool)


def line_digest(line: bytes) -> str:
    return hashlib.sha256(line).hexdigest()


@dataclasses.dataclass
class Line:
    """One line of a JSONL file. ``data`` excludes the newline; ``row`` is the parsed object
    when the line is terminated and is a JSON object (and parsing was asked for), else None."""

    number: int  # 1-based (relative to the line before the start offset, when one was given)
    offset: int
    data: bytes
    terminated: bool
    row: dict[str, Any] | None

    @property
    def sha256(self) -> str:
        return line_digest(self.data)


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


def parse_line(data: bytes) -> dict[str, Any] | None:
    """The JSON object a line holds, or None (not UTF-8, not JSON, not an object)."""
    try:
        row = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError):  # RecursionError: nested too deep
        return None
    return row if isinstance(row, dict) else None


def read_lines(fh: BinaryIO, *, offset: int = 0, number: int = 0, parse: bool = True) -> Iterator[Line]:
    """THE journal reader: every line of the binary file ``fh`` from its current position
    (``offset`` bytes into the file, after ``number`` lines), one line in memory at a time.
    An unterminated last line is yielded with ``terminated=False`` and ``row=None`` (it is
    torn, whatever it holds). With ``parse=False`` no line is parsed (``row`` is None)."""
    for raw in fh:
        number += 1
        terminated = raw.endswith(b"\n")
        data = raw[:-1] if terminated else raw
        yield Line(number, offset, data, terminated, parse_line(data) if terminated and parse else None)
        offset += len(raw)


def iter_lines(path: str, *, offset: int = 0, number: int = 0, parse: bool = True) -> Iterator[Line]:
    """``read_lines`` over the file at ``path``, starting ``offset`` bytes in."""
    with open(path, "rb") as fh:
        fh.seek(offset)
        yield from read_lines(fh, offset=offset, number=number, parse=parse)


def rows_between(path: str, offset: int, first: int, last: int) -> list[dict[str, Any]]:
    """The rows with ``first <= sequence <= last``, reading from ``offset`` (the byte offset
    of row ``first``, or of any earlier line); torn lines are skipped. For a reader that
    keeps each row's offset (the recorder's follow-from-disk)."""
    out: list[dict[str, Any]] = []
    want = last - first + 1
    for line in iter_lines(path, offset=offset):
        row = line.row
        if row is None:
            continue
        seq = row.get("sequence", 0)
        if isinstance(seq, int) and first <= seq <= last:
            out.append(row)
            if len(out) >= want:
                break
    return out


def scan_lines(lines: Iterable[Line], size: int) -> JournalScan:
    """Rows and torn lines, with their line numbers, offsets and digests."""
    scan = JournalScan([], [], [], [], [], size)
    for line in lines:
        if line.row is not None:
            scan.rows.append(line.row)
            scan.line_numbers.append(line.number)
            scan.offsets.append(line.offset)
            scan.digests.append(line.sha256)
        else:
            scan.torn.append(TornRow(line.number, line.offset, len(line.data), line.sha256, line.terminated))
    return scan


def scan_bytes(data: bytes) -> JournalScan:
    return scan_lines(read_lines(io.BytesIO(data)), len(data))


def scan_file(path: str) -> JournalScan:
    """A whole journal's rows (the recorder's resume), read line by line."""
    with open(path, "rb") as fh:
        size = os.fstat(fh.fileno()).st_size
        return scan_lines(read_lines(fh), size)
