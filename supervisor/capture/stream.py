"""Streaming readers for the verifier: lines of a JSONL file one at a time, the torn-row
marks of ``recorder_resumed`` rows, and file digests read in chunks.

Nothing here loads a whole journal into memory; a line is held only while it is checked.
"""
from __future__ import annotations

import dataclasses
import hashlib
import json
from typing import Any, Iterator

CHUNK = 1 << 20


@dataclasses.dataclass
class Line:
    """One line of a JSONL file. ``data`` excludes the newline; ``row`` is the parsed object
    when the line is terminated and is a JSON object, else ``None``."""
    number: int  # 1-based
    offset: int
    data: bytes
    terminated: bool
    row: dict[str, Any] | None


def parse_row(data: bytes) -> dict[str, Any] | None:
    try:
        row = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError):  # RecursionError: nested too deep
        return None
    return row if isinstance(row, dict) else None


def iter_lines(path: str, *, parse: bool = True) -> Iterator[Line]:
    """Yield every line of ``path`` in order. An unterminated last line is yielded with
    ``terminated=False`` and ``row=None`` (it is torn, whatever it contains). With
    ``parse=False`` no line is parsed (``row`` is always ``None``)."""
    with open(path, "rb") as fh:
        number, offset = 0, 0
        for raw in fh:
            number += 1
            terminated = raw.endswith(b"\n")
            data = raw[:-1] if terminated else raw
            row = parse_row(data) if terminated and parse else None
            yield Line(number, offset, data, terminated, row)
            offset += len(raw)


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
    for line in iter_lines(path, parse=False):
        if not line.terminated or b'"recorder_resumed"' not in line.data:
            continue
        row = parse_row(line.data)
        if row is None or row.get("event") != "recorder_resumed":
            continue
        for entry in row.get("torn_rows") or []:
            if not isinstance(entry, dict) or not isinstance(entry.get("line"), int):
                continue
            if entry["line"] < line.number and entry["line"] not in marks:
                marks[entry["line"]] = TornMark(entry["line"], entry.get("offset"),
                                                entry.get("length"), entry.get("sha256"),
                                                line.number, row.get("sequence"))
    return marks


def file_sha256(path: str) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        while True:
            chunk = fh.read(CHUNK)
            if not chunk:
                return digest.hexdigest()
            digest.update(chunk)
