"""Verify one session directory: ``events.jsonl``, ``observations/`` and ``session.json``.

Two streaming passes over the journal: a cheap one that only collects the torn rows named by
``recorder_resumed`` rows (``stream.resume_marks``), then the full pass, in which each line
goes through ``chain.Chain`` (torn rows, sequences, hash chain), each intact row through
``links.Links`` (join keys, observation files) and ``summary.SummaryCheck`` (the pinned rows).
"""

from __future__ import annotations

import dataclasses
import os

from protocol import obspack
from protocol.journal import iter_lines

from .chain import Chain
from .findings import DAMAGED, INCOMPLETE, NOTE, Finding, SessionReport
from .links import Links
from .stream import resume_marks
from .summary import SummaryCheck

JOURNAL = "events.jsonl"
MAX_ORPHANS_LISTED = 20


@dataclasses.dataclass
class Verified:
    """One session's report, plus what the root feed checks need: its join index and its
    summary (``None`` when there is no journal or no readable ``session.json``)."""

    report: SessionReport
    links: Links | None = None
    summary: dict | None = None


def verify_session(session_dir: str, capture_root: str | None = None) -> Verified:
    """Verify one session directory."""
    session_dir = os.path.abspath(session_dir)
    root = os.path.abspath(capture_root or os.path.dirname(os.path.dirname(session_dir)))
    sid = os.path.basename(session_dir)
    report = SessionReport(sid, session_dir)

    def add(severity: str, code: str, message: str, **kw) -> None:
        report.findings.append(Finding(severity, code, message, **kw))

    journal = os.path.join(session_dir, JOURNAL)
    if not os.path.isfile(journal):
        _no_journal(session_dir, add)
        return Verified(report)
    summary = SummaryCheck(session_dir, sid, add)
    try:
        chain, links = _journal_pass(journal, sid, session_dir, root, summary, add)
    except OSError as exc:
        add(DAMAGED, "unreadable_file", f"{JOURNAL} cannot be read: {exc}")
        return Verified(report, None, summary.summary)
    links.finish()
    summary.finish(chain, links)
    _orphans(session_dir, links, add)
    report.stats = {
        "lines": chain.lines,
        "rows": chain.rows,
        "last_sequence": chain.last_sequence,
        "torn_rows": list(chain.torn),
        **links.stats(),
    }
    return Verified(report, links, summary.summary)


def _journal_pass(
    journal: str, sid: str, session_dir: str, root: str, summary: SummaryCheck, add
) -> tuple[Chain, Links]:
    chain = Chain(sid, resume_marks(journal), add)
    links = Links(sid, session_dir, root, chain, add)
    for line in iter_lines(journal):
        row = chain.accept(line)
        if row is None:
            continue
        summary.observe(line.number, row, chain.last_digest)
        links.apply(line.number, row)
    return chain, links


def _no_journal(session_dir: str, add) -> None:
    try:
        contents = [n for n in os.listdir(session_dir) if n not in ("observations", obspack.PACK)]
        observations = os.listdir(os.path.join(session_dir, "observations"))
    except OSError:
        contents, observations = [], []
    if contents or observations:
        add(
            DAMAGED,
            "journal_missing",
            f"no {JOURNAL}, but the directory holds "
            f"{len(contents) + len(observations)} other files: the journal was removed",
        )
    else:
        add(INCOMPLETE, "journal_missing", f"no {JOURNAL}: the session was cut off before its first row")


def _orphans(session_dir: str, links: Links, add) -> None:
    """Observation files no row references: a crash between storing a read and recording it
    leaves one. Worth a note; it changes no verdict."""
    try:
        names = sorted(os.listdir(os.path.join(session_dir, "observations")))
    except OSError:
        names = []
    try:
        pack = obspack.open_pack(session_dir)
    except OSError:
        pack = None  # a damaged pack is named at the observations it breaks
    names = sorted(set(names) | set(pack.names() if pack is not None else []))
    orphans = [n for n in names if n not in links.files_seen]
    for name in orphans[:MAX_ORPHANS_LISTED]:
        add(
            NOTE, "orphan_observation_file", f"observations/{name} is referenced by no row", file=f"observations/{name}"
        )
    if len(orphans) > MAX_ORPHANS_LISTED:
        add(
            NOTE,
            "orphan_observation_file",
            f"... and {len(orphans) - MAX_ORPHANS_LISTED} more unreferenced observation files",
            file="observations/",
        )
