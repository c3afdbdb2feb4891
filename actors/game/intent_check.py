"""The intent check: every action POST must already be recorded in the session journal.

When the server is given ``journal_path`` (a session's ``events.jsonl``), each POST to
``/api/v1/singleplayer`` (and to ``/api/v1/profiles``, whose body's ``action`` is checked as
``profiles:<action>``, the journal's name for it) is checked *before* its action is applied:
the journal on disk must hold a JSON line with ``"event": "action_attempt"``, ``"attempt_id"``
equal to the request header ``X-Gamerig-Attempt``, and ``{"action": action, **parameters} == body``;
and that attempt id must not have been used by an earlier POST. A torn (non-JSON) last
line is ignored and re-read next time. The check observes and counts; it never blocks.

The journal is read incrementally with the one journal reader (``protocol.journal``: only
new complete lines), so a long session costs O(new bytes) per POST; a file that shrank is
re-read from the start. (The recorder writes a row and its newline at once, and
acknowledges an intent only after that, so an attempt's row is complete before its POST.)

Memory does not grow with the session's length. Each intent read gets an ordinal (its
place among the journal's attempt rows); only intents not yet POSTed are kept (the newest
``PENDING_MAX``), and the POSTed ones are a set of ordinals kept as intervals (one per run
of consecutive used ordinals: a few, since attempts are POSTed in order). An attempt that
is not among the kept intents -- forgotten, already POSTed, or unknown -- is looked up by
reading the journal again, so a forgotten intent is never taken for a missing one and an
unknown attempt is never accepted. Attempt ids POSTed without any intent are remembered
(the newest ``UNKNOWN_MAX``) so that their reuse is reported too.
"""

from __future__ import annotations

import bisect
import collections
import os
import threading
from typing import Any

from protocol.events import ActionAttempt
from protocol.journal import iter_lines

MAX_VIOLATIONS = 200
HEADER = "X-Gamerig-Attempt"
PENDING_MAX = 4096  # intents read and not yet POSTed, kept in memory
UNKNOWN_MAX = 4096  # attempt ids POSTed without an intent, kept to report their reuse


def intent_of(row: Any) -> tuple[str, dict] | None:
    """``(attempt_id, expected POST body)`` of an ``action_attempt`` row, else None."""
    if not isinstance(row, dict) or row.get("event") != ActionAttempt.KIND:
        return None
    attempt_id = row.get("attempt_id")
    params = row.get("parameters")
    if not isinstance(attempt_id, str) or not isinstance(params, dict):
        return None
    return attempt_id, {"action": row.get("action"), **params}


class IntervalSet:
    """A set of non-negative integers stored as sorted, disjoint ``[start, end)`` runs."""

    def __init__(self) -> None:
        self.starts: list[int] = []
        self.ends: list[int] = []

    def __contains__(self, n: int) -> bool:
        i = bisect.bisect_right(self.starts, n) - 1
        return i >= 0 and n < self.ends[i]

    def __len__(self) -> int:
        return sum(e - s for s, e in zip(self.starts, self.ends))

    @property
    def runs(self) -> int:
        return len(self.starts)

    def add(self, n: int) -> None:
        i = bisect.bisect_right(self.starts, n) - 1
        if i >= 0 and n < self.ends[i]:
            return
        joins_left = i >= 0 and self.ends[i] == n
        joins_right = i + 1 < len(self.starts) and self.starts[i + 1] == n + 1
        if joins_left and joins_right:
            self.ends[i] = self.ends[i + 1]
            del self.starts[i + 1], self.ends[i + 1]
        elif joins_left:
            self.ends[i] = n + 1
        elif joins_right:
            self.starts[i + 1] = n
        else:
            self.starts.insert(i + 1, n)
            self.ends.insert(i + 1, n + 1)


