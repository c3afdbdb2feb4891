"""``Game``: screen detection, the queued-effect model, and read-driven timers.

"ok means queued": a POST is validated against the visible state and answered at once;
its effect is queued and applied at the start of a later state read (the next one by
default, later with ``effect_delay_reads`` / ``slow_confirm_reads``). With no delay knob,
a POST first applies every effect still queued, as the real game would have processed
them between requests. When a queued effect comes due, its handler is run again; if the
state no longer allows it the effect is dropped (counted in ``dropped_effects``).

Determinism: the same seed and the same sequence of requests (reads and posts) give the
same states; nothing reads the wall clock or the global random state.

Screen detection follows the real mod's order (popup, menu, overlays, map, combat,
event, shop/rest/treasure, unknown); see ``_screen``.
"""

from __future__ import annotations

import copy
import threading
from dataclasses import dataclass, field
from typing import Any, Callable

from . import screens  # noqa: F401  (registers every action)
from .errors import ActionRefused, StateBuildError
from .identity import SaveMeta
from .knobs import Knobs
from .model import Run, Screen
from .registry import ACTIONS
from .views import player_view, run_view


@dataclass
class Pending:
    name: str
    params: dict
    due: int  # applied at the start of read number ``due``
    flushable: bool  # may be applied early by the next POST


@dataclass
class Timer:
    remaining: int
    fire: Callable[[], None]
    run: Run | None


@dataclass
class Profile:
    profile_id: int = 1
    seen: set[str] = field(default_factory=set)
    victories: int = 0
    defeats: int = 0


@dataclass
class Popup:
    menu_screen: str  # tutorial_prompt | tutorial | popup
    title: str
    message: str
    options: list[str]
    on_choose: Callable[[str], None]


