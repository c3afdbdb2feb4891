"""Screen coverage of STS2MCP captures (``supervisor capture coverage PATH`` prints it).

Reads each session's journal and observation files (nothing is written) and reports:

* every **screen variant** seen — the state's ``state_type`` refined the way the mod's
  ``BuildGameState`` (McpMod.StateBuilder.cs) tells screens apart: the menu's ``menu_screen``
  (and a main menu offering ``continue``), a combat room whose fight just ended (no
  ``battle``, only ``message``), the treasure room's "Opening chest..." read, a shop or fake
  merchant whose inventory is not ready (``error``), each ``card_select`` ``screen_type``,
  an ancient's dialogue, a used rest site. Names follow ``vendor/sts2mcp/`` sample names
  (``<state_type>[__<variant>]``), so a variant never seen points at its sample;
* every **action kind** attempted, with its accepted / rejected / unknown results;
* **runs**: game-over screens reached (victory or defeat *inferred* from the player's HP on
  that screen — the mod's ``game_over`` block does not say), and runs entered;
* each session's exit reason; a session that ended ``stuck`` counts as a stall;
* a Game Boy session's score when it read one (``emulator.score``): final and best, the frame
  each milestone was first reached, the first game-over frame;
* each Slay the Spire 2 session's runs with their scores (``CapturedSession``, the same figures as
  ``fleet report`` and ``supervisor view``): outcome, floor, act, elites and bosses beaten, HP at
  the end, the progress score (``supervisor.capture.runscore``) and the seed mark, and the run
  still being played at the journal's end, if any.

``expected_variants(FILE)`` names variants that must appear and ``CoverageReport.missing``
those never reached (``capture coverage --expect`` then exits 1); ``scan`` raises
``NotACapture`` for a PATH it cannot use.
"""

from __future__ import annotations

import collections
import dataclasses
import os
from collections.abc import Callable, Iterable
from typing import Any

from actors.emulator.session.score_tally import ScoreTally
from protocol.events import ActionAttempt, ActionResult, Observation, SessionEnd
from protocol.journal import iter_lines

from .facts import CapturedSession, load_state
from .modeluse import ModelUse, model_spent
from .verify import resolve

COMBAT = ("monster", "elite", "boss")
RUN_KEYS = ("outcome", "step", "floor", "act", "elites", "bosses", "hp_end", "max_hp", "progress_score", "seeded")
REPLY_PREFIX = "reply__"


def classify(state: Any) -> str:
    """The screen variant (the vendor/sts2mcp sample name) of one state."""
    if not isinstance(state, dict) or not isinstance(state.get("state_type"), str):
        return "invalid"
    kind = state["state_type"]
    if kind == "menu":
        return _menu(state)
    if kind in COMBAT:
        return _combat(kind, state)
    if kind == "unknown":
        if "run" not in state:
            return "unknown__no_run_state"
        return "unknown__room_type" if state.get("room_type") is not None else "unknown"
    block = state.get(kind) if isinstance(state.get(kind), dict) else {}
    refine = _REFINE.get(kind)
    variant = refine(block) if refine else None
    return f"{kind}__{variant}" if variant else kind


def _menu(state: dict) -> str:
    screen = state.get("menu_screen")
    if screen == "main":
        options = state.get("options") or []
        saved = "continue" in options or "abandon_run" in options
        return "menu__main_saved_run" if saved else "menu__main"
    if screen == "popup" and state.get("body", "") is None:
        return "menu__popup_no_body"
    return f"menu__{screen}"


def _combat(kind: str, state: dict) -> str:
    battle = state.get("battle")
    if not isinstance(battle, dict):
        return f"{kind}__combat_ended"
    if "error" in battle:
        return "monster__no_combat_state"
    if kind == "monster" and battle.get("is_play_phase") is False:
        return "monster__enemy_turn"
    return kind


def _treasure(block: dict) -> str | None:
    message = str(block.get("message", "")).lower()
    if "loading" in message:
        return "loading"
    if "opening" in message:
        return "opening"
    return None if "relics" in block else "claimed"


def _fake_merchant(block: dict) -> str | None:
    if block.get("started_fight"):
        return "fight_started"
    shop = block.get("shop")
    return "not_ready" if isinstance(shop, dict) and "error" in shop else None


_REFINE: dict[str, Callable[[dict], str | None]] = {
    "hand_select": lambda b: "selected" if "selected_cards" in b else None,
    "rest_site": lambda b: "used" if b.get("can_proceed") else None,
    "shop": lambda b: "not_ready" if "error" in b else None,
    "fake_merchant": _fake_merchant,
    "treasure": _treasure,
    "crystal_sphere": lambda b: "done" if b.get("can_proceed") else None,
    "event": lambda b: "ancient_dialogue" if b.get("in_dialogue") else None,
    "map": lambda b: None if "current_position" in b else "start",
    "card_select": lambda b: str(b.get("screen_type")),
}