class IntentChecker:
    def __init__(self, journal_path: str | None) -> None:
        self.path = journal_path
        self.lock = threading.Lock()
        self.offset = 0
        self.count = 0  # attempt rows read so far: the next one's ordinal
        self.pending: collections.OrderedDict[str, tuple[int, dict]] = collections.OrderedDict()
        self.used_ordinals = IntervalSet()
        self.unknown: collections.OrderedDict[str, None] = collections.OrderedDict()
        self.lookups = 0  # journal re-reads for an attempt not kept in memory
        self.posts = 0
        self.posts_with_intent = 0
        self.violations: list[str] = []

    @property
    def enabled(self) -> bool:
        return self.path is not None

    @property
    def used(self) -> set[str]:
        """The attempt ids POSTed so far (call under ``lock``): those of the used ordinals,
        read back from the journal, and the unknown ones still remembered."""
        ids = set(self.unknown)
        for ordinal, (attempt_id, _body) in enumerate(self._journal_intents()):
            if ordinal in self.used_ordinals:
                ids.add(attempt_id)
        return ids

    def check(self, attempt_id: str | None, body: Any) -> None:
        """Count one POST and record a violation if its intent is not on disk."""
        with self.lock:
            self.posts += 1
            if not self.enabled:
                return
            reason = self._reason(attempt_id, body)
            if reason is None:
                self.posts_with_intent += 1
            elif len(self.violations) < MAX_VIOLATIONS:
                self.violations.append(reason)

    def _reason(self, attempt_id: str | None, body: Any) -> str | None:
        if not attempt_id:
            return f"POST #{self.posts}: missing {HEADER} header"
        if attempt_id in self.unknown:
            return f"attempt {attempt_id}: reused by a second POST"
        self._read_new_lines()
        found = self.pending.pop(attempt_id, None)
        if found is None:
            found = self._look_up(attempt_id)
        if found is None:
            self.unknown[attempt_id] = None
            if len(self.unknown) > UNKNOWN_MAX:
                self.unknown.popitem(last=False)
            return f"attempt {attempt_id}: no action_attempt in the journal"
        ordinal, expected = found
        if ordinal in self.used_ordinals:
            return f"attempt {attempt_id}: reused by a second POST"
        self.used_ordinals.add(ordinal)
        if expected != body:
            return f"attempt {attempt_id}: POST body does not match the recorded intent"
        return None

    def _read_new_lines(self) -> None:
        assert self.path is not None
        try:
            size = os.path.getsize(self.path)
        except OSError:
            return
        if size < self.offset:
            self.offset = self.count = 0
            self.pending.clear()
        for line in iter_lines(self.path, offset=self.offset):
            if not line.terminated:
                break  # torn last line: re-read once complete
            self.offset = line.offset + len(line.data) + 1
            intent = intent_of(line.row)  # a damaged complete line has no row: skipped
            if intent is not None:
                self._note(*intent)

    def _note(self, attempt_id: str, body: dict) -> None:
        kept = self.pending.get(attempt_id)
        self.pending[attempt_id] = (self.count if kept is None else kept[0], body)
        self.count += 1
        if len(self.pending) > PENDING_MAX:
            self.pending.popitem(last=False)

    def _journal_intents(self):
        """The intents of the complete lines read so far, in journal order."""
        if self.path is None:
            return
        for line in iter_lines(self.path):
            if not line.terminated or line.offset >= self.offset:
                return
            intent = intent_of(line.row)
            if intent is not None:
                yield intent

    def _look_up(self, attempt_id: str) -> tuple[int, dict] | None:
        """(ordinal of its first row, body of its last) for an intent not kept, or None."""
        self.lookups += 1
        found: tuple[int, dict] | None = None
        for ordinal, (row_id, body) in enumerate(self._journal_intents()):
            if row_id == attempt_id:
                found = (ordinal if found is None else found[0], body)
        return found

    def stats(self) -> dict:
        with self.lock:
            return {
                "posts": self.posts,
                "posts_with_intent": self.posts_with_intent,
                "intent_violations": list(self.violations),
            }
