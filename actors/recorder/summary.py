"""Finalization's files: the summary ``session.json`` and the root session feed.

The summary restates what the journal shows (counts, outcomes, unresolved links) and pins
the journal's last sequence and last row digest, so that a verifier can tell whether the
journal was cut or edited after the summary was written. It never invents a success label.
The ``session_end`` row itself is the recorder's (``rules.Recorder.on_finalize``); this
module only reads the index and writes files, so it depends on no recorder state.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import os

from actors.emulator.session.score_tally import ScoreTally

from . import files
from .index import SessionIndex
from .writer import utc_now

log = logging.getLogger("recorder")


@dataclasses.dataclass(frozen=True)
class Capture:
    """Where a session's capture lives and what the summary pins of its journal."""

    root: str
    session_id: str
    session_dir: str
    journal_path: str
    dry_run: bool
    last_digest: str


def outcome_candidates(outcome_dir: str | None, session_dir: str) -> tuple[list[str] | None, str | None]:
    """Files new in ``outcome_dir`` since the session started, or the error that prevented
    telling (None, None when no outcome directory is configured)."""
    if not outcome_dir:
        return None, None
    try:
        with open(os.path.join(session_dir, "outcome_baseline.json"), encoding="utf-8") as fh:
            before = set(json.load(fh))
        after = set(os.listdir(outcome_dir))
        return sorted(after - before), None
    except (OSError, ValueError) as exc:
        return None, f"{type(exc).__name__}: {exc}"


def read(session_dir: str) -> dict | None:
    """The written summary, or None when it is not (yet) there or unreadable."""
    try:
        with open(os.path.join(session_dir, "session.json"), encoding="utf-8") as fh:
            return json.load(fh)
    except (OSError, ValueError):
        return None


def write(cap: Capture, idx: SessionIndex) -> dict:
    """Write ``session.json`` and the feed row from the index (which has seen
    ``session_end``); return the summary."""
    end = idx.ended
    assert end is not None, "the summary is written after session_end"
    reason, exit_code, candidates = end["reason"], end["exit_code"], end.get("outcome_file_candidates")
    journal_rel = os.path.relpath(cap.journal_path, cap.root)
    summary = {
        "schema_version": 1,
        "session": cap.session_id,
        "started_at": idx.started_at,
        "ended_at": end["recorded_at"],
        "exit_code": exit_code,
        "reason": reason,
        "dry_run": cap.dry_run,
        "steps": idx.observations,
        "events": dict(sorted(idx.counts.items())),
        "dispositions": dict(sorted(idx.statuses.items())),
        "action_results": dict(idx.outcomes),
        "attempts": idx.attempt_count,
        "unresolved_attempts": end.get("unresolved_attempts", []),
        "awaiting_observation_after_attempt": end.get("awaiting_observation_after_attempt", []),
        "actor_restarts": dict(sorted(idx.restarts.items())),
        "model_usage": dict(sorted(idx.model_usage.items())),
        "score": ScoreTally(idx.score).as_dict(),  # a Game Boy run's score (emulator.score), else None
        "outcome_file_candidates": candidates,
        "recording_path": journal_rel,
        "journal": {"last_sequence": end["sequence"], "last_row_sha256": cap.last_digest},
        "finalized_at": utc_now(),
    }
    files.write_json_atomic(os.path.join(cap.session_dir, "session.json"), summary)
    feed = {
        "session": cap.session_id,
        "started_at": summary["started_at"],
        "ended_at": summary["ended_at"],
        "exit_code": exit_code,
        "reason": reason,
        "steps": idx.observations,
        "outcome_files": candidates,
        "recording_path": journal_rel,
    }
    if idx.outcome_error:
        feed["outcome_error"] = idx.outcome_error
    try:
        files.append_feed(os.path.join(cap.root, "sessions.jsonl"), feed)
    except OSError as exc:  # after session_end nothing more is appended; the log keeps it
        log.error("sessions.jsonl append failed: %s", exc)
    return summary
