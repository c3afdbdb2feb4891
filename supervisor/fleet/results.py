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
start`` counts them). Runs and wins come from the journal alone, by
``supervisor.capture.facts.CapturedSession``: a run ends on the game-over screen the policy
recorded (its ``run_outcome``), a win is ``won`` or ``victory``, and ``runs_inferred`` counts
the outcomes the policy inferred rather than read (the STS2 policy infers them from the
player's HP).

``model`` and ``character`` say what the session played with (its ``session_start`` row's
profile and its accepted character pick, ``CapturedSession``; for a session that left no journal,
what its plan names), and ``model_tokens``, ``model_cost_usd`` ... what its model calls spent:
``model_cost_usd`` is the sum of the known costs, None when calls were made and none had a
known cost (an unknown cost is never written as 0), and ``model_cost_unknown_calls`` counts
the calls whose cost is unknown.

A Game Boy session that reads a score (``emulator.score``, docs/emulator.md) has
``score_final``, ``score_best``, ``milestones_reached`` and ``game_over_frame``; None each for
a session that read none.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from typing import Any

from actors.runtime.durable import replace_durably, sync, sync_path
from protocol.journal import iter_lines
from supervisor.capture.facts import CapturedSession, observation_reader

from . import layout
from .matrix import SessionPlan

OUTCOMES = ("ok", "failed", "stopped", "timed_out", "needs_review", "not_run")
FIELDS = (
    "fleet",
    "index",
    "slot",
    "cell",
    "repeat",
    "outcome",
    "exit_code",
    "reason",
    "steps",
    "runs",
    "wins",
    "runs_inferred",
    "model",
    "character",
    "model_answers",
    "model_errors",
    "model_calls",
    "model_tokens",
    "model_cached_tokens",
    "model_cost_usd",
    "model_cost_unknown_calls",
    "model_fallbacks",
    "frames",
    "score_final",
    "score_best",
    "milestones_reached",
    "game_over_frame",
    "progress_score",
    "floor",
    "act",
    "elites",
    "bosses",
    "hp_end",
    "scored_runs",
    "seeded_by",
    "accepted",
    "rejected",
    "unknown",
    "duration_s",
    "started_at",
    "ended_at",
    "attempts",
    "session_id",
    "session_dir",
    "host",
    "detail",
)


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


def session_row(
    fleet: str, root: str, plan: SessionPlan, attempts: list[dict], outcome: str, detail: str = ""
) -> dict[str, Any]:
    """The results row of one session from its attempts and what its last session left."""
    last = attempts[-1] if attempts else {}
    row: dict[str, Any] = dict.fromkeys(FIELDS)
    row.update(
        {
            "fleet": fleet,
            "index": plan.index,
            "slot": plan.slot,
            "cell": plan.cell_id,
            "repeat": plan.repeat,
            "outcome": outcome,
            "attempts": len(attempts),
            "exit_code": last.get("exit_code"),
            "host": last.get("host"),
            "detail": detail or last.get("error") or "",
        }
    )
    row.update(plan.cell)
    ids = last.get("session_ids") or []
    if last.get("started_at") and last.get("ended_at"):
        row["started_at"], row["ended_at"] = last["started_at"], last["ended_at"]
        row["duration_s"] = round(last["ended_at"] - last["started_at"], 3)
    recorded = None
    if ids:
        session_dir = os.path.join(layout.capture_dir(os.path.join(root, plan.slot)), "sessions", ids[-1])
        row["session_id"] = ids[-1]
        row["session_dir"] = os.path.relpath(session_dir, root)
        recorded = read_journal(session_dir)
        row.update(recorded.facts())
    if recorded is None or recorded.profile is None:  # no journal says it: what the plan names
        row["model"] = plan.model
        row["character"] = row.get("character") or plan.character
    return row


def read_journal(session_dir: str) -> CapturedSession:
    """One session's journal, read through ``CapturedSession``."""
    acc = CapturedSession(read_state=observation_reader(os.path.dirname(os.path.dirname(session_dir))))
    journal = os.path.join(session_dir, "events.jsonl")
    if os.path.exists(journal):
        for line in iter_lines(journal):
            if line.row is not None:
                acc.add(line.row)
    return acc


def journal_facts(session_dir: str) -> dict[str, Any]:
    """Steps, runs, wins, frames, action results, the exit reason, the model and character and
    what the model spent, of one session (``supervisor.capture.facts``: the same counts
    ``supervisor view`` shows)."""
    return read_journal(session_dir).facts()


def model_totals(rows: Iterable[dict]) -> dict[str, Any]:
    """What the rows' model calls spent: ``model_calls``, ``model_tokens`` and
    ``model_cached_tokens`` (sums of the known counts; None when calls were made and none
    reported usage), ``model_cost_usd`` (the sum of the known costs; None when calls were
    made and none had a known cost), ``model_cost_unknown_calls``, ``model_fallbacks``, and
    ``model_cost_state``: ``known`` (every call's cost is known, or no call was made),
    ``partial`` (some are not: ``model_cost_usd`` is a lower bound) or ``unknown``.

    A row written before results carried costs (no ``model_calls``) counts its answers and
    errors as calls of unknown cost and tokens."""
    calls = unknown = fallbacks = tokens = cached = 0
    cost = 0.0
    tokens_known = tokens_unknown = False
    for r in rows:
        if "model_calls" in r:
            n, u = r.get("model_calls") or 0, r.get("model_cost_unknown_calls") or 0
        else:
            n = u = (r.get("model_answers") or 0) + (r.get("model_errors") or 0)
        calls, unknown, fallbacks = calls + n, unknown + u, fallbacks + (r.get("model_fallbacks") or 0)
        if isinstance(r.get("model_cost_usd"), (int, float)):
            cost += r["model_cost_usd"]
        if isinstance(r.get("model_tokens"), int):
            tokens += r["model_tokens"]
            cached += r.get("model_cached_tokens") or 0
            tokens_known = True
        elif n:
            tokens_unknown = True
    state = "known" if not unknown else ("partial" if unknown < calls else "unknown")
    return {
        "model_calls": calls,
        "model_tokens": tokens if tokens_known or not tokens_unknown else None,
        "model_cached_tokens": cached if tokens_known or not tokens_unknown else None,
        "model_tokens_complete": not tokens_unknown,
        "model_cost_usd": None if state == "unknown" else round(cost, 9),
        "model_cost_unknown_calls": unknown,
        "model_cost_state": state,
        "model_fallbacks": fallbacks,
    }


def totals(rows: Iterable[dict], elapsed_s: float | None = None) -> dict[str, Any]:
    rows = list(rows)
    out: dict[str, Any] = {o: sum(r["outcome"] == o for r in rows) for o in OUTCOMES}
    for k in ("steps", "runs", "wins"):
        out[k] = sum(r.get(k) or 0 for r in rows)
    frames = [r["frames"] for r in rows if isinstance(r.get("frames"), int)]
    out["frames"] = sum(frames) if frames else None
    out["sessions"] = len(rows)
    out.update(model_totals(rows))
    if elapsed_s:
        out["elapsed_s"] = round(elapsed_s, 3)
        out["steps_per_s"] = round(out["steps"] / elapsed_s, 2)
        out["frames_per_s"] = round(out["frames"] / elapsed_s, 2) if frames else None
    return out


def append_row(root: str, row: dict) -> None:
    """Append one row, durable when this returns (the file's name too, when it is new)."""
    path = os.path.join(root, layout.RESULTS)
    new = not os.path.exists(path)
    with open(path, "a", encoding="utf-8") as fh:
        fh.write(json.dumps(row, sort_keys=True, default=str) + "\n")
        fh.flush()
        sync(fh.fileno())
    if new:
        sync_path(root)


def read_rows(root: str) -> list[dict]:
    path = os.path.join(root, layout.RESULTS)
    if not os.path.exists(path):
        return []
    return [line.row for line in iter_lines(path) if line.row is not None]


def write_fleet(root: str, data: dict) -> None:
    """Replace ``fleet.json`` durably: a power cut leaves the old one or the new one, so a fleet
    whose sessions started can always be resumed."""
    replace_durably(
        os.path.join(root, layout.FLEET_FILE), json.dumps(data, indent=1, sort_keys=True, default=str).encode()
    )


def read_fleet(root: str) -> dict:
    with open(os.path.join(root, layout.FLEET_FILE), encoding="utf-8") as fh:
        return json.load(fh)
