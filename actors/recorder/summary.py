"""Finalization: ``session_end``, the summary ``session.json`` and the root session feed.

The summary restates what the journal shows (counts, outcomes, unresolved links) and pins
the journal's last sequence and last row digest, so that a verifier can tell whether the
journal was cut or edited after the summary was written. It never invents a success label.
"""
from __future__ import annotations

import json
import logging
import os
from typing import TYPE_CHECKING

from . import files
from .writer import utc_now

log = logging.getLogger("recorder")

if TYPE_CHECKING:
    from .service import Recorder


def _outcome_candidates(rec: "Recorder") -> tuple[list[str] | None, str | None]:
    outcome_dir = rec.ctx.setting("capture.outcome_dir")
    if not outcome_dir:
        return None, None
    try:
        with open(os.path.join(rec.dir, "outcome_baseline.json"), encoding="utf-8") as fh:
            before = set(json.load(fh))
        after = set(os.listdir(outcome_dir))
        return sorted(after - before), None
    except (OSError, ValueError) as exc:
        return None, f"{type(exc).__name__}: {exc}"


def finalize(rec: "Recorder", reason: str, exit_code: int) -> dict:
    """Append ``session_end`` (unless it is there: a retry, or a resume after a failure
    between the row and the summary), then write the summary and the feed row from it."""
    idx = rec.index
    if idx.ended is None:
        candidates, outcome_error = _outcome_candidates(rec)
        if outcome_error:
            rec.append("outcome_error", {"error": outcome_error,
                                         "outcome_dir": rec.ctx.setting("capture.outcome_dir")})
        rec.append("session_end", {
            "exit_code": exit_code, "reason": reason,
            "outcome_file_candidates": candidates,
            "awaiting_observation_after_attempt": idx.awaiting_observation(),
            "unresolved_attempts": idx.unresolved_attempts(),
        }, durable=True)
    end = idx.ended
    reason, exit_code, candidates = end["reason"], end["exit_code"], end.get("outcome_file_candidates")
    outcome_error = next((r.get("error") for r in rec.cache if r.get("event") == "outcome_error"), None)
    journal_rel = os.path.relpath(rec.journal_path, rec.root)
    started = idx.started or {}
    summary = {
        "schema_version": 1,
        "session": rec.sid,
        "started_at": started.get("recorded_at"),
        "ended_at": end["recorded_at"],
        "exit_code": exit_code,
        "reason": reason,
        "dry_run": bool(rec.ctx.setting("session.dry_run", False)),
        "steps": idx.observations,
        "events": dict(sorted(idx.counts.items())),
        "dispositions": dict(sorted(idx.statuses.items())),
        "action_results": dict(idx.outcomes),
        "attempts": idx.attempt_count,
        "unresolved_attempts": end.get("unresolved_attempts", []),
        "awaiting_observation_after_attempt": end.get("awaiting_observation_after_attempt", []),
        "actor_restarts": dict(sorted(idx.restarts.items())),
        "model_usage": dict(sorted(idx.model_usage.items())),
        "outcome_file_candidates": candidates,
        "recording_path": journal_rel,
        "journal": {"last_sequence": end["sequence"], "last_row_sha256": rec.writer.last_digest},
        "finalized_at": utc_now(),
    }
    files.write_json_atomic(os.path.join(rec.dir, "session.json"), summary)
    feed = {"session": rec.sid, "started_at": summary["started_at"], "ended_at": summary["ended_at"],
            "exit_code": exit_code, "reason": reason, "steps": idx.observations,
            "outcome_files": candidates, "recording_path": journal_rel}
    if outcome_error:
        feed["outcome_error"] = outcome_error
    try:
        files.append_feed(os.path.join(rec.root, "sessions.jsonl"), feed)
    except OSError as exc:  # after session_end nothing more is appended; the log keeps it
        log.error("sessions.jsonl append failed: %s", exc)
    return summary