@dataclasses.dataclass
class SessionCoverage:
    session: str
    observations: int = 0
    unreadable: int = 0
    attempts: int = 0
    reason: str | None = None
    exit_code: int | None = None
    runs_entered: int = 0
    runs_ended: int = 0
    victories: int = 0
    defeats: int = 0
    outcome_unknown: int = 0
    model_answers: int = 0
    model_errors: int = 0
    model_calls: int = 0
    model_tokens: int | None = 0  # None: calls were made and none reported usage
    model_cost_usd: float | None = 0.0  # the known costs; None: calls made, none known
    model_cost_unknown_calls: int = 0
    model_line: str = ""  # as supervisor start's last lines say it
    score: dict | None = None  # a Game Boy run's score (emulator.score; ScoreTally)
    score_line: str = ""
    runs: list = dataclasses.field(default_factory=list)  # each run's score (RUN_KEYS; CapturedSession)
    run_in_progress: dict | None = None  # the run still being played at the journal's end

    @property
    def stalled(self) -> bool:
        return self.reason == "stuck"


@dataclasses.dataclass
class CoverageReport:
    variants: collections.Counter = dataclasses.field(default_factory=collections.Counter)
    actions: dict[str, collections.Counter] = dataclasses.field(
        default_factory=lambda: collections.defaultdict(collections.Counter)
    )
    sessions: list[SessionCoverage] = dataclasses.field(default_factory=list)

    def missing(self, expected: Iterable[str]) -> list[str]:
        return sorted(set(expected) - set(self.variants))

    def as_dict(self) -> dict:
        return {
            "variants": dict(sorted(self.variants.items())),
            "actions": {k: dict(v) for k, v in sorted(self.actions.items())},
            "sessions": [dict(dataclasses.asdict(s), stalled=s.stalled) for s in self.sessions],
            "totals": self.totals(),
        }

    def totals(self) -> dict:
        return {
            k: sum(getattr(s, k) for s in self.sessions)
            for k in (
                "observations",
                "unreadable",
                "runs_entered",
                "runs_ended",
                "victories",
                "defeats",
                "outcome_unknown",
                "model_answers",
                "model_errors",
            )
        } | {"sessions": len(self.sessions), "stalls": sum(s.stalled for s in self.sessions)}


def scan_session(session_dir: str, capture_root: str, cov: CoverageReport) -> SessionCoverage:
    """Add one session directory's observations and attempts to ``cov``."""
    sc = SessionCoverage(os.path.basename(session_dir))
    attempts: dict[str, str] = {}
    walk = _RunWalk(sc)
    model = ModelUse()
    score = ScoreTally()
    facts = CapturedSession(read_state=lambda r: load_state(capture_root, r.get("path")))
    for line in iter_lines(os.path.join(session_dir, "events.jsonl")):
        row = line.row or {}
        model.add(row)
        facts.add(row)
        if row.get("event") == ActionResult.KIND:
            score.add_row(row)
        event = row.get("event")
        if event == Observation.KIND:
            state = load_state(capture_root, row.get("path"))
            if state is None:
                sc.unreadable += 1
                continue
            sc.observations += 1
            variant = classify(state)
            cov.variants[variant] += 1
            walk.step(variant, state)
        elif event == ActionAttempt.KIND:
            attempts[row.get("attempt_id")] = str(row.get("action"))
            cov.actions[str(row.get("action"))]["attempted"] += 1
            sc.attempts += 1
        elif event == ActionResult.KIND and row.get("attempt_id") in attempts:
            cov.actions[attempts[row["attempt_id"]]][str(row.get("outcome"))] += 1
        elif event == SessionEnd.KIND:
            sc.reason, sc.exit_code = row.get("reason"), row.get("exit_code")
    sc.model_answers, sc.model_errors = model.answers, model.errors
    spent = model_spent(model)
    sc.model_calls, sc.model_tokens, sc.model_cost_usd, sc.model_cost_unknown_calls = (
        spent["model_calls"],
        spent["model_tokens"],
        spent["model_cost_usd"],
        spent["model_cost_unknown_calls"],
    )
    sc.model_line = model.line()
    sc.score, sc.score_line = score.as_dict(), score.line()
    sc.runs = [{k: r.get(k) for k in RUN_KEYS} for r in facts.runs]
    now = facts.run_in_progress()
    sc.run_in_progress = None if now is None else {k: now.get(k) for k in RUN_KEYS if k in now}
    cov.sessions.append(sc)
    return sc


class _RunWalk:
    """Counts runs entered and runs ended, with their outcome where the game over was seen.

    A state is inside a run when it carries ``run`` and is not the game over; a popup or
    tutorial over a run hides the run without leaving it, so it changes nothing here. A run
    ends on its game over (victory or defeat inferred from the player's HP there) or when the
    next state outside a run is a menu — a game over hidden under a popup and left from there —
    and then its outcome is unknown."""

    def __init__(self, sc: SessionCoverage) -> None:
        self.sc = sc
        self.inside = False

    def step(self, variant: str, state: dict) -> None:
        if variant.startswith(("menu__tutorial", "menu__popup")):
            return
        inside = isinstance(state.get("run"), dict) and variant != "game_over"
        if inside and not self.inside:
            self.sc.runs_entered += 1
        if self.inside and not inside and variant != "unknown__no_run_state":
            self.sc.runs_ended += 1
            hp = (state.get("player") or {}).get("hp") if variant == "game_over" else None
            if not isinstance(hp, (int, float)):
                self.sc.outcome_unknown += 1
            elif hp > 0:
                self.sc.victories += 1
            else:
                self.sc.defeats += 1
        if variant != "unknown__no_run_state":
            self.inside = inside


