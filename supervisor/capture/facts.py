"""Runs, wins and action results of one session, from its journal rows, one row at a time.

``CapturedSession.add(row)`` takes the rows of ``events.jsonl`` in order; ``facts()`` is what
``supervisor fleet report`` (``results.jsonl``) and ``supervisor view`` show, so a figure on a
page and the same figure in a fleet's results come from this one class.

A **run ends** on the game's own evidence, the same way whatever the policy:

* where the game shows its game-over screen (an observation whose ``state_type`` is
  ``game_over``, the first after the run's screens: menus and popups over it do not start a
  new one). Its outcome is inferred from the player's HP on that screen, as ``capture
  coverage`` infers it (the mod's ``game_over`` block does not say who won): ``victory``
  above 0, ``defeat`` at 0, with ``inferred_from: "player.hp"``; ``unknown`` when the state
  cannot be read (``read_state`` returns None or is not given), unless the policy recorded
  an outcome on that screen (a proposal's ``run_outcome`` other than ``unknown``): then the
  run has the policy's outcome, as stated (inferred only when the policy says from what);
* for a game without a game-over screen (an emulator cartridge), where the policy recorded
  the run's end in a proposal's ``run_outcome`` (the demo cartridge's policy stops with
  ``run_outcome: won``, read from the cartridge's memory): text, or an object with
  ``outcome``.

A **win** is ``won`` or ``victory``; ``runs_inferred`` counts the outcomes inferred from HP.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from actors.emulator.session.score_tally import ScoreTally
from protocol import obspack
from protocol.events import (
    ActionAttempt,
    ActionResult,
    ActorRestart,
    EmulatorStats,
    Observation,
    Proposal,
    ProposalStatus,
    RunIdentityChanged,
    SessionEnd,
    SessionStart,
)
from protocol.journal import is_int
from supervisor.capture.modeluse import ModelUse, model_spent
from supervisor.capture.runscore import RunScore, progress_score

WIN = ("won", "victory")
GAME_OVER = "game_over"
OVER_A_RUN = ("menu", "unknown")  # screens that do not start a new run (the main menu, a popup)
RESULTS = ("accepted", "rejected", "unknown")


def run_end(outcome: Any) -> dict[str, Any] | None:
    """One run's end from a proposal's ``run_outcome``: ``{"outcome", "won", "inferred_from",
    "floor", "act"}``, or None when the value names no outcome."""
    if isinstance(outcome, str) and outcome:
        return {"outcome": outcome, "won": outcome in WIN, "inferred_from": None, "floor": None, "act": None}
    if isinstance(outcome, dict) and isinstance(outcome.get("outcome"), str):
        name = outcome["outcome"]
        return {
            "outcome": name,
            "won": name in WIN,
            "inferred_from": outcome.get("inferred_from") if isinstance(outcome.get("inferred_from"), str) else None,
            "floor": outcome.get("floor") if is_int(outcome.get("floor")) else None,
            "act": outcome.get("act") if is_int(outcome.get("act")) else None,
        }
    return None


def game_over_outcome(state: Any) -> dict[str, Any]:
    """The outcome of a run from its game-over screen: victory while the player has HP left,
    defeat at 0, unknown when the screen cannot be read."""
    player = state.get("player") if isinstance(state, dict) and isinstance(state.get("player"), dict) else {}
    run = state.get("run") if isinstance(state, dict) and isinstance(state.get("run"), dict) else {}
    hp = player.get("hp")
    if not isinstance(hp, (int, float)) or isinstance(hp, bool):
        return {"outcome": "unknown", "won": False, "inferred_from": None, "floor": None, "act": None}
    outcome = "victory" if hp > 0 else "defeat"
    return {
        "outcome": outcome,
        "won": outcome in WIN,
        "inferred_from": "player.hp",
        "floor": run.get("floor") if is_int(run.get("floor")) else None,
        "act": run.get("act") if is_int(run.get("act")) else None,
    }


class CapturedSession:
    """Counts over a journal's rows, fed in order (see the module docstring). ``read_state``
    reads the observation a row names (``None`` when it cannot): the game-over screen's HP, and
    the character-select screen a ``menu_select`` was sent on.

    ``facts()`` also names what the session played with: ``model``, the profile's
    ``model.model`` as its ``session_start`` row records it (None when no model server or
    replay was configured), and ``character``, the STS2 character it played: the last one
    picked with an accepted ``menu_select`` on a character-select screen (the built-in policy
    marks its pick ``character_pick``; any other policy's pick is recognised on the screen),
    else the profile's ``policy.settings.character`` (a continued saved run picks none); None
    for a Game Boy session. Its model figures come from ``ModelUse`` (``modeluse``): ``model_calls`` (calls
    that may have spent tokens), ``model_tokens`` and ``model_cached_tokens`` (None when
    calls were made and none reported usage), ``model_cost_usd`` (the sum of the known costs;
    None when calls were made and none had a known cost: an unknown cost is never 0),
    ``model_cost_unknown_calls`` and ``model_fallbacks``. A Game Boy session that reads a
    score (``emulator.score``) adds ``score_final``, ``score_best``, ``milestones_reached``
    (how many) and ``game_over_frame``, counted by ``ScoreTally`` from its steps' results
    (``score``: the whole tally, milestone frames included); each is None when none was read."""

    def __init__(self, read_state: Callable[[dict], Any] | None = None):
        self.read_state = read_state
        self.observations = 0
        self.decisions = 0
        self.runs: list[dict[str, Any]] = []
        self.runs_entered = 0
        self.frames: int | None = None
        self.results = dict.fromkeys(RESULTS, 0)
        self.restarts = 0
        self.reason: str | None = None
        self.exit_code: int | None = None
        self._on_game_over = False  # the run that ended on the screen still shown is counted
        self._step = 0
        self.model = ModelUse()
        self.profile: dict | None = None  # the session_start row's profile
        self.character_picked: str | None = None
        self._menu: dict | None = None  # the newest observation row, when a menu
        self._pick_proposals: dict[str, str] = {}  # proposal_id -> character (character_pick)
        self._picks: dict[str, str] = {}  # attempt_id -> the character it picks
        self._seeded: bool | None = None  # the seed mark of the run being played
        self.score = ScoreTally()  # a Game Boy run's score (emulator.score)
        self.run_score = RunScore()  # the STS2 run being played: floor, bosses, ...
        self._bosses: list[tuple[int, bool]] = []  # per listed run: bosses beaten before its end, a boss fight on at it

    def add(self, row: dict[str, Any]) -> None:
        event = row.get("event")
        self.model.add(row)
        self._follow_character(row, event)
        self._follow_seed(row, event)
        if event == ActionResult.KIND:
            self.score.add_row(row)
        if event == SessionStart.KIND and isinstance(row.get("profile"), dict):
            self.profile = row["profile"]
        if event == Observation.KIND:
            self.observations += 1
            self._step = row.get("step") if is_int(row.get("step")) else self.observations
            kind = row.get("state_type")
            if not self._on_game_over:
                self.run_score.add(row)
            if kind == GAME_OVER and not self._on_game_over:
                self._on_game_over = True
                state = self.read_state(row) if self.read_state else None
                self._end_run(
                    {
                        **game_over_outcome(state),
                        "step": self._step,
                        "observation_id": row.get("observation_id"),
                        "sequence": row.get("sequence"),
                        "seeded": self._take_seeded(),
                    }
                )
            elif kind not in (GAME_OVER, *OVER_A_RUN):
                self._on_game_over = False
        elif event == ProposalStatus.KIND:
            self.decisions += 1
        elif event == Proposal.KIND and row.get("run_outcome") is not None:
            end = run_end(row["run_outcome"])
            if end is None:
                return
            if self._on_game_over:  # counted by its screen; the policy may know what it could not
                if self.runs and self.runs[-1]["outcome"] == "unknown" and end["outcome"] != "unknown":
                    self.runs[-1].update({k: v for k, v in end.items() if v is not None or k not in ("floor", "act")})
                    self._rescore(len(self.runs) - 1)
            else:
                self._end_run(
                    {
                        **end,
                        "step": self._step,
                        "proposal_id": row.get("proposal_id"),
                        "sequence": row.get("sequence"),
                        "seeded": self._take_seeded(),
                    }
                )
        elif event == ActionResult.KIND and row.get("outcome") in self.results:
            self.results[row["outcome"]] += 1
        elif event == RunIdentityChanged.KIND:
            self.runs_entered += 1
        elif event == ActorRestart.KIND:
            self.restarts += 1
        elif event == EmulatorStats.KIND and is_int(row.get("frame")):
            self.frames = row["frame"]
        elif event == SessionEnd.KIND:
            self.reason = row.get("reason") if isinstance(row.get("reason"), str) else None
            self.exit_code = row.get("exit_code") if is_int(row.get("exit_code")) else None

    def _end_run(self, run: dict[str, Any]) -> None:
        """List an ended run with its score (``runscore``: floor, act, elites, bosses, hp_end,
        progress_score), and start scoring the next."""
        score = self.run_score.result(bool(run.get("won")))
        run.update(
            {
                "floor": run.get("floor") if score["floor"] is None else score["floor"],
                "act": run.get("act") if score["act"] is None else score["act"],
                **{k: v for k, v in score.items() if k not in ("floor", "act")},
                "floors": sorted(self.run_score.floors.values(), key=lambda f: f["floor"]),
            }
        )
        self._bosses.append((self.run_score.bosses, self.run_score.fight == "boss"))
        self.runs.append(run)
        self.run_score.reset()

    def _rescore(self, i: int) -> None:
        """A run's outcome learnt after its screen (the policy's ``run_outcome``): a won run's
        last boss counts."""
        run = self.runs[i]
        if run.get("bosses") is None:
            return
        before, boss_at_end = self._bosses[i]
        run["bosses"] = before + (1 if run["won"] and boss_at_end else 0)
        run["progress_score"] = round(progress_score(run.get("floor"), run["bosses"]), 6)

    def run_in_progress(self) -> dict | None:
        """The score so far of a run still being played at the journal's end, with its
        ``floors`` (None without one)."""
        if self._on_game_over or not self.run_score.seen:
            return None
        return {
            **self.run_score.result(False),
            "ended": False,
            "floors": sorted(self.run_score.floors.values(), key=lambda f: f["floor"]),
        }

    def _follow_character(self, row: dict[str, Any], event: Any) -> None:
        """A character pick: proposed (``character_pick``) or sent on a character-select screen,
        then accepted by the game."""
        if event == Observation.KIND:
            self._menu = row if row.get("state_type") == "menu" else None
        elif event == Proposal.KIND and row.get("character_pick"):
            option = (row.get("parameters") or {}).get("option") if isinstance(row.get("parameters"), dict) else None
            if isinstance(option, str) and option:
                self._pick_proposals[str(row.get("proposal_id"))] = option
        elif event == ActionAttempt.KIND and row.get("action") == "menu_select":
            option = (row.get("parameters") or {}).get("option") if isinstance(row.get("parameters"), dict) else None
            if not isinstance(option, str) or not option:
                return
            picked = self._pick_proposals.pop(str(row.get("proposal_id")), None) or self._character_on_screen(
                row.get("observation_id"), option
            )
            if picked:
                self._picks[str(row.get("attempt_id"))] = picked
        elif event == ActionResult.KIND:
            picked = self._picks.pop(str(row.get("attempt_id")), None)
            if picked is not None and row.get("outcome") == "accepted":
                self.character_picked = picked

    def _follow_seed(self, row: dict[str, Any], event: Any) -> None:
        """A run's seed mark, ``seeded`` on a proposal row (the STS2 policy's, asked by
        ``policy.settings.run_seed``: docs/policy.md): each run listed carries the mark made
        while it was played (None without one); a mark made on its game-over screen is its own."""
        if event != Proposal.KIND or not isinstance(row.get("seeded"), bool):
            return
        if (
            row.get("state_type") == GAME_OVER
            and self._on_game_over
            and self.runs
            and self.runs[-1].get("seeded") is None
        ):
            self.runs[-1]["seeded"] = row["seeded"]
        else:
            self._seeded = row["seeded"]

    def _take_seeded(self) -> bool | None:
        seeded, self._seeded = self._seeded, None
        return seeded

    def _character_on_screen(self, observation_id: Any, option: str) -> str | None:
        """The character ``option`` names on the character-select screen it was sent on (the
        game's own spelling of its id; the mod matches ids case-insensitively)."""
        menu = self._menu
        if menu is None or menu.get("observation_id") != observation_id or self.read_state is None:
            return None
        state = self.read_state(menu)
        if not isinstance(state, dict) or state.get("menu_screen") != "character_select":
            return None
        for c in state.get("characters") or ():
            if isinstance(c, dict) and isinstance(c.get("id"), str) and c["id"].lower() == option.lower():
                return c["id"]
        return None

    def _section(self, name: str) -> dict:
        value = (self.profile or {}).get(name)
        return value if isinstance(value, dict) else {}

    @property
    def model_name(self) -> str | None:
        """The profile's ``model.model`` when a model server or a replay was configured."""
        model = self._section("model")
        name = model.get("model")
        configured = model.get("base_url") is not None or model.get("replay") is not None
        return name if configured and isinstance(name, str) and name else None

    @property
    def character(self) -> str | None:
        """The STS2 character played (see the class docstring); None for a Game Boy session."""
        if self._section("game").get("backend") == "pyboy":
            return None
        if self.character_picked:
            return self.character_picked
        settings = self._section("policy").get("settings")
        wanted = settings.get("character") if isinstance(settings, dict) else None
        return wanted if isinstance(wanted, str) and wanted else None

    @property
    def steps(self) -> int:
        """Observations, or decisions when the policy pipelines its steps (as ``supervisor
        start`` counts them)."""
        return max(self.decisions, self.observations)

    def facts(self) -> dict[str, Any]:
        wins = sum(1 for r in self.runs if r["won"])
        return {
            "steps": self.steps,
            "runs": len(self.runs),
            "wins": wins,
            "runs_inferred": sum(1 for r in self.runs if r["inferred_from"]),
            "frames": self.frames,
            **self.results,
            "reason": self.reason,
            "model_answers": self.model.answers,
            "model_errors": self.model.errors,
            "model": self.model_name,
            "character": self.character,
            **model_spent(self.model),
            **self.score.facts(),
            **self.run_scores(),
            "seeded_by": self.seeded_by,
        }

    @property
    def seeded_by(self) -> str | None:
        """What seeded the session's runs, so two arms can be paired by seed: ``run_seed`` when
        the policy applied ``policy.settings.run_seed`` to every run it marked; ``game.seed``
        for the built-in game (it generates its runs from it); ``emulator`` for a cartridge (it
        starts from the same state); None for the real game otherwise, or when a run was
        marked unseeded."""
        marks = [r.get("seeded") for r in self.runs if r.get("seeded") is not None]
        if marks and all(marks):
            return "run_seed"
        if marks:
            return None
        game = self._section("game")
        if game.get("backend") == "pyboy":
            return "emulator"
        return "game.seed" if game.get("builtin") else None

    def run_scores(self) -> dict[str, Any]:
        """A Slay the Spire 2 session's score, as results rows give it (``runscore``): over its
        ended runs, ``progress_score`` (their mean), ``floor``, ``act``, ``elites``, ``bosses``
        (the most any reached) and ``hp_end`` (the last one's); without an ended run, those of
        the run still being played at the journal's end. ``scored_runs`` says which:
        ``ended`` (how many is ``runs``), ``unfinished``, or None when no row showed progress."""
        scored = [r for r in self.runs if r.get("progress_score") is not None]
        keys = ("floor", "act", "elites", "bosses")
        if scored:
            best = {k: max((r[k] for r in scored if is_int(r.get(k))), default=None) for k in keys}
            mean = sum(r["progress_score"] for r in scored) / len(scored)
            return {
                **best,
                "hp_end": scored[-1].get("hp_end"),
                "progress_score": round(mean, 6),
                "scored_runs": "ended",
            }
        now = self.run_in_progress()
        if now is None:
            return {**dict.fromkeys(keys), "hp_end": None, "progress_score": None, "scored_runs": None}
        return {
            **{k: now[k] for k in keys},
            "hp_end": now["hp_end"],
            "progress_score": now["progress_score"],
            "scored_runs": "unfinished",
        }


def load_state(root: str, rel: Any) -> dict | None:
    """The JSON object in the file ``rel`` under ``root`` (an observation file, a sample), or
    None when it is absent, unreadable or not an object."""
    if not isinstance(rel, str):
        return None
    try:
        state = json.loads(obspack.read_bytes(root, rel))  # the file, or the session's pack
    except (OSError, ValueError, RecursionError):  # nesting past the recursion limit: not JSON to us
        return None
    return state if isinstance(state, dict) else None


def observation_reader(capture_root: str) -> Callable[[dict], Any]:
    """``read_state`` for a capture root: the parsed observation file an observation row names."""
    return lambda row: load_state(capture_root, row.get("path"))
