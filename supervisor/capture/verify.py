"""Verify a capture (``supervisor capture verify PATH`` prints the report): ``verify_path``.

PATH is one session directory (``<root>/sessions/<id>``, or its ``events.jsonl``), a whole
capture root (every session in ``<root>/sessions/``, plus the root feeds
``decisions.jsonl`` and ``sessions.jsonl``: whole lines, ids that resolve), or a fleet root
(``supervisor fleet``: every session slot's capture root, docs/fleet.md).

Checked for each session: the hash chain; sequences 1, 2, 3, ...; schema_version; the
session id of every row; every observation file exists and hashes to its row's sha256;
every join key resolves backwards (proposal -> observation, status -> proposal, attempt ->
proposal with status execute and the same observation, result -> attempt, after_attempt_id
-> the attempt just before, on the first successful read after it only); every attempt has a
result or is listed in session_end's unresolved_attempts; session.json agrees with the
journal (last sequence, last row digest, counts). See docs/journal.md.

The report's exit code (``findings.py``):
  0  complete and intact (every session, and the feeds)
  3  incomplete evidence: a torn row (named by line), no session_end, no session.json
  4  damaged: edited, reordered, removed or mismatched content (wins over incomplete)
A PATH that is not a session directory, capture root or fleet root raises ``NotACapture``.
"""

from __future__ import annotations

import os
from collections.abc import Callable

from . import fleetroot
from .errors import NotACapture
from .feeds import DecisionsFeed, SessionsFeed
from .findings import NOTE, Finding, Report
from .session import JOURNAL, verify_session

Progress = Callable[[int, int, str], None]


def resolve(path: str) -> tuple[str, str]:
    """``("session" | "capture_root", absolute directory)``; raises ``NotACapture``."""
    p = os.path.abspath(path)
    if not os.path.exists(p):
        raise NotACapture(path, "no such file or directory")
    if os.path.isfile(p) and os.path.basename(p) == JOURNAL:
        p = os.path.dirname(p)
    if not os.path.isdir(p):
        raise NotACapture(path, "not a directory (give a session directory or a capture root)")
    if fleetroot.is_fleet_root(p):
        return "fleet_root", p
    if os.path.isdir(os.path.join(p, "sessions")) and not os.path.exists(os.path.join(p, JOURNAL)):
        return "capture_root", p
    if (
        os.path.exists(os.path.join(p, JOURNAL))
        or os.path.exists(os.path.join(p, "session.json"))
        or os.path.basename(os.path.dirname(p)) == "sessions"
    ):
        return "session", p
    raise NotACapture(path, "neither a session directory (with events.jsonl) nor a capture root (with sessions/)")


def verify_path(path: str, progress: Progress | None = None) -> Report:
    """Verify PATH and return the report; raises ``NotACapture`` for a PATH it cannot use."""
    kind, target = resolve(path)
    report = Report(target, kind)
    if kind == "session":
        report.sessions.append(verify_session(target).report)
        return report
    for root in fleetroot.capture_roots(target) if kind == "fleet_root" else [target]:
        _verify_root(root, report, progress)
    return report


def _verify_root(root: str, report: Report, progress: Progress | None) -> None:
    sessions_dir = os.path.join(root, "sessions")
    try:
        names = sorted(os.listdir(sessions_dir))
    except OSError as exc:
        raise NotACapture(root, f"cannot list sessions/: {exc}") from exc
    dirs = [n for n in names if os.path.isdir(os.path.join(sessions_dir, n))]
    for stray in sorted(set(names) - set(dirs)):
        report.findings.append(
            Finding(NOTE, "stray_file", f"sessions/{stray} is not a session directory", file=f"sessions/{stray}")
        )
    known = set(dirs)
    decisions, sessions_feed = DecisionsFeed(root, known), SessionsFeed(root, known)
    for i, name in enumerate(dirs):
        if progress:
            progress(i, len(dirs), name)
        done = verify_session(os.path.join(sessions_dir, name), root)
        report.sessions.append(done.report)
        decisions.check_session(name, done.links)
        sessions_feed.check_session(name, done.summary)
    if progress:
        progress(len(dirs), len(dirs), "")
    for feed in (decisions.report, sessions_feed.report):
        if root != report.path:  # a fleet root: name each slot's feeds by their path
            feed.name = os.path.join(os.path.relpath(root, report.path), feed.name)
        report.feeds.append(feed)