def scan(*paths: str) -> CoverageReport:
    """Coverage of session directories and of every session under capture roots."""
    cov = CoverageReport()
    for path in paths:
        kind, target = resolve(path)
        if kind == "session":
            root, dirs = os.path.dirname(os.path.dirname(target)), [target]
        else:
            base = os.path.join(target, "sessions")
            root, dirs = target, [os.path.join(base, d) for d in sorted(os.listdir(base))]
        for d in dirs:
            if os.path.isfile(os.path.join(d, "events.jsonl")):
                scan_session(d, root, cov)
    return cov


def expected_variants(source: str) -> list[str]:
    """Variant names from a samples directory (``vendor/sts2mcp``: every ``*.json`` that is
    a state, not a reply) or from a file with one name per line (``#`` comments)."""
    if os.path.isdir(source):
        names = []
        for f in sorted(os.listdir(source)):
            if f.endswith(".json") and not f.startswith(REPLY_PREFIX):
                sample = load_state(source, f)
                if sample is not None and "state_type" in sample:
                    names.append(f[:-5])
        return names
    with open(source, encoding="utf-8") as fh:
        return sorted({ln.split("#", 1)[0].strip() for ln in fh} - {""})


def run_line(n: int, r: dict) -> str:
    """``run 1 defeat: floor 9 (act 1), 1 elite and 0 bosses beaten, HP 0/88, progress score 0.090``"""
    if r.get("progress_score") is None:
        return f"run {n} {r.get('outcome')}: no progress shown"
    hp = "-" if r.get("hp_end") is None else f"{r['hp_end']}" + (f"/{r['max_hp']}" if r.get("max_hp") else "")
    seeded = {True: ", seeded", False: ", unseeded"}.get(r.get("seeded"), "")
    return (
        f"run {n} {r.get('outcome')}: floor {r.get('floor')} (act {r.get('act')}), {r.get('elites')} "
        f"elite{'' if r.get('elites') == 1 else 's'} and {r.get('bosses')} boss"
        f"{'' if r.get('bosses') == 1 else 'es'} beaten, HP {hp}, progress score {r['progress_score']:.3f}{seeded}"
    )


def runs_lines(s: SessionCoverage) -> list[str]:
    """A session's runs with their scores, one line each (none without a scored run)."""
    runs = [*s.runs, *([{**s.run_in_progress, "outcome": "unfinished"}] if s.run_in_progress else [])]
    if not any(r.get("progress_score") is not None for r in runs):
        return []
    return [f"{s.session}: {run_line(i, r)}" for i, r in enumerate(runs, 1)]


def render(cov: CoverageReport, missing: list[str]) -> str:
    t = cov.totals()
    lines = [
        f"{t['sessions']} session(s), {t['observations']} observations, "
        f"{t['runs_entered']} runs entered, {t['runs_ended']} ended: {t['victories']} victories "
        f"and {t['defeats']} defeats (inferred from HP on the game over), "
        f"{t['outcome_unknown']} left without a visible game over; {t['stalls']} stalls",
        "",
        f"{'screen variant':<34}{'reads':>8}",
    ]
    flagged = [s for s in cov.sessions if s.model_errors]
    if flagged:
        silent = [s.session for s in flagged if not s.model_answers]
        lines.insert(
            1,
            f"model errors: {t['model_errors']} in {len(flagged)} session(s), {t['model_answers']} "
            "answers" + (f"; never answered in {', '.join(silent)}" if silent else ""),
        )
    asked = [s for s in cov.sessions if s.model_line]
    if asked:
        lines[1:1] = [f"{s.session}: {s.model_line}" for s in asked]
    scored = [s for s in cov.sessions if s.score_line]
    if scored:
        lines[1:1] = [f"{s.session}: {s.score_line}" for s in scored]
    run_scores = [line for s in cov.sessions for line in runs_lines(s)]
    if run_scores:
        lines[1:1] = run_scores
    lines += [f"{name:<34}{n:>8}" for name, n in sorted(cov.variants.items())]
    lines += ["", f"{'action':<30}{'sent':>7}{'accepted':>10}{'rejected':>10}{'unknown':>9}"]
    for name, c in sorted(cov.actions.items()):
        lines.append(f"{name:<30}{c['attempted']:>7}{c['accepted']:>10}{c['rejected']:>10}{c['unknown']:>9}")
    if missing:
        lines += ["", "never reached: " + ", ".join(missing)]
    return "\n".join(lines)
