"""Join checks of one journal: every key resolves, backwards, to the row it names.

    observation.observation_id
        <- proposal.observation_id
            <- proposal_status.proposal_id   (exactly one per proposal)
            <- action_attempt.proposal_id    (status execute; same observation; at most one)
                <- action_result.attempt_id  (at most one)
                <- observation.after_attempt_id  (only the first successful read after it)

``Links.apply(line_number, row)`` is called for each intact row in file order, one handler
per event (a table, not an if-chain); unknown events are counted and otherwise skipped.
Observation files are hashed as their rows are met. ``finish()`` checks what can only be
known at the end: a ``session_start``, a ``session_end``, every proposal's disposition and
every attempt's result.
"""

from __future__ import annotations

import collections
import dataclasses
import hashlib
import os
from collections.abc import Callable
from typing import Any

from protocol import events as ev  # (ev.Proposal: the row kind; Proposal below: its join entry)
from protocol import obspack
from protocol.journal import encode_row, line_digest

from .findings import DAMAGED, INCOMPLETE
from .stream import file_sha256

_STRINGS = {"observation_id", "proposal_id", "attempt_id", "path", "sha256", "status", "outcome"}
STATUSES = ("wait", "suppressed", "dry_run", "execute", "session_stopped")
OUTCOMES = ("accepted", "rejected", "unknown")


@dataclasses.dataclass
class Proposal:
    line: int
    observation_id: Any
    action_key: str
    status: str | None = None


@dataclasses.dataclass
class Attempt:
    line: int
    proposal_id: Any
    result_line: int | None = None


def _str_list(value) -> list[str] | None:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        return None
    return sorted(value)


def action_key(row: dict) -> str:
    return line_digest(encode_row({"a": row.get("action"), "p": row.get("parameters")}))


