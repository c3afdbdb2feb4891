"""The capture root's compatibility feeds: ``decisions.jsonl`` and ``sessions.jsonl``.

Both are read line by line. Every line must be one whole JSON row (several sessions append
under a lock, so an interleaved or partial line in the middle is **damaged**; an unterminated
last line is a torn append, **incomplete**). Their ids must resolve:

* a ``decide`` row names a session of this root and a proposal of that session whose
  disposition is the row's (``execute`` or ``dry_run``), with the same observation, action
  and parameters; one ``decide`` row per proposal (a proposal and its ``decide`` row are one
  decision, never two);
* a ``sessions.jsonl`` row names a session of this root, points at its journal through
  ``recording_path`` and agrees with its ``session.json``; one row per session.

The feeds are not transactional: a proposal or a finalized session without its feed row is a
**note**, not damage.
"""

from __future__ import annotations

import collections
import dataclasses
import os
from typing import Any

from protocol.journal import iter_lines

from .findings import DAMAGED, INCOMPLETE, NOTE, FeedReport, Finding
from .links import Links, action_key

DECISIONS, SESSIONS = "decisions.jsonl", "sessions.jsonl"
FED_STATUSES = ("execute", "dry_run")
SUMMARY_FIELDS = ("exit_code", "reason", "steps", "started_at", "ended_at")


@dataclasses.dataclass
class Decide:
    line: int
    proposal_id: Any
    disposition: Any
    observation_id: Any
    action_key: str


class Feed:
    """Common reading of one feed: whole lines, JSON objects, known sessions."""

    name = ""

    def __init__(self, root: str, sessions: set[str]):
        self.report = FeedReport(self.name)
        self.sessions = sessions
        self.by_session: dict[str, list] = collections.defaultdict(list)
        path = os.path.join(root, self.name)
        self.report.exists = os.path.isfile(path)
        if self.report.exists:
            try:
                self._read(path)
            except OSError as exc:
                self.add(DAMAGED, "unreadable_file", f"{self.name} cannot be read: {exc}")

    def add(self, severity: str, code: str, message: str, **kw) -> None:
        self.report.findings.append(Finding(severity, code, message, file=self.name, **kw))

    def _read(self, path: str) -> None:
        for line in iter_lines(path):
            n = line.number
            if not line.terminated:
                self.add(INCOMPLETE, "feed_torn_row", f"{self.name} ends in a torn row at line {n}", line=n)
            elif line.row is None:
                self.add(
                    DAMAGED,
                    "feed_unparseable_row",
                    f"{self.name} line {n} is not one whole JSON row (interleaved or edited)",
                    line=n,
                )
            else:
                self.report.rows += 1
                sid = line.row.get("session")
                if sid not in self.sessions:
                    self.add(
                        DAMAGED,
                        "feed_unknown_session",
                        f"{self.name} line {n} names session {sid!r}, which is not in this capture root",
                        line=n,
                    )
                else:
                    self.take(n, sid, line.row)

    def take(self, n: int, sid: str, row: dict) -> None:
        raise NotImplementedError


class DecisionsFeed(Feed):
    name = DECISIONS

    def __init__(self, root: str, sessions: set[str]):
        self.seen: dict[tuple[str, Any], int] = {}
        super().__init__(root, sessions)

    def take(self, n: int, sid: str, row: dict) -> None:
        if row.get("event") != "decide" or "proposal_id" not in row:
            self.add(DAMAGED, "feed_bad_row", f"line {n} is not an event: decide row with a proposal_id", line=n)
            return
        key = (sid, str(row["proposal_id"]))
        if key in self.seen:
            self.add(
                DAMAGED,
                "decide_duplicate",
                f"line {n} repeats the decide row of proposal "
                f"{row['proposal_id']!r} of session {sid} (line {self.seen[key]}): one "
                "decision would be counted twice",
                line=n,
            )
            return
        self.seen[key] = n
        self.by_session[sid].append(
            Decide(n, row["proposal_id"], row.get("disposition"), row.get("observation_id"), action_key(row))
        )

    def check_session(self, sid: str, links: Links | None) -> None:
        decides = self.by_session.pop(sid, [])
        proposals = links.proposals if links is not None else {}
        fed = set()
        for d in decides:
            prop = proposals.get(d.proposal_id) if isinstance(d.proposal_id, str) else None
            fed.add(d.proposal_id)
            if prop is None:
                self.add(
                    DAMAGED,
                    "decide_unresolved",
                    f"line {d.line}: proposal {d.proposal_id!r} is not in session {sid}'s journal",
                    line=d.line,
                )
            elif d.disposition not in FED_STATUSES or d.disposition != prop.status:
                self.add(
                    DAMAGED,
                    "decide_mismatch",
                    f"line {d.line}: disposition {d.disposition!r}, the journal's is {prop.status!r}",
                    line=d.line,
                )
            elif d.observation_id != prop.observation_id or d.action_key != prop.action_key:
                self.add(
                    DAMAGED,
                    "decide_mismatch",
                    f"line {d.line}: observation, action or "
                    f"parameters differ from proposal {d.proposal_id!r} (journal line "
                    f"{prop.line})",
                    line=d.line,
                )
        missing = [p for p, prop in proposals.items() if prop.status in FED_STATUSES and p not in fed]
        if missing:
            self.add(
                NOTE,
                "decide_missing",
                f"session {sid}: {len(missing)} executed or previewed "
                f"proposals have no decide row (first: {missing[0]})",
            )


class SessionsFeed(Feed):
    name = SESSIONS

    def take(self, n: int, sid: str, row: dict) -> None:
        if self.by_session.get(sid):
            self.add(
                DAMAGED,
                "feed_duplicate",
                f"line {n}: a second row for session {sid} (first on line {self.by_session[sid][0][0]})",
                line=n,
            )
            return
        want = f"sessions/{sid}/events.jsonl"
        if row.get("recording_path") != want:
            self.add(
                DAMAGED,
                "feed_mismatch",
                f"line {n}: recording_path {row.get('recording_path')!r}, expected {want!r}",
                line=n,
                field="recording_path",
            )
        self.by_session[sid].append((n, row))

    def check_session(self, sid: str, summary: dict | None) -> None:
        entries = self.by_session.pop(sid, [])
        if not entries:
            if summary is not None:
                self.add(NOTE, "sessions_row_missing", f"session {sid} was finalized but has no {SESSIONS} row")
            return
        n, row = entries[0]
        if summary is None:
            self.add(
                DAMAGED,
                "feed_mismatch",
                f"line {n}: session {sid} has a {SESSIONS} row, "
                "so it was finalized, but its session.json is missing or unreadable",
                line=n,
            )
            return
        for key in SUMMARY_FIELDS:
            if row.get(key) != summary.get(key):
                self.add(
                    DAMAGED,
                    "feed_mismatch",
                    f"line {n}: {key} {row.get(key)!r}, session.json says {summary.get(key)!r}",
                    line=n,
                    field=key,
                )
