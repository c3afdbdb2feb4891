"""Does ``session.json`` agree with the journal?

The summary pins ``journal.last_sequence`` and ``journal.last_row_sha256``; with those, rows cut
off the end of the journal after the summary was written, rows appended after it, and an
edit of the last row are all detectable. It also restates what the journal shows (counts,
dispositions, results, unresolved links, exit code and reason); every restated value must
equal what the verifier counted up to the ``session_end`` row.

``SummaryCheck`` is read before the journal pass (it is small), watches the pass for the
pinned rows (``observe``), and compares at the end (``finish``).
"""

from __future__ import annotations

import json
import os
from typing import Any

from .findings import DAMAGED, INCOMPLETE

FILE = "session.json"


class SummaryCheck:
    def __init__(self, session_dir: str, session_id: str, add):
        self.sid = session_id
        self.add = add
        self.summary: dict | None = None
        self.pinned_sequence: Any = None
        self.pinned_digest: Any = None
        self.pinned_line: int | None = None
        self.pinned_row_digest: str | None = None
        self.first_after: tuple[int, int] | None = None  # (line, sequence) past the pinned row
        self._load(os.path.join(session_dir, FILE))

    def _load(self, path: str) -> None:
        try:
            with open(path, "rb") as fh:
                data = json.loads(fh.read().decode("utf-8"))
        except FileNotFoundError:
            self.add(INCOMPLETE, "summary_missing", "no session.json: the session was not finalized", file=FILE)
            return
        except (OSError, UnicodeDecodeError, ValueError, RecursionError) as exc:
            self.add(DAMAGED, "summary_unreadable", f"session.json cannot be read: {exc}", file=FILE)
            return
        if not isinstance(data, dict) or not isinstance(data.get("journal"), dict):
            self.add(DAMAGED, "summary_unreadable", "session.json has no journal section", file=FILE)
            return
        seq, digest = data["journal"].get("last_sequence"), data["journal"].get("last_row_sha256")
        if not isinstance(seq, int) or isinstance(seq, bool) or not isinstance(digest, str):
            self.add(
                DAMAGED,
                "summary_unreadable",
                f"session.json pins no journal row (last_sequence {seq!r}, last_row_sha256 {digest!r})",
                file=FILE,
            )
            return
        self.summary = data
        self.pinned_sequence, self.pinned_digest = seq, digest

    def observe(self, n: int, row: dict, digest: str) -> None:
        """Called for every intact row of the journal pass."""
        if self.summary is None:
            return
        seq = row.get("sequence")
        if seq == self.pinned_sequence and self.pinned_line is None:
            self.pinned_line, self.pinned_row_digest = n, digest
        elif (
            isinstance(seq, int)
            and isinstance(self.pinned_sequence, int)
            and seq > self.pinned_sequence
            and self.first_after is None
        ):
            self.first_after = (n, seq)

    def finish(self, chain, links) -> None:
        if self.summary is None:
            return
        self._pins(chain)
        if links.end is not None:
            self._restated(links)

    def _pins(self, chain) -> None:
        seq = self.pinned_sequence
        if self.pinned_line is None:
            self.add(
                DAMAGED,
                "journal_truncated",
                f"session.json pins sequence {seq!r}, but the journal's last intact row is "
                f"sequence {chain.last_sequence} (line {chain.prev_line}): the rows after it "
                "were cut off",
                line=chain.prev_line,
                sequence=chain.last_sequence,
            )
            return
        if self.pinned_row_digest != self.pinned_digest:
            self.add(
                DAMAGED,
                "last_row_changed",
                f"line {self.pinned_line} (seq {seq}) does not hash to the last_row_sha256 "
                "that session.json pins: the row was edited",
                line=self.pinned_line,
                sequence=seq,
            )
        if self.first_after is not None:
            line, after = self.first_after
            self.add(
                DAMAGED,
                "rows_after_summary",
                f"line {line} (seq {after}) comes after the last row session.json pins "
                f"(seq {seq}): rows were appended after finalization",
                line=line,
                sequence=after,
            )

    def _restated(self, links) -> None:
        end = links.end
        row = end["row"]
        start = links.start or {}
        expected = {
            "session": self.sid,
            "schema_version": 1,
            "exit_code": row.get("exit_code"),
            "reason": row.get("reason"),
            "started_at": start.get("recorded_at"),
            "ended_at": row.get("recorded_at"),
            "steps": end["observations"],
            "events": end["counts"],
            "dispositions": end["statuses"],
            "action_results": end["outcomes"],
            "attempts": end["attempts"],
            "unresolved_attempts": row.get("unresolved_attempts"),
            "awaiting_observation_after_attempt": row.get("awaiting_observation_after_attempt"),
            "actor_restarts": end["restarts"],
            "dry_run": start.get("dry_run", False),
            "recording_path": f"sessions/{self.sid}/events.jsonl",
        }
        for key, want in expected.items():
            have = self.summary.get(key)
            if have != want:
                self.add(
                    DAMAGED,
                    "summary_mismatch",
                    f"session.json says {key} = {_short(have)}, the journal shows "
                    f"{_short(want)} (session_end on line {end['line']})",
                    file=FILE,
                    field=key,
                )


def _short(value: Any) -> str:
    try:
        text = json.dumps(value, sort_keys=True, default=str)
    except (TypeError, ValueError):  # keys of mixed types (a damaged row's event: NaN): say it as it is
        text = repr(value)
    return text if len(text) <= 120 else text[:117] + "..."
