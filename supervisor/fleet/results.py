"""Fleet results: one row per session (``results.jsonl``), ``fleet.json``, and their totals.

Every row has the same keys, all scalars, so pandas (``pd.read_json(path, lines=True)``) and
DuckDB (``SELECT * FROM read_json_auto('results.jsonl')``) read it as a table. Each matrix
key is a column of its own (``game.seed``), besides ``cell``, the whole cell as text.

``outcome`` is one of

    ok             the supervisor exited 0 (run ended, max steps)
    failed         it exited non-zero for a reason of its own (startup failure, restart
                   intensity, stuck ...), or it was lost and could not be retried
    stopped        ``supervisor fleet stop`` (or a signal to the fleet) stopped it
    timed_out      it ran past ``session_timeout_s`` and was stopped
    needs_review   its node or worker died with an action in flight (docs/fleet.md): never
                   run again on its own
    not_run        the fleet was stopped before it started

Steps are observations, or decisions when the policy pipelines its steps (as ``supervisor
start`` counts them). Runs and wins come from the journal alone: a proposal carrying ``run_outcome`` ends a run
when it is a stop (the emulator's demo policy) or its action was accepted (the STS2 game
over dismissal); a win is ``run_outcome`` ``won`` or ``victory``.
"""
from __future__ import annotations

import json
import os
from typing import Any, Iterable

from protocol.events import (ActionAttempt, ActionResult, EmulatorStats, Observation, Proposal,
                             ProposalStatus, SessionEnd)
from protocol.journal import iter_lines

from . import layout
from .matrix import SessionPlan

OUTCOMES = ("ok", "failed", "stopped", "timed_out", "needs_review", "not_run")
WIN = ("won", "victory")
FIELDS = ("fleet", "index", "slot", "cell", "repeat", "outcome", "exit_code", "reason", "steps",
          "runs", "wins", "frames", "accepted", "rejected", "unknown", "duration_s", "started_at",
          "ended_at", "attempts", "session_id", "session_dir", "host", "detail")


def outcome_of(rec: dict) -> str:
    """The outcome of one finished attempt record (see ``runner.run_attempt``)."""
    code = rec.get("exit_code")
    if rec.get("timed_out"):
        return "timed_out"
    if rec.get("stop_requested") and rec.get("supervisor_pid") is None:
        return "not_run"
    if code == 0:
        return "ok"
    if rec.get("stop_requested") and code in (143, 130, -15, -2):
        return "stopped"
    return "failed"


def session_row(fleet: str, root: str, plan: SessionPlan, attempts: list[dict], outcome: str,
                detail: str = "") -> dict[str, Any]:
    """The results row of one session from its attempts and what its last session left."""
    last = attempts[-1] if attempts else {}
    row: dict[str, Any] = {k: None for k in FIELDS}
    row.update({"fleet": fleet, "index": plan.index, "slot": plan.slot, "cell": plan.cell_id,
                "repeat": plan.repeat, "outcome": outcome, "attempts": len(attempts),
                "exit_code": last.get("exit_code"), "host": last.get("host"),
                "detail": detail or last.get("error") or ""})
    row.update({k: v for k, v in plan.cell.items()})
    ids = last.get("session_ids") or []
    if last.get("started_at") and last.get("ended_at"):
        row["started_at"], row["ended_at"] = last["started_at"], last["ended_at"]
        row["duration_s"] = round(last["ended_at"] - last["started_at"], 3)
    if ids:
        session_dir = os.path.join(layout.capture_dir(os.path.join(root, plan.slot)), "sessions", ids[-1])
        row["session_id"] = ids[-1]
        row["session_dir"] = os.path.relpath(session_dir, root)
        row.update(journal_facts(session_dir))
    return row


def journal_facts(session_dir: str) -> dict[str, Any]:
    """Steps, runs, wins, frames, action results and the exit reason of one session."""
    facts: dict[str, Any] = {"steps": 0, "runs": 0, "wins": 0, "frames": None, "accepted": 0,
                             "rejected": 0, "unknown": 0, "reason": None}
    observations = 0
    outcome_of_proposal: dict[str, str] = {}
    outcome_of_attempt: dict[str, str] = {}
    journal = os.path.join(session_dir, "events.jsonl")
    if not os.path.exists(journal):
        return facts
    for line in iter_lines(journal):
        row = line.row or {}
        event = row.get("event")
        if event == Observation.KIND:
            observations += 1
        elif event == ProposalStatus.KIND:
            facts["steps"] += 1
        if event == Proposal.KIND and row.get("run_outcome"):
            if row.get("action") is None:
                _count_run(facts, row["run_outcome"])
            else:
                outcome_of_proposal[str(row.get("proposal_id"))] = row["run_outcome"]
        elif event == ActionAttempt.KIND and str(row.get("proposal_id")) in outcome_of_proposal:
            outcome_of_attempt[str(row.get("attempt_id"))] = outcome_of_proposal[str(row["proposal_id"])]
        elif event == ActionResult.KIND:
            kind = row.get("outcome")
            if kind in ("accepted", "rejected", "unknown"):
                facts[kind] += 1
            if kind == "accepted" and str(row.get("attempt_id")) in outcome_of_attempt:
                _count_run(facts, outcome_of_attempt.pop(str(row["attempt_id"])))
        elif event == EmulatorStats.KIND and isinstance(row.get("frame"), int):
            facts["frames"] = row["frame"]
        elif event == SessionEnd.KIND:
            facts["reason"] = row.get("reason")
    facts["steps"] = max(facts["steps"], observations)  # decisions, when a policy pipelines
    return facts


def _count_run(facts: dict, outcome: str) -> None:
    facts["runs"] += 1
    facts["wins"] += outcome in WIN


def totals(rows: Iterable[dict], elapsed_s: float | None = None) -> dict[str, Any]:
    rows = list(rows)
    out: dict[str, Any] = {o: sum(r["outcome"] == o for r in rows) for o in OUTCOMES}
    for k in ("steps", "runs", "wins"):
        out[k] = sum(r.get(k) or 0 for r in rows)
    frames = [r["frames"] for r in rows if isinstance(r.get("frames"), int)]
    out["frames"] = sum(frames) if frames else None
    out["sessions"] = len(rows)
    if elapsed_s:
        out["elapsed_s"] = round(elapsed_s, 3)
        out["steps_per_s"] = round(out["steps"] / elapsed_s, 2)
        out["frames_per_s"] = round(out["frames"] / elapsed_s, 2) if frames else None
    return out


def append_row(root: str, row: dict) -> None:
    with open(os.path.join(root, layout.RESULTS), "a", encoding="utf-8") as fh:
        fh.write(json.dumps(row, sort_keys=True, default=str) + "\n")
        fh.flush()
        os.fsync(fh.fileno())


def read_rows(root: str) -> list[dict]:
    path = os.path.join(root, layout.RESULTS)
    if not os.path.exists(path):
        return []
    return [line.row for line in iter_lines(path) if line.row is not None]


def write_fleet(root: str, data: dict) -> None:
    path = os.path.join(root, layout.FLEET_FILE)
    with open(path + ".tmp", "w", encoding="utf-8") as fh:
        json.dump(data, fh, indent=1, sort_keys=True, default=str)
    os.replace(path + ".tmp", path)


def read_fleet(root: str) -> dict:
    with open(os.path.join(root, layout.FLEET_FILE), encoding="utf-8") as fh:
        return json.load(fh)
