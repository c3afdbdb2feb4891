"""The one journal reader (``protocol.journal``): lines from a byte offset with their numbers,
offsets, digests and rows; torn lines; ``scan_bytes``/``scan_file``/``rows_between`` on it.

Journals here are written with the recorder's own encoding (``encode_row``) and chain.
"""

from __future__ import annotations

import hashlib
import json

from protocol.journal import (
    GENESIS,
    encode_row,
    iter_lines,
    line_digest,
    read_lines,
    rows_between,
    scan_bytes,
    scan_file,
)


def chained(n: int, session: str = "s") -> list[bytes]:
    lines, prev = [], GENESIS
    for seq in range(1, n + 1):
        line = encode_row(
            {
                "schema_version": 1,
                "session": session,
                "sequence": seq,
                "recorded_at": "t",
                "ts": "t",
                "event": "x",
                "prev_sha256": prev,
                "pad": "." * (seq % 7),
            }
        )
        lines.append(line)
        prev = line_digest(line)
    return lines


def test_lines_carry_number_offset_digest_and_row(tmp_path):
    lines = chained(5)
    data = b"".join(line + b"\n" for line in lines) + b'{"torn'
    path = tmp_path / "events.jsonl"
    path.write_bytes(data)
    got = list(iter_lines(str(path)))
    assert [g.number for g in got] == [1, 2, 3, 4, 5, 6]
    offsets = [0]
    for line in lines:
        offsets.append(offsets[-1] + len(line) + 1)
    assert [g.offset for g in got] == offsets
    assert [g.sha256 for g in got[:5]] == [hashlib.sha256(line).hexdigest() for line in lines]
    assert [g.row["sequence"] for g in got[:5]] == [1, 2, 3, 4, 5]
    last = got[-1]
    assert (last.terminated, last.row, last.data) == (False, None, b'{"torn')


def test_reading_from_an_offset_yields_the_same_lines(tmp_path):
    lines = chained(6)
    path = tmp_path / "events.jsonl"
    path.write_bytes(b"".join(line + b"\n" for line in lines))
    whole = list(iter_lines(str(path)))
    tail = list(iter_lines(str(path), offset=whole[3].offset, number=3))
    assert [(t.number, t.offset, t.data, t.row) for t in tail] == [
        (w.number, w.offset, w.data, w.row) for w in whole[3:]
    ]


def test_torn_and_non_object_lines_have_no_row_and_parse_false_parses_nothing(tmp_path):
    path = tmp_path / "events.jsonl"
    path.write_bytes(b'{"a":1}\n[1,2]\n\xff\xfe\n\n' + b"[" * 100000 + b"\n")
    rows = [line.row for line in iter_lines(str(path))]
    assert rows == [{"a": 1}, None, None, None, None]
    assert all(line.row is None for line in iter_lines(str(path), parse=False))


def test_the_reader_holds_one_line_not_the_file(tmp_path):
    path = tmp_path / "events.jsonl"
    lines = chained(20000)
    path.write_bytes(b"".join(line + b"\n" for line in lines))
    size = path.stat().st_size
    with open(path, "rb") as fh:
        first = next(read_lines(fh))
        assert first.row["sequence"] == 1
        assert fh.tell() < size // 10  # only a buffer's worth was read


def test_scan_bytes_and_scan_file_agree_with_the_lines(tmp_path):
    lines = chained(4)
    data = lines[0] + b"\n" + b"garbage\n" + b"".join(line + b"\n" for line in lines[1:]) + b"{"
    path = tmp_path / "events.jsonl"
    path.write_bytes(data)
    for scan in (scan_bytes(data), scan_file(str(path))):
        assert scan.size == len(data)
        assert [r["sequence"] for r in scan.rows] == [1, 2, 3, 4]
        assert scan.line_numbers == [1, 3, 4, 5]
        assert scan.last_digest == line_digest(lines[-1]) and scan.last_sequence == 4
        assert [(t.line_number, t.terminated) for t in scan.torn] == [(2, True), (6, False)]
        assert scan.torn[0].sha256 == line_digest(b"garbage") and scan.torn[0].length == 7
        assert scan.ends_torn


def test_rows_between_reads_only_the_asked_rows_and_skips_torn_lines(tmp_path):
    lines = chained(8)
    body = [line + b"\n" for line in lines]
    body.insert(4, b'{"half\n')  # a torn line left by a crash, between rows 4 and 5
    path = tmp_path / "events.jsonl"
    path.write_bytes(b"".join(body))
    offset = sum(len(b) for b in body[:2])  # row 3
    got = rows_between(str(path), offset, 3, 6)
    assert [r["sequence"] for r in got] == [3, 4, 5, 6]
    assert got[0] == json.loads(lines[2])
    assert rows_between(str(path), offset, 7, 20)[-1]["sequence"] == 8
