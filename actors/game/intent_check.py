"""The intent check: every action POST must already be recorded in the session journal.

When the server is given ``journal_path`` (a session's ``events.jsonl``), each POST to
``/api/v1/singleplayer`` is checked *before* its action is applied: the journal on disk
must hold a JSON line with ``"event": "action_attempt"``, ``"attempt_id"`` equal to the
request header ``X-Gamerig-Attempt``, and ``{"action": action, **parameters} == body``;
and that attempt id must not have been used by an earlier POST. A torn (non-JSON) last
line is ignored and re-read next time. The check observes and counts; it never blocks.

The journal is read incrementally with the one journal reader (``protocol.journal``: only
new complete lines), so a long session costs O(new bytes) per POST; a file that shrank is
re-read from the start. (The recorder writes a row and its newline at once, and
acknowledges an intent only after that, so an attempt's row is complete before its POST.)
"""

from __future__ import annotations

import os
import threading
from typing import Any

from protocol.events import ActionAttempt
from protocol.journal import iter_lines

MAX_VIOLATIONS = 200
HEADER = "X-Gamerig-Attempt"


class IntentChecker:
    def __init__(self, journal_path: str | None) -> None:
        self.path = journal_path
        self.lock = threading.Lock()
        self.offset = 0
        self.attempts: dict[str, Any] = {}  # attempt_id -> expected body
        self.used: set[str] = set()
        self.posts = 0
        self.posts_with_intent = 0
        self.violations: list[str] = []

    @property
    def enabled(self) -> bool:
        return self.path is not None

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
        if attempt_id in self.used:
            return f"attempt {attempt_id}: reused by a second POST"
        self.used.add(attempt_id)
        self._read_new_lines()
        if attempt_id not in self.attempts:
            return f"attempt {attempt_id}: no action_attempt in the journal"
        if self.attempts[attempt_id] != body:
            return f"attempt {attempt_id}: POST body does not match the recorded intent"
        return None

    def _read_new_lines(self) -> None:
        assert self.path is not None
        try:
            size = os.path.getsize(self.path)
        except OSError:
            return
        if size < self.offset:
            self.offset = 0
            self.attempts.clear()
        for line in iter_lines(self.path, offset=self.offset):
            if not line.terminated:
                break  # torn last line: re-read once complete
            self.offset = line.offset + len(line.data) + 1
            if line.row is not None:  # a damaged complete line is skipped
                self._note(line.row)

    def _note(self, row: Any) -> None:
        if not isinstance(row, dict) or row.get("event") != ActionAttempt.KIND:
            return
        attempt_id = row.get("attempt_id")
        params = row.get("parameters")
        if not isinstance(attempt_id, str) or not isinstance(params, dict):
            return
        self.attempts[attempt_id] = {"action": row.get("action"), **params}

    def stats(self) -> dict:
        with self.lock:
            return {"posts": self.posts, "posts_with_intent": self.posts_with_intent,
                    "intent_violations": list(self.violations)}
