"""What the verifier found: findings, per-session and per-feed reports, the verdict and the
exit codes.

A finding has a severity:

    damaged     the evidence was edited, reordered, removed or does not agree with itself
                (an unparseable row in the middle, a broken hash chain, a sequence gap, a
                tampered observation file, a join key that does not resolve, a summary that
                disagrees with the journal)
    incomplete  the evidence stops short: a torn row (an unterminated last line, or a line a
                later ``recorder_resumed`` row names), no ``session_end``, no ``session.json``
    note        worth knowing, but it does not change the verdict (an observation file that
                no row references, a compatibility-feed row that was never written)

The verdict is the worst severity found: ``damaged`` wins over ``incomplete``, which wins over
``intact``. ``EXIT_CODES`` are the stable exit codes of ``supervisor capture verify``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from typing import Any

DAMAGED, INCOMPLETE, NOTE = "damaged", "incomplete", "note"
INTACT = "intact"

#: verdict -> exit code of ``supervisor capture verify``; 2 is a usage error or a path that
#: is neither a session directory nor a capture root (or cannot be read at all).
EXIT_CODES = {INTACT: 0, INCOMPLETE: 3, DAMAGED: 4}
EXIT_USAGE = 2

_RANK = {INTACT: 0, NOTE: 0, INCOMPLETE: 1, DAMAGED: 2}


@dataclasses.dataclass
class Finding:
    """One thing the verifier found. ``line`` is 1-based in ``file``; ``sequence`` and
    ``event`` are the row's when the finding is about a row."""

    severity: str
    code: str
    message: str
    file: str = "events.jsonl"
    line: int | None = None
    sequence: int | None = None
    event: str | None = None
    field: str | None = None  # the summary or feed field concerned

    def to_dict(self) -> dict[str, Any]:
        return {k: v for k, v in dataclasses.asdict(self).items() if v is not None}

    def where(self) -> str:
        parts = [self.file]
        if self.line is not None:
            parts.append(f"line {self.line}")
        if self.sequence is not None:
            parts.append(f"seq {self.sequence}")
        if self.event:
            parts.append(self.event)
        if self.field:
            parts.append(f"field {self.field}")
        return " ".join(parts)


def verdict_of(findings: Iterable[Finding]) -> str:
    worst = INTACT
    for f in findings:
        if _RANK[f.severity] > _RANK[worst]:
            worst = f.severity
    return worst


def worst(verdicts: Iterable[str]) -> str:
    out = INTACT
    for v in verdicts:
        if _RANK[v] > _RANK[out]:
            out = v
    return out


@dataclasses.dataclass
class SessionReport:
    """The result of verifying one session directory."""

    session: str
    path: str
    findings: list[Finding] = dataclasses.field(default_factory=list)
    stats: dict[str, Any] = dataclasses.field(default_factory=dict)

    @property
    def verdict(self) -> str:
        return verdict_of(self.findings)

    def to_dict(self) -> dict[str, Any]:
        return {
            "session": self.session,
            "path": self.path,
            "verdict": self.verdict,
            "stats": self.stats,
            "findings": [f.to_dict() for f in self.findings],
        }


@dataclasses.dataclass
class FeedReport:
    """The result of checking one root compatibility feed (``decisions.jsonl`` ...)."""

    name: str
    exists: bool = False
    rows: int = 0
    findings: list[Finding] = dataclasses.field(default_factory=list)

    @property
    def verdict(self) -> str:
        return verdict_of(self.findings)

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "exists": self.exists,
            "rows": self.rows,
            "verdict": self.verdict,
            "findings": [f.to_dict() for f in self.findings],
        }


@dataclasses.dataclass
class Report:
    """The whole answer for one PATH: a session directory or a capture root."""

    path: str
    kind: str  # "session" or "capture_root"
    sessions: list[SessionReport] = dataclasses.field(default_factory=list)
    feeds: list[FeedReport] = dataclasses.field(default_factory=list)
    findings: list[Finding] = dataclasses.field(default_factory=list)  # about the root itself

    @property
    def verdict(self) -> str:
        return worst([verdict_of(self.findings)] + [s.verdict for s in self.sessions] + [f.verdict for f in self.feeds])

    @property
    def exit_code(self) -> int:
        return EXIT_CODES[self.verdict]

    def counts(self) -> dict[str, int]:
        out = {INTACT: 0, INCOMPLETE: 0, DAMAGED: 0}
        for s in self.sessions:
            out[s.verdict] += 1
        return out

    def to_dict(self) -> dict[str, Any]:
        return {
            "report_version": 1,
            "path": self.path,
            "kind": self.kind,
            "verdict": self.verdict,
            "exit_code": self.exit_code,
            "session_verdicts": self.counts(),
            "sessions": [s.to_dict() for s in self.sessions],
            "feeds": [f.to_dict() for f in self.feeds],
            "findings": [f.to_dict() for f in self.findings],
        }
