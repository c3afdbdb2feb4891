"""The retry rule's evidence: did a lost session leave an action in flight?

A session lost with its node (or its Ray worker) may be run again only when its journal
proves that no action was in flight: every ``action_attempt`` row has an
``action_result`` row. The recorder fsyncs an attempt and acknowledges it before the
actuator may send the action, so

* no journal, or a journal without attempts: nothing was ever sent;
* a torn last line was never acknowledged, so no action was sent on its strength (a torn
  *result* leaves its attempt without a result, which is caught below);
* an attempt with no result: the action may or may not have reached the game. The session
  needs review; it is never run again on its own.

A line in the middle that does not parse means the journal cannot prove anything (review),
unless the next row is the ``recorder_resumed`` row that names it as torn.
"""

from __future__ import annotations

import dataclasses
import os

from protocol.events import ActionAttempt, ActionResult, RecorderResumed
from protocol.journal import iter_lines


@dataclasses.dataclass(frozen=True)
class Verdict:
    idle: bool  # True: proven that no action was in flight, a retry is safe
    open_attempts: list[str]
    detail: str
    evidence: list[str] = dataclasses.field(default_factory=list)  # "<sid>/events.jsonl line N: ..."


def judge(capture_root: str, session_ids: list[str]) -> Verdict:
    """Judge the sessions one attempt left under ``capture_root``."""
    open_attempts: list[str] = []
    evidence: list[str] = []
    attempts = 0
    for sid in session_ids:
        journal = os.path.join(capture_root, "sessions", sid, "events.jsonl")
        if not os.path.exists(journal):
            continue
        seen, resolved, bad = _scan(journal)
        if bad:
            where = f"{sid}/events.jsonl line {bad}"
            return Verdict(
                False,
                [],
                f"{where} does not parse: the journal proves nothing about actions in flight",
                [f"{where}: does not parse"],
            )
        attempts += len(seen)
        for attempt, line in seen.items():
            if attempt not in resolved:
                open_attempts.append(attempt)
                evidence.append(f"{sid}/events.jsonl line {line}: action_attempt {attempt} has no action_result")
    if open_attempts:
        return Verdict(
            False,
            open_attempts,
            f"{len(open_attempts)} action attempt(s) without a "
            f"result ({'; '.join(evidence[:3])}): the action may have reached the game",
            evidence,
        )
    if not attempts:
        return Verdict(True, [], "no action attempt was recorded, so none was sent")
    return Verdict(True, [], f"all {attempts} action attempt(s) have a result")


def _scan(journal: str) -> tuple[dict[str, int], set[str], int | None]:
    """(attempt id -> its line number, attempt ids with a result, the first line that does not
    parse with more rows after it)."""
    seen: dict[str, int] = {}
    resolved: set[str] = set()
    pending_bad = None
    for line in iter_lines(journal):
        if line.row is None:
            pending_bad = pending_bad or line.number
            continue
        event = line.row.get("event")
        if pending_bad is not None:
            if event != RecorderResumed.KIND:
                return seen, resolved, pending_bad  # an unreadable line with more after it
            pending_bad = None
        if event == ActionAttempt.KIND:
            seen[str(line.row.get("attempt_id"))] = line.number
        elif event == ActionResult.KIND:
            resolved.add(str(line.row.get("attempt_id")))
    return seen, resolved, None
