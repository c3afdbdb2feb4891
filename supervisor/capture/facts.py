"""Runs, wins and action results of one session, from its journal rows, one row at a time.

``SessionFacts.add(row)`` takes the rows of ``events.jsonl`` in order; ``facts()`` is what
``supervisor fleet report`` (``results.jsonl``) and ``supervisor view`` show, so a figure on a
page and the same figure in a fleet's results come from this one class.

A **run ends** where the game showed its game-over screen and the policy recorded it: the
first proposal carrying ``run_outcome`` after the game left its last game-over screen (the
proposal is the policy's reading of the screen the game showed, whether or not the dismissal
that followed was sent: a session that stops at the end of its run never sends it). Several
proposals on one game-over screen (a refused dismissal tried again) end one run. The outcome
is ``run_outcome`` itself when it is text (the emulator's demo policy: ``won``) or its
``outcome`` when it is an object (the STS2 policy: ``{"outcome": "victory", "inferred_from":
"player.hp", "floor": 9, ...}``); an outcome the game did not state but the policy inferred
carries ``inferred_from`` and is counted in ``inferred``. A **win** is ``won`` or ``victory``.
"""
from __future__ import annotations

from typing import Any

from protocol.events import (ActionResult, ActorRestart, EmulatorStats, Observation, Proposal,
                             ProposalStatus, RunIdentityChanged, SessionEnd)

WIN = ("won", "victory")
GAME_OVER = "game_over"
RESULTS = ("accepted", "rejected", "unknown")


def run_end(outcome: Any) -> dict[str, Any] | None:
    """One run's end from a proposal's ``run_outcome``: ``{"outcome", "won", "inferred_from",
    "floor", "act"}``, or None when the value names no outcome."""
    if isinstance(outcome, str) and outcome:
        return {"outcome": outcome, "won": outcome in WIN, "inferred_from": None,
                "floor": None, "act": None}
    if isinstance(outcome, dict) and isinstance(outcome.get("outcome"), str):
        name = outcome["outcome"]
        return {"outcome": name, "won": name in WIN,
                "inferred_from": outcome.get("inferred_from") if isinstance(outcome.get("inferred_from"), str) else None,
                "floor": outcome.get("floor") if _is_int(outcome.get("floor")) else None,
                "act": outcome.get("act") if _is_int(outcome.get("act")) else None}
    return None


def _is_int(v) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


class SessionFacts:
    """Counts over a journal's rows, fed in order (see the module docstring)."""

    def __init__(self):
        self.observations = 0
        self.decisions = 0
        self.runs: list[dict[str, Any]] = []
        self.runs_entered = 0
        self.frames: int | None = None
        self.results = {k: 0 for k in RESULTS}
        self.restarts = 0
        self.reason: str | None = None
        self.exit_code: int | None = None
        self._on_game_over = False   # a run end was counted on the screen still shown
        self._step = 0

    def add(self, row: dict[str, Any]) -> None:
        event = row.get("event")
        if event == Observation.KIND:
            self.observations += 1
            self._step = row.get("step") if _is_int(row.get("step")) else self.observations
            if row.get("state_type") != GAME_OVER:
                self._on_game_over = False
        elif event == ProposalStatus.KIND:
            self.decisions += 1
        elif event == Proposal.KIND and row.get("run_outcome") is not None and not self._on_game_over:
            end = run_end(row["run_outcome"])
            if end is not None:
                self.runs.append({**end, "step": self._step, "proposal_id": row.get("proposal_id"),
                                  "sequence": row.get("sequence")})
                self._on_game_over = row.get("state_type") == GAME_OVER
        elif event == ActionResult.KIND and row.get("outcome") in self.results:
            self.results[row["outcome"]] += 1
        elif event == RunIdentityChanged.KIND:
            self.runs_entered += 1
        elif event == ActorRestart.KIND:
            self.restarts += 1
        elif event == EmulatorStats.KIND and _is_int(row.get("frame")):
            self.frames = row["frame"]
        elif event == SessionEnd.KIND:
            self.reason = row.get("reason") if isinstance(row.get("reason"), str) else None
            self.exit_code = row.get("exit_code") if _is_int(row.get("exit_code")) else None

    @property
    def steps(self) -> int:
        """Observations, or decisions when the policy pipelines its steps (as ``supervisor
        start`` counts them)."""
        return max(self.decisions, self.observations)

    def facts(self) -> dict[str, Any]:
        wins = sum(1 for r in self.runs if r["won"])
        return {"steps": self.steps, "runs": len(self.runs), "wins": wins,
                "runs_inferred": sum(1 for r in self.runs if r["inferred_from"]),
                "frames": self.frames, **self.results, "reason": self.reason}
