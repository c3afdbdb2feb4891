"""Line-level checks of one journal: torn rows, the common fields, sequences and the hash chain.

``Chain.accept(line)`` is called for every line in file order and returns the row when it is
an intact row (the join checks in ``links.py`` see only those). The rules:

* An unterminated last line is a torn row: **incomplete** evidence, named by its line.
* A line that a later ``recorder_resumed`` row names in ``torn_rows`` (same offset, length
  and sha256) is a torn row left by a recorder crash: **incomplete**, named by its line.
  If the line no longer matches what the resume row recorded, it is **damaged**.
* Any other line that is not a JSON object is **damaged**.
* Rows carry ``sequence`` 1, 2, 3, ... (torn rows take no sequence) and ``prev_sha256``, the
  digest of the previous intact row's line (``GENESIS`` for the first). A sequence jump
  means rows were removed, a step back means rows were reordered or duplicated, and a
  digest that does not match means the previous row was edited: all **damaged**, each naming
  the row concerned.
"""

from __future__ import annotations

from collections.abc import Callable

from protocol.journal import COMMON_FIELDS, GENESIS, SCHEMA_VERSION, Line, encode_row, is_int, line_digest

from .findings import DAMAGED, INCOMPLETE
from .stream import TornMark

Add = Callable[..., None]


class Chain:
    def __init__(self, session_id: str, marks: dict[int, TornMark], add: Add):
        self.sid = session_id
        self.marks = marks
        self.add = add
        self.expected = 1
        self.prev_digest = GENESIS
        self.prev_line: int | None = None
        self.prev_event: str | None = None
        self.prev_order_bad = False
        self.last_sequence = 0
        self.sequence_before = 0  # the last sequence before the row being checked
        self.last_digest = GENESIS
        self.rows = 0
        self.lines = 0
        self.torn: list[int] = []
        self.matched_marks: set[int] = set()

    def accept(self, line: Line) -> dict | None:
        """Check one line; return its row if it is an intact row."""
        self.lines = line.number
        mark = self.marks.get(line.number)
        if mark is not None:
            self._named_torn(line, mark)
            return None
        if not line.terminated:
            self.torn.append(line.number)
            self.add(
                INCOMPLETE,
                "torn_last_row",
                f"the journal ends in a torn row: line {line.number} ({len(line.data)} bytes, "
                f"no newline); the evidence stops after sequence {self.last_sequence}",
                line=line.number,
            )
            return None
        if line.row is None:
            self.add(
                DAMAGED,
                "unparseable_row",
                f"line {line.number} is not a JSON row, and no recorder_resumed row names it as torn",
                line=line.number,
            )
            return None
        digest = line_digest(line.data)
        self._common(line)
        self._order(line, digest)
        return line.row

    # -- torn rows ------------------------------------------------------------------------
    def _named_torn(self, line: Line, mark: TornMark) -> None:
        same = mark.offset == line.offset and mark.length == len(line.data) and mark.sha256 == line_digest(line.data)
        if same:
            self.torn.append(line.number)
            self.matched_marks.add(line.number)
            self.add(
                INCOMPLETE,
                "torn_row",
                f"line {line.number} is a torn row ({len(line.data)} bytes) left when the "
                f"recorder died; the recorder_resumed row at line {mark.resume_line} "
                f"(seq {mark.resume_sequence}) names it. What it was writing is lost.",
                line=line.number,
            )
        else:
            self.add(
                DAMAGED,
                "torn_row_changed",
                f"line {line.number} is named as torn by the recorder_resumed row at line "
                f"{mark.resume_line}, but its offset, length or sha256 no longer match",
                line=line.number,
            )

    # -- intact rows ----------------------------------------------------------------------
    def _common(self, line: Line) -> None:
        row, n = line.row, line.number
        seq, event = row.get("sequence"), row.get("event")
        where = {
            "line": n,
            "sequence": seq if is_int(seq) else None,
            "event": event if isinstance(event, str) else None,
        }
        missing = [f for f in COMMON_FIELDS if f not in row]
        if missing:
            self.add(DAMAGED, "missing_field", f"line {n} lacks {', '.join(missing)}", **where)
        if "schema_version" in row and row["schema_version"] != SCHEMA_VERSION:
            self.add(
                DAMAGED,
                "schema_version",
                f"line {n} has schema_version {row['schema_version']!r}; this verifier reads {SCHEMA_VERSION}",
                **where,
            )
        if "session" in row and row["session"] != self.sid:
            self.add(
                DAMAGED,
                "session_mismatch",
                f"line {n} belongs to session {row['session']!r}, not to this directory's {self.sid!r}",
                **where,
            )
        try:
            canonical = encode_row(row) == line.data
        except ValueError:
            canonical = False
        if not canonical:
            self.add(
                DAMAGED,
                "non_canonical_row",
                f"line {n} is not the canonical encoding of "
                "its row (sorted keys, no spaces): it was rewritten after recording",
                **where,
            )

    def _order(self, line: Line, digest: str) -> None:
        row, n = line.row, line.number
        seq, prev = row.get("sequence"), row.get("prev_sha256")
        if not is_int(seq):
            if "sequence" in row:  # (a missing one is reported with the common fields)
                self.add(DAMAGED, "bad_value", f"line {n}: sequence {seq!r} is not a whole number", line=n)
            seq = self.expected
        order_bad = seq != self.expected
        if seq == self.expected and prev != self.prev_digest and not self.prev_order_bad:
            self._chain_break(n, seq, prev)
        elif seq > self.expected:
            self.add(
                DAMAGED,
                "rows_missing",
                f"sequence {self.expected}"
                + (f"..{seq - 1}" if seq - 1 > self.expected else "")
                + f" is missing before line {n} (rows removed)",
                line=n,
                sequence=seq,
                event=row.get("event"),
            )
        elif seq < self.expected:
            self.add(
                DAMAGED,
                "rows_out_of_order",
                f"line {n} has sequence {seq} after sequence {self.last_sequence}: rows reordered or duplicated",
                line=n,
                sequence=seq,
                event=row.get("event"),
            )
        self.expected = max(self.expected, seq + 1)
        self.sequence_before = self.last_sequence
        self.last_sequence = max(self.last_sequence, seq)
        self.prev_digest = self.last_digest = digest
        self.prev_line = n
        self.prev_event = row.get("event") if isinstance(row.get("event"), str) else None
        self.prev_order_bad = order_bad
        self.rows += 1

    def _chain_break(self, n: int, seq: int, prev) -> None:
        if self.prev_line is None:
            self.add(
                DAMAGED,
                "chain_broken",
                f"line {n} is the first row, but its prev_sha256 is not GENESIS (rows before it were removed)",
                line=n,
                sequence=seq,
            )
            return
        self.add(
            DAMAGED,
            "row_changed",
            f"line {self.prev_line} (seq {seq - 1}) was changed after it was recorded: it "
            f"hashes to {self.prev_digest[:16]}..., but line {n} (seq {seq}) pins "
            f"{str(prev)[:16]}...",
            line=self.prev_line,
            sequence=seq - 1,
            event=self.prev_event,
        )