class Links:
    def __init__(self, session_id: str, session_dir: str, capture_root: str, chain, add):
        self.sid, self.dir, self.root, self.chain, self.add = (session_id, session_dir, capture_root, chain, add)
        self.observations: dict[str, int] = {}
        self.files_seen: set[str] = set()
        self.last_observation_id: str | None = None
        self.proposals: dict[str, Proposal] = {}
        self.attempts: dict[str, Attempt] = {}
        self.attempt_of: dict[str, str] = {}  # proposal_id -> its attempt
        self.awaiting: str | None = None
        self.counts: collections.Counter = collections.Counter()
        self.statuses: collections.Counter = collections.Counter()
        self.outcomes = dict.fromkeys(OUTCOMES, 0)
        self.restarts: collections.Counter = collections.Counter()
        self.start: dict | None = None
        self.end: dict | None = None
        self.last_resume_line = 0
        self.resumes = 0
        self.missing_tail: list[tuple[int, dict, str]] = []  # missing observation files no intent followed yet

    def apply(self, n: int, row: dict) -> None:
        event = row.get("event")
        self.counts[event] += 1
        handler = _HANDLERS.get(event)
        if handler is not None:
            handler(self, n, row)

    # -- helpers --------------------------------------------------------------------------
    def _damaged(self, code: str, message: str, n: int, row: dict, **kw) -> None:
        self.add(DAMAGED, code, message, line=n, sequence=row.get("sequence"), event=row.get("event"), **kw)

    def _need(self, n: int, row: dict, *fields: str) -> bool:
        """The fields are present, and those that are ids or paths are strings."""
        missing = [f for f in fields if f not in row]
        if missing:
            self._damaged("missing_field", f"line {n} ({row.get('event')}) lacks {', '.join(missing)}", n, row)
            return False
        bad = [f for f in fields if f in _STRINGS and not isinstance(row[f], str)]
        if bad:
            self._damaged(
                "bad_value",
                f"line {n} ({row.get('event')}): " + ", ".join(f"{f} {row[f]!r}" for f in bad) + " should be a string",
                n,
                row,
            )
        return not bad

    def _unresolved(self, n: int, row: dict, key: str, target: str) -> None:
        self._damaged(
            "unresolved_reference",
            f"line {n} ({row.get('event')}): {key} {row.get(key)!r} names no earlier {target} row",
            n,
            row,
        )

    def _unique(self, n: int, row: dict, key: str, table: dict) -> bool:
        if row[key] in table:
            self._damaged(
                "duplicate_id",
                f"line {n}: {key} {row[key]!r} was already used on line {self._line_of(table[row[key]])}",
                n,
                row,
            )
            return False
        return True

    @staticmethod
    def _line_of(entry) -> int:
        return entry if isinstance(entry, int) else entry.line

    # -- per event ------------------------------------------------------------------------
    def _session_start(self, n: int, row: dict) -> None:
        if self.start is not None:
            self._damaged(
                "duplicate_event", f"line {n}: a second session_start (first on line {self.start['line']})", n, row
            )
            return
        if row.get("sequence") != 1:
            self._damaged(
                "session_start_misplaced", f"line {n}: session_start is not the first row of the session", n, row
            )
        self.start = {"line": n, "recorded_at": row.get("recorded_at"), "dry_run": bool(row.get("dry_run", False))}

    def _observation(self, n: int, row: dict) -> None:
        if not self._need(n, row, "observation_id", "path", "sha256", "step", "phase", "state_type"):
            return
        if self._unique(n, row, "observation_id", self.observations):
            self.observations[row["observation_id"]] = n
        self.last_observation_id = row["observation_id"]
        self._observation_file(n, row)
        after = row.get("after_attempt_id")
        if self.awaiting is not None and after != self.awaiting:
            self._damaged(
                "after_attempt_missing",
                f"line {n} is the first successful read after "
                f"attempt {self.awaiting!r} but its after_attempt_id is {after!r}",
                n,
                row,
            )
        elif self.awaiting is None and "after_attempt_id" in row:
            self._damaged(
                "after_attempt_misplaced",
                f"line {n} carries after_attempt_id {after!r}, but it is not the first read after that attempt",
                n,
                row,
            )
        self.awaiting = None

    def _observation_file(self, n: int, row: dict) -> None:
        path = row["path"]
        prefix = f"sessions/{self.sid}/observations/"
        full = os.path.normpath(os.path.join(self.root, str(path)))
        if (
            not path.startswith(prefix)
            or os.path.isabs(path)
            or os.path.dirname(full) != os.path.join(self.dir, "observations")
        ):
            self._damaged(
                "observation_path",
                f"line {n}: path {path!r} is not a file in this session's observations/ directory",
                n,
                row,
            )
            return
        self.files_seen.add(os.path.basename(full))
        rel = os.path.relpath(full, self.dir)
        try:
            digest = file_sha256(full)
        except FileNotFoundError:
            digest = self._packed_sha256(n, row, rel)
            if digest is None:
                return
        except OSError as exc:
            self._damaged("observation_unreadable", f"{rel} cannot be read: {exc}", n, row)
            return
        if digest != row["sha256"]:
            self._damaged(
                "observation_changed",
                f"{rel} does not hash to the sha256 that line "
                f"{n} ({row['observation_id']}) recorded: the file was changed",
                n,
                row,
            )

    def _packed_sha256(self, n: int, row: dict, rel: str) -> str | None:
        """The digest of the observation in the session's pack (``capture pack``); None, with
        the finding, when there is no such file or the pack cannot give it."""
        try:
            pack = obspack.open_pack(self.dir)
            if pack is not None:
                return hashlib.sha256(pack.read(os.path.basename(rel))).hexdigest()
        except FileNotFoundError:
            pass
        except OSError as exc:  # PackDamaged: named at the observation it breaks
            self._damaged(
                "observation_unreadable",
                f"{rel} (line {n}, {row['observation_id']}) cannot be read from the pack: {exc}",
                n,
                row,
            )
            return None
        # damaged once an acknowledged intent follows it (the recorder makes every stored
        # observation durable before it acknowledges an intent); at the tail of an unfinished
        # journal, a power cut before that (``finish``)
        self.missing_tail.append(
            (
                n,
                row,
                f"{rel}, referenced by line {n} ({row['observation_id']}), does not "
                "exist" + (" (nor in observations.pack)" if pack is not None else ""),
            )
        )
        return None

    def _observation_error(self, n: int, row: dict) -> None:
        ref = row.get("last_observation_id")
        if ref is not None and ref != self.last_observation_id:
            self._damaged(
                "unresolved_reference",
                f"line {n}: last_observation_id {ref!r} is not the last successful read ({self.last_observation_id!r})",
                n,
                row,
            )

    def _proposal(self, n: int, row: dict) -> None:
        if not self._need(n, row, "proposal_id", "observation_id", "action", "parameters", "reason", "source"):
            return
        if row["observation_id"] not in self.observations:
            self._unresolved(n, row, "observation_id", ev.Observation.KIND)
        if self._unique(n, row, "proposal_id", self.proposals):
            self.proposals[row["proposal_id"]] = Proposal(n, row["observation_id"], action_key(row))

    def _proposal_status(self, n: int, row: dict) -> None:
        if not self._need(n, row, "proposal_id", "status"):
            return
        prop = self.proposals.get(row["proposal_id"])
        if prop is None:
            self._unresolved(n, row, "proposal_id", ev.Proposal.KIND)
            return
        if row["status"] not in STATUSES:
            self._damaged(
                "bad_value", f"line {n}: status {row['status']!r} is not one of {', '.join(STATUSES)}", n, row
            )
        if prop.status is not None:
            self._damaged(
                "duplicate_event", f"line {n}: proposal {row['proposal_id']!r} already has a disposition", n, row
            )
            return
        prop.status = row["status"]
        self.statuses[row["status"]] += 1

    def _action_attempt(self, n: int, row: dict) -> None:
        for m, missing_row, message in self.missing_tail:
            self._damaged("observation_missing", message, m, missing_row)
        self.missing_tail.clear()
        if not self._need(n, row, "attempt_id", "proposal_id", "observation_id"):
            return
        pid = row["proposal_id"]
        prop = self.proposals.get(pid)
        if prop is None:
            self._unresolved(n, row, "proposal_id", ev.Proposal.KIND)
        elif prop.status != "execute":
            self._damaged(
                "attempt_not_executable",
                f"line {n}: attempt for proposal {pid!r} whose disposition is {prop.status!r}, not execute",
                n,
                row,
            )
        elif row["observation_id"] != prop.observation_id:
            self._damaged(
                "attempt_observation_mismatch",
                f"line {n}: the attempt names "
                f"observation {row['observation_id']!r}, its proposal "
                f"{prop.observation_id!r}",
                n,
                row,
            )
        elif action_key(row) != prop.action_key:
            self._damaged(
                "attempt_action_mismatch",
                f"line {n}: action or parameters differ from proposal {pid!r} (line {prop.line})",
                n,
                row,
            )
        if prop is not None and pid in self.attempt_of:
            self._damaged(
                "attempt_twice",
                f"line {n}: proposal {pid!r} already has attempt "
                f"{self.attempt_of[pid]!r}; an action is never sent twice",
                n,
                row,
            )
        if self._unique(n, row, "attempt_id", self.attempts):
            self.attempts[row["attempt_id"]] = Attempt(n, pid)
            self.attempt_of.setdefault(pid, row["attempt_id"])
        self.awaiting = row["attempt_id"]

    def _action_result(self, n: int, row: dict) -> None:
        if not self._need(n, row, "attempt_id", "outcome"):
            return
        att = self.attempts.get(row["attempt_id"])
        if att is None:
            self._unresolved(n, row, "attempt_id", ev.ActionAttempt.KIND)
            return
        if att.result_line is not None:
            self._damaged(
                "duplicate_event",
                f"line {n}: attempt {row['attempt_id']!r} already has a result on line {att.result_line}",
                n,
                row,
            )
            return
        att.result_line = n
        if row["outcome"] in self.outcomes:
            self.outcomes[row["outcome"]] += 1
        else:
            self._damaged(
                "bad_value", f"line {n}: outcome {row['outcome']!r} is not one of {', '.join(OUTCOMES)}", n, row
            )

    def _session_end(self, n: int, row: dict) -> None:
        if self.end is not None:
            self._damaged(
                "duplicate_event", f"line {n}: a second session_end (first on line {self.end['line']})", n, row
            )
            return
        unresolved = sorted(a for a, att in self.attempts.items() if att.result_line is None)
        if _str_list(row.get("unresolved_attempts")) != unresolved:
            self._damaged(
                "end_mismatch",
                f"line {n}: unresolved_attempts "
                f"{row.get('unresolved_attempts')!r}, but the attempts without a result "
                f"are {unresolved!r}",
                n,
                row,
            )
        awaiting = [self.awaiting] if self.awaiting else []
        if list(row.get("awaiting_observation_after_attempt") or []) != awaiting:
            self._damaged(
                "end_mismatch",
                f"line {n}: awaiting_observation_after_attempt "
                f"{row.get('awaiting_observation_after_attempt')!r}, but the journal "
                f"shows {awaiting!r}",
                n,
                row,
            )
        self.end = {
            "line": n,
            "sequence": row.get("sequence"),
            "row": row,
            "counts": dict(self.counts),
            "statuses": dict(self.statuses),
            "outcomes": dict(self.outcomes),
            "attempts": len(self.attempts),
            "observations": len(self.observations),
            "restarts": dict(self.restarts),
        }

    def _recorder_resumed(self, n: int, row: dict) -> None:
        self.resumes += 1
        self.last_resume_line = n
        after = row.get("resumed_after_sequence")
        if after != self.chain.sequence_before:
            self._damaged(
                "resume_mismatch",
                f"line {n}: resumed_after_sequence {after!r}, but "
                f"the last intact row before it is sequence {self.chain.sequence_before}",
                n,
                row,
            )
        for entry in row.get("torn_rows") or []:
            line = entry.get("line") if isinstance(entry, dict) else None
            if line not in self.chain.matched_marks:
                self._damaged(
                    "resume_mismatch",
                    f"line {n} names line {line!r} as torn, but that line is not the torn row it describes",
                    n,
                    row,
                )

    def _actor_restart(self, n: int, row: dict) -> None:
        self.restarts[row.get("actor", "?")] += 1

    # -- the end --------------------------------------------------------------------------
    def finish(self) -> None:
        add = self.add
        if self.chain.rows == 0:
            add(INCOMPLETE, "journal_empty", "the journal has no intact row: the session was cut off before it started")
            return
        if self.start is None:
            add(DAMAGED, "session_start_missing", "no session_start row")
        for m, missing_row, message in self.missing_tail:
            if self.end is None:  # stored after the last acknowledged intent: lost with a power cut
                add(
                    INCOMPLETE,
                    "observation_not_durable",
                    f"{message}: it was stored after the last "
                    "acknowledged intent, so it may never have been made durable (a power cut)",
                    line=m,
                    sequence=missing_row.get("sequence"),
                    event=missing_row.get("event"),
                )
            else:
                self._damaged("observation_missing", message, m, missing_row)
        if self.end is None:
            add(
                INCOMPLETE,
                "no_session_end",
                f"no session_end row: the journal stops at sequence "
                f"{self.chain.last_sequence} (line {self.chain.prev_line}); the session was cut "
                "off",
                line=self.chain.prev_line,
                sequence=self.chain.last_sequence,
            )
        for pid, prop in self.proposals.items():
            if prop.status is None:
                cut = self.end is None or self.last_resume_line > prop.line
                add(
                    INCOMPLETE if cut else DAMAGED,
                    "proposal_without_status",
                    f"proposal {pid!r} (line {prop.line}) has no disposition",
                    line=prop.line,
                    event=ev.Proposal.KIND,
                )
        if self.end is None:
            for aid, att in self.attempts.items():
                if att.result_line is None:
                    add(
                        INCOMPLETE,
                        "attempt_without_result",
                        f"attempt {aid!r} (line {att.line}) has no result: its outcome is "
                        "unknown (not a rejection, not permission to retry)",
                        line=att.line,
                        event=ev.ActionAttempt.KIND,
                    )

    def stats(self) -> dict[str, Any]:
        results = sum(1 for a in self.attempts.values() if a.result_line is not None)
        return {
            "observations": len(self.observations),
            "proposals": len(self.proposals),
            "attempts": len(self.attempts),
            "results": results,
            "action_results": dict(self.outcomes),
            "dispositions": dict(self.statuses),
            "recorder_resumes": self.resumes,
        }


_HANDLERS: dict[str, Callable[[Links, int, dict], None]] = {
    ev.SessionStart.KIND: Links._session_start,
    ev.Observation.KIND: Links._observation,
    ev.ObservationError.KIND: Links._observation_error,
    ev.Proposal.KIND: Links._proposal,
    ev.ProposalStatus.KIND: Links._proposal_status,
    ev.ActionAttempt.KIND: Links._action_attempt,
    ev.ActionResult.KIND: Links._action_result,
    ev.SessionEnd.KIND: Links._session_end,
    ev.RecorderResumed.KIND: Links._recorder_resumed,
    ev.ActorRestart.KIND: Links._actor_restart,
}
