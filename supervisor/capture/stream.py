"""Streaming helpers for the verifier: the torn-row marks of ``recorder_resumed`` rows, and
file digests read in chunks. Lines are read by the one journal reader,
``protocol.journal.iter_lines``.

Nothing here loads a whole journal into memory; a line is held only while it is checked.
"""

from __future__ import annotations

import dataclasses
import hashlib
from typing import Any

from protocol.events import RecorderResumed
from protocol.journal import iter_lines, parse_line

CHUNK = 1 << 20


@dataclasses.dataclass
class TornMark:
    """A torn line as a ``recorder_resumed`` row describes it."""

    line: int
    offset: Any
    length: Any
    sha256: Any
    resume_line: int
    resume_sequence: Any


def resume_marks(path: str) -> dict[int, TornMark]:
    """A first, cheap pass: the torn rows named by ``recorder_resumed`` rows, by line number.

    Only lines that mention ``recorder_resumed`` are parsed. A mark is kept only when the
    named line comes before the row that names it."""
    marks: dict[int, TornMark] = {}
    needle = f'"{RecorderResumed.KIND}"'.encode()
    for line in iter_lines(path, parse=False):
        if not line.terminated or needle not in line.data:
            continue
        row = parse_line(line.data)
        if row is None or row.get("event") != RecorderResumed.KIND:
            continue
        for entry in row.get("torn_rows") or []:
            if not isinstance(entry, dict) or not isinstance(entry.get("line"), int):
                continue
            if entry["line"] < line.number and entry["line"] not in marks:
                marks[entry["line"]] = TornMark(
                    entry["line"],
                    entry.get("offset"),
                    entry.get("length"),
                    entry.get("sha256"),
                    line.number,
                    row.get("sequence"),
                )
    return marks


def file_sha256(path: str) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        while True:
            chunk = fh.read(CHUNK)
            if not chunk:
                return digest.hexdigest()
            digest.update(chunk)
