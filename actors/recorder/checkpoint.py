"""Checkpoints of the recorder's index: a restarted recorder resumes in a time that does not
depend on the journal's length.

Every ``EVERY`` rows the recorder writes ``recorder_index.json`` beside the journal (once
the replies of the group holding the ``EVERY``-th row are sent: ``Recorder.after_group``),
compact JSON made by ``json``'s C encoder: its ``SessionIndex`` (bounded: see
``index.py``), the torn lines before that point, the sparse row offsets the follow-from-disk
path seeks by, and the point it covers — the last row's sequence, the byte offsets of its
line, its line number and its digest. A resume loads the
checkpoint and reads only the journal after that point; without a checkpoint, or with one
that does not match the journal, it reads the whole journal (the result is the
same index either way).

A checkpoint matches when its session is this one and the journal holds, at the recorded
offsets, a whole line whose SHA-256 is the recorded digest and whose row has the recorded
sequence. That digest pins every row before it through the hash chain (``prev_sha256``).
The checkpoint is a cache, not evidence: ``capture verify`` never reads it, it is replaced
atomically (temporary file and rename) and not fsynced — a lost or stale one only costs a
longer scan. Raise ``FORMAT`` whenever ``SessionIndex``'s fields or their tuples change: a
checkpoint of another format is ignored.
"""

from __future__ import annotations

import array
import dataclasses
import json
import logging
import os
from typing import Any

from protocol.journal import GENESIS, TornRow, line_digest, parse_line

from .index import SessionIndex

log = logging.getLogger("recorder")

NAME = "recorder_index.json"
FORMAT = 2  # 2: the index's bounded maps as JSON objects (1: as lists of pairs)
EVERY = 4096  # rows between checkpoints: the most a resume reads after the last one
MARK_EVERY = 256  # rows between the offsets kept for reading rows back from disk


@dataclasses.dataclass(frozen=True)
class Point:
    """The journal just after one row: ``rows`` rows and ``lines`` lines up to ``offset``."""

    rows: int
    lines: int
    offset: int  # bytes up to and including the row's newline
    row_offset: int  # where the row's line starts
    sequence: int
    digest: str

    @classmethod
    def start(cls) -> Point:
        return cls(rows=0, lines=0, offset=0, row_offset=0, sequence=0, digest=GENESIS)


@dataclasses.dataclass
class Checkpoint:
    point: Point
    index: SessionIndex
    torn: list[TornRow]  # every torn line before the point (all terminated by then)
    marks: array.array  # offset of row 1, 1 + MARK_EVERY, 1 + 2 * MARK_EVERY, ...


def path_of(session_dir: str) -> str:
    return os.path.join(session_dir, NAME)


def write(session_dir: str, session_id: str, cp: Checkpoint) -> None:
    """Replace the checkpoint (tmp + rename). A failure is logged; the session goes on."""
    state = {
        "format": FORMAT,
        "session": session_id,
        "point": dataclasses.asdict(cp.point),
        "torn": [dataclasses.asdict(dataclasses.replace(t, terminated=True)) for t in cp.torn],
        "marks": cp.marks.tolist(),
        "index": cp.index.to_state(),
    }
    target = path_of(session_dir)
    tmp = f"{target}.tmp"
    try:
        # json.dumps, not json.dump: only dumps uses the C encoder (dump streams through the
        # pure-Python one, 2-3x slower here, and the recorder's loop waits for it)
        data = json.dumps(state, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
        with open(tmp, "wb") as fh:
            fh.write(data.encode("utf-8"))
        os.replace(tmp, target)
    except (OSError, ValueError, TypeError, RecursionError) as exc:  # the next one may succeed
        log.error("checkpoint %s not written: %s", target, exc)


def load(session_dir: str, session_id: str, journal_path: str) -> Checkpoint | None:
    """The checkpoint, if there is one and it matches the journal; None (logged) otherwise."""
    target = path_of(session_dir)
    if not os.path.exists(target):
        return None
    try:
        with open(target, encoding="utf-8") as fh:
            state = json.load(fh)
        cp = _parse(state, session_id)
        problem = _mismatch(cp.point, journal_path)
    except (OSError, ValueError, KeyError, TypeError, AttributeError, RecursionError) as exc:
        problem = f"unreadable: {type(exc).__name__}: {exc}"
    if problem:
        log.warning("checkpoint %s ignored (%s); reading the whole journal", target, problem)
        return None
    return cp


def _parse(state: Any, session_id: str) -> Checkpoint:
    if state.get("format") != FORMAT:
        raise ValueError(f"format {state.get('format')!r}, not {FORMAT}")
    if state.get("session") != session_id:
        raise ValueError(f"session {state.get('session')!r}, not {session_id!r}")
    point = Point(**state["point"])
    for name in ("rows", "lines", "offset", "row_offset", "sequence"):
        if not isinstance(getattr(point, name), int):
            raise TypeError(f"point.{name} is not a whole number")
    marks = array.array("Q", state["marks"])
    if len(marks) != -(-point.rows // MARK_EVERY):
        raise ValueError(f"{len(marks)} offset marks for {point.rows} rows")
    torn = [TornRow(**t) for t in state["torn"]]
    return Checkpoint(point, SessionIndex.from_state(state["index"]), torn, marks)


def _mismatch(point: Point, journal_path: str) -> str | None:
    """Why the journal does not hold ``point``'s row where the checkpoint says, or None."""
    with open(journal_path, "rb") as fh:
        size = os.fstat(fh.fileno()).st_size
        if size < point.offset or not 0 <= point.row_offset < point.offset:
            return f"the journal has {size} bytes; the checkpoint covers {point.offset}"
        fh.seek(point.row_offset)
        raw = fh.read(point.offset - point.row_offset)
    if not raw.endswith(b"\n") or b"\n" in raw[:-1]:
        return f"bytes {point.row_offset}..{point.offset} are not one line"
    line = raw[:-1]
    if line_digest(line) != point.digest:
        return f"the line at byte {point.row_offset} is not the row the checkpoint covers"
    row = parse_line(line)
    if row is None or row.get("sequence") != point.sequence:
        return f"the line at byte {point.row_offset} is not row {point.sequence}"
    return None