class Game:
    """The whole game; every public method is called under ``self.lock``."""

    def __init__(self, seed: int, knobs: Knobs | None = None) -> None:
        self.seed = seed
        self.knobs = knobs or Knobs()
        self.lock = threading.RLock()
        self.menu_screen = "main"
        self.selected_character: str | None = None
        self.popup: Popup | None = None
        self.run: Run | None = None
        self.pending: list[Pending] = []
        self.timers: list[Timer] = []
        self.reads = 0
        self.valid_posts = 0
        self.runs_started = 0
        self.profile = Profile()
        self.linger: list[Any] | None = None  # [remaining, snapshot]
        self.waiting = 0
        self.last_render: dict | None = None
        self.validating = False
        self.duplicates = 0
        self.dropped_effects = 0
        self.replaced_once = False
        self.save = SaveMeta(self)
        self.screens_seen: set[str] = set()

    # ----- reads -------------------------------------------------------------------
    def state(self) -> dict:
        """One state read (GET /api/v1/singleplayer)."""
        self.reads += 1
        self._apply_due(self.reads)
        self._fire_timers()
        n = self.knobs.state_error_every
        if n and self.reads % n == 0:
            raise StateBuildError(f"state build failed on read {self.reads} (knob)")
        if self.linger and self.linger[0] > 0:
            self.linger[0] -= 1
            view = copy.deepcopy(self.linger[1])
        else:
            self.linger = None
            view = self._render()
            self.last_render = copy.deepcopy(view)
        if self.waiting > 0 and view.get("state_type") == "unknown":
            self.waiting -= 1
        for t in self.timers:
            t.remaining -= 1
        self._note_seen(view)
        return view

    def _render(self) -> dict:
        state_type, block_name, block = self._screen()
        view: dict[str, Any] = {"state_type": state_type}
        if state_type == "menu":
            view["menu_screen"] = block.get("menu_screen")
        if self.run is not None and not (state_type == "menu"):
            view["run"] = run_view(self.run)
            view["player"] = player_view(self.run)
        if state_type == "unknown":
            view["room_type"] = block["room_type"]
        if state_type == "hand_select":
            view["battle"] = screens.battle.battle_block(self.run)
        view[block_name] = block
        return view

    def _screen(self) -> tuple[str, str, dict]:
        """(state_type, block name, block) following the real mod's detection order."""
        if self.popup is not None:
            p = self.popup
            return "menu", "menu", {"menu_screen": p.menu_screen, "title": p.title,
                                    "message": p.message, "options": list(p.options)}
        run = self.run
        if run is None:
            return "menu", "menu", screens.menu.menu_block(self)
        if self.waiting > 0:
            return "unknown", "unknown", {"room_type": "Transition",
                                          "message": "Waiting for the next screen"}
        top = run.top
        if top is not None:
            return top.state_type, top.state_type, top.block(self)
        if run.map_open:
            return "map", "map", screens.mapscreen.map_block(run)
        if run.combat is not None:
            if run.combat.hand_select is not None:
                return "hand_select", "hand_select", screens.battle.hand_select_block(run)
            kind = run.combat.kind
            return kind, "battle", screens.battle.battle_block(run)
        room = run.room or Screen()
        if room.state_type == "unknown":
            return "unknown", "unknown", {"room_type": room.room_type, **room.block(self)}
        return room.state_type, room.state_type, room.block(self)

    def current_screen(self) -> str:
        """The state_type a read would show now (without side effects)."""
        return self._screen()[0]

    def _note_seen(self, view: dict) -> None:
        st = view.get("state_type", "?")
        self.screens_seen.add(st)
        if st == "menu":
            self.screens_seen.add(f"menu:{view.get('menu_screen')}")
        block = view.get(st) if isinstance(view.get(st), dict) else {}
        if st == "card_select":
            self.screens_seen.add(f"card_select:{block.get('screen_type')}")
        elif st == "hand_select":
            self.screens_seen.add(f"hand_select:{block.get('mode')}")
        elif st == "game_over":
            self.screens_seen.add("game_over:victory" if block.get("victory")
                                  else "game_over:defeat")
        elif st == "event" and block.get("in_dialogue"):
            self.screens_seen.add("event:dialogue")

    # ----- posts -------------------------------------------------------------------
    def act(self, body: dict) -> tuple[int, dict]:
        """One action POST; returns (HTTP status, JSON body). ParamTypeError propagates."""
        name = body["action"]
        spec = ACTIONS.get(name)
        if spec is None:
            return 200, {"status": "error", "error": f"Unknown action: {name}"}
        try:
            params = spec.parse(body)
            if not self.knobs.effect_delay_reads:
                self._apply_due(None)
            self.validating = True
            try:
                self.guard(spec.menu)
                message, _ = spec.handler(self, params)
            finally:
                self.validating = False
        except ActionRefused as exc:
            return 200, {"status": "error", "error": str(exc)}
        self.valid_posts += 1
        n = self.knobs.reject_every_nth
        if n and self.valid_posts % n == 0:
            return 200, {"status": "error", "error": "Action rejected: the game is busy"}
        delay = self.knobs.effect_delay_reads + (self.knobs.slow_confirm_reads
                                                 if spec.confirm else 0)
        self.pending.append(Pending(name, params, self.reads + 1 + delay, delay == 0))
        return 200, {"status": "ok", "message": message}

    def guard(self, menu_action: bool) -> None:
        if self.popup is not None and not menu_action:
            raise ActionRefused("A popup is open; dismiss it with menu_select first")
        if self.run is None and not menu_action:
            raise ActionRefused("No run in progress")
        if self.popup is None and self.run is not None and self.waiting > 0:
            raise ActionRefused("The game is between screens; try again shortly")

    def note_duplicate(self) -> None:
        """Count a repeated toggle/purchase/click (only when answering the POST)."""
        if self.validating:
            self.duplicates += 1

    def _apply_due(self, read: int | None) -> None:
        while self.pending:
            p = self.pending[0]
            if read is None and not p.flushable:
                return
            if read is not None and p.due > read:
                return
            self.pending.pop(0)
            self._apply(p)

    def _apply(self, p: Pending) -> None:
        spec = ACTIONS[p.name]
        try:
            self.guard(spec.menu)
            _, effect = spec.handler(self, p.params)
        except ActionRefused:
            self.dropped_effects += 1
            return
        run = self.run
        effect()
        if run is not None and self.run is run and not spec.menu:
            run.actions += 1
            n = self.knobs.replace_run_after_actions
            if n and not self.replaced_once and run.actions >= n and run.outcome is None:
                self.replaced_once = True
                screens.menu.replace_run(self, run)

    def _fire_timers(self) -> None:
        due = [t for t in self.timers if t.remaining <= 0]
        self.timers = [t for t in self.timers if t.remaining > 0]
        for t in due:
            if t.run is None or t.run is self.run:
                t.fire()

    # ----- helpers used by screens ------------------------------------------------
    def after_reads(self, n: int, fire: Callable[[], None]) -> None:
        """Run ``fire`` at the start of the read after ``n`` more reads (n=0: next read)."""
        self.timers.append(Timer(n, fire, self.run))

    def maybe_popup(self, key: str) -> None:
        """Show the one-time popup ``key`` unless this profile has seen it."""
        screens.menu.maybe_popup(self, key)

    def transition(self) -> None:
        """A screen change: shows ``waiting_reads`` transient ``unknown`` reads."""
        self.waiting = self.knobs.waiting_reads

    def push_overlay(self, overlay: Screen) -> None:
        assert self.run is not None
        self.run.overlays.append(overlay)

    def pop_overlay(self, overlay: Screen) -> None:
        assert self.run is not None
        if overlay in self.run.overlays:
            self.run.overlays.remove(overlay)
        if self.knobs.overlay_linger_reads and self.last_render is not None:
            self.linger = [self.knobs.overlay_linger_reads, copy.deepcopy(self.last_render)]

    def stats(self) -> dict:
        return {"reads": self.reads, "duplicate_guarded_actions": self.duplicates,
                "dropped_effects": self.dropped_effects, "runs_started": self.runs_started,
                "screens_seen": sorted(self.screens_seen), "seed": self.seed}
