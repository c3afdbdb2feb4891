"""``Game``: screen detection, the queued-effect model, and read-driven timers.

"ok means queued": a POST is validated against the visible state and answered at once;
its effect is queued and applied at the start of a later state read (the next one by
default, later with ``effect_delay_reads`` / ``slow_confirm_reads``). With no delay knob,
a POST first applies every effect still queued, as the real game would have processed
them between requests. When a queued effect comes due, it is validated again; if the
state no longer allows it the effect is dropped (counted in ``dropped_effects``).

Determinism: the same seed and the same sequence of requests (reads and posts) give the
same states; nothing reads the wall clock or the global random state.

Screen detection follows McpMod.StateBuilder.cs ``BuildGameState``: a tutorial or popup
replaces the whole state; no run → a menu; the run starting → ``{"state_type":
"unknown"}``; then overlays, map, combat, rooms. The rendering rule is in ``render``.
The order of an action POST's checks follows McpMod.Actions.cs ``ExecuteAction``.
"""

from __future__ import annotations

import copy
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from . import screens
from .errors import ActionRefused, StateBuildError
from .identity import SaveMeta
from .knobs import Knobs
from .model import Run, Screen
from .progress import PROFILE_IDS, Profile
from .registry import ACTIONS
from .render import TopLevel, compose, whole_state
from .screens import menu, overlay, popups, saves
from .views import player_view, run_view

Effect = Callable[[], None]
BLOCKING = "Blocking popup active. Use menu_select with one of the advertised popup options before gameplay actions."


@dataclass
class Pending:
    check: Callable[[], tuple[str, Effect]]  # re-validates; returns (message, effect)
    due: int  # applied at the start of read number ``due``
    flushable: bool  # may be applied early by the next POST
    gameplay: bool  # counts as a run action (not menu_select)
    name: str = ""  # the action's name and body (``queued``: the mod's ``IsQueued`` checks)
    body: dict = field(default_factory=dict)


@dataclass
class Timer:
    remaining: int
    fire: Callable[[], None]
    run: Run | None


class Game:
    """The whole game; every public method is called under ``self.lock``."""

    def __init__(self, seed: int, knobs: Knobs | None = None) -> None:
        self.seed = seed
        self.knobs = knobs or Knobs()
        self.lock = threading.RLock()
        self.menu_screen = "main"
        self.selected_character: str | None = None
        self.lobby_seed: str | None = None  # set by a seeded embark a lobby took (menu)
        self.popup: popups.Popup | None = None
        self.run: Run | None = None
        self.saved: Run | None = None  # a saved run the main menu can continue
        self.pending: list[Pending] = []
        self.timers: list[Timer] = []
        self.reads = 0
        self.valid_posts = 0
        self.runs_started = 0
        self.profiles = {i: Profile(i) for i in PROFILE_IDS}
        self.profile = self.profiles[1]
        self.linger: list[Any] | None = None  # [remaining, snapshot]
        self.waiting = 0
        self.loading = False  # the transient reads show the run starting (no run state)
        self.last_render: dict | None = None
        self.validating = False
        self.duplicates = 0
        self.dropped_effects = 0
        self.replaced_once = False
        self.quit_requested = False
        self.save = SaveMeta(self)
        self.screens_seen: set[str] = set()
        saves.apply_start_knobs(self)

    # ----- reads -------------------------------------------------------------------
    def state(self) -> dict:
        """One state read (GET /api/v1/singleplayer)."""
        self.reads += 1
        self._apply_due(self.reads)
        self._fire_timers()
        n = self.knobs.state_error_every
        if n and self.reads % n == 0:
            raise StateBuildError(f"state build failed on read {self.reads} (knob)")
        popups.on_read(self)
        if self.linger and self.linger[0] > 0:
            self.linger[0] -= 1
            view = copy.deepcopy(self.linger[1])
        else:
            self.linger = None
            view = self._render()
            self.last_render = copy.deepcopy(view)
        if self.waiting > 0 and view.get("state_type") == "unknown":
            self.waiting -= 1
            self.loading = self.loading and self.waiting > 0
        for t in self.timers:
            t.remaining -= 1
        overlay.on_read(self)
        self._note_seen(view)
        return view

    def _render(self) -> dict:
        if self.popup is None and self.run is not None and self.waiting == 0:
            popups.maybe_ftue(self, self._screen()[0])
        if self.popup is not None:
            return whole_state(self.popup.view())
        state_type, block, extra = self._screen()
        if state_type == "menu":
            return whole_state(block)
        if self.run is None or self.loading:  # the run starting: no RunState yet
            return {"state_type": state_type, **block}
        run = self.run
        assert run is not None
        return compose(state_type, block, extra, {"run": run_view(run), "player": player_view(run)})

    def _screen(self) -> tuple[str, dict, dict | None]:
        """(state_type, the screen's fields, extra top-level entries), in the order of
        ``BuildGameState`` (the popup is handled by ``_render``)."""
        run = self.run
        if self.waiting > 0 and self.loading:  # RunManager in progress, no RunState
            return "unknown", TopLevel(), None
        if run is None:
            return "menu", menu.menu_view(self), None
        if self.waiting > 0:  # between rooms: CurrentRoom is null
            return "unknown", TopLevel(room_type=None), None
        top = run.top
        if top is not None:
            return top.state_type, top.block(self), None
        if run.map_open:
            return "map", screens.mapscreen.map_block(run), None
        if run.combat is not None:
            battle = screens.battle.battle_block(run)
            if run.combat.hand_select is not None:
                return ("hand_select", screens.battle.hand_select_block(run), {"battle": battle})
            return run.combat.kind, TopLevel(battle=battle), None
        room = run.room or Screen()
        block = room.block(self)
        if room.state_type == "unknown" and not isinstance(block, TopLevel):
            block = TopLevel(room_type=room.room_type)
        return room.state_type, block, None

    def current_screen(self) -> str:
        """The state_type of the screen under any tutorial or popup (handlers check the
        game's screen; the popup check is ``act``'s, at POST time)."""
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
        elif st == "game_over" and self.run is not None:
            self.screens_seen.add(f"game_over:{self.run.outcome}")
        elif st == "event" and block.get("in_dialogue"):
            self.screens_seen.add("event:dialogue")
        elif st in ("monster", "elite", "boss") and "battle" not in view:
            self.screens_seen.add(f"{st}:combat_ended")
        elif st == "unknown":
            self.screens_seen.add("unknown:no_run_state" if "run" not in view else f"unknown:{view.get('room_type')}")

    # ----- posts -------------------------------------------------------------------
    def act(self, body: dict) -> tuple[int, dict]:
        """One action POST; returns (HTTP status, JSON body). ParamTypeError propagates.

        ``menu_select`` goes to the menus (McpMod.cs ``HandlePostAction``); every other
        name follows ``ExecuteAction``: no run, then a blocking popup, then the name."""
        name = body.get("action")
        if not self.knobs.effect_delay_reads:
            self._apply_due(None)
        if name == "menu_select":
            option, seed = menu.read_menu_params(body)
            return self._accept(lambda: menu.menu_select(self, option, seed), False, False)
        if self.run is None:
            return 200, _error("No run in progress")
        if self.popup is not None:
            return 200, _error(BLOCKING)
        spec = ACTIONS.get(name) if isinstance(name, str) else None
        if spec is None or spec.menu:
            return 200, _error(f"Unknown action: {name if name is not None else ''}")
        body = dict(body)

        def check() -> tuple[str, Effect]:
            # at POST time act() checked the popup; an action the game accepted runs even if
            # a popup opened meanwhile (the real game's action queue does not look at popups)
            if self.run is None:
                raise ActionRefused("No run in progress")
            return spec.handler(self, spec.parse(body))

        return self._accept(check, True, spec.confirm, name, body)

    def _accept(
        self, check: Callable[[], tuple], gameplay: bool, confirm: bool, name: str = "", body: dict | None = None
    ) -> tuple[int, dict]:
        self.validating = True
        try:
            result = check()
        except ActionRefused as exc:
            return 200, {**_error(str(exc)), **exc.extra}
        finally:
            self.validating = False
        message, extra = result[0], (result[2] if len(result) > 2 else {})
        self.valid_posts += 1
        n = self.knobs.reject_every_nth
        if n and self.valid_posts % n == 0:
            return 200, _error("Action rejected: the game is busy")
        delay = self.knobs.effect_delay_reads + (self.knobs.slow_confirm_reads if confirm else 0)
        self.pending.append(Pending(check, self.reads + 1 + delay, delay == 0, gameplay, name, body or {}))
        return 200, {"status": "ok", "message": message, **extra}

    def queued(self, name: str) -> list[dict]:
        """The bodies of accepted ``name`` actions whose effects have not been applied yet
        (what the mod sees as queued: ``PotionModel.IsQueued``)."""
        return [p.body for p in self.pending if p.name == name]

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
        try:
            effect = p.check()[1]
        except ActionRefused:
            self.dropped_effects += 1
            return
        run = self.run
        effect()
        if run is not None and self.run is run and p.gameplay:
            run.actions += 1
            n = self.knobs.replace_run_after_actions
            if n and not self.replaced_once and run.actions >= n and run.outcome is None:
                self.replaced_once = True
                saves.replace_run(self, run)

    def _fire_timers(self) -> None:
        due = [t for t in self.timers if t.remaining <= 0]
        self.timers = [t for t in self.timers if t.remaining > 0]
        for t in due:
            if t.run is None or t.run is self.run:
                t.fire()
            elif t.run is not None and t.run is self.saved:
                self.timers.append(t)  # the saved run's room finishes loading once continued

    # ----- helpers used by screens ------------------------------------------------
    def after_reads(self, n: int, fire: Callable[[], None]) -> None:
        """Run ``fire`` at the start of the read after ``n`` more reads (n=0: next read)."""
        self.timers.append(Timer(n, fire, self.run))

    def maybe_popup(self, key: str) -> None:
        """Does nothing: first-time tutorials show by themselves when a screen is first seen
        (``popups.maybe_ftue``)."""

    def transition(self) -> None:
        """A screen change: shows ``waiting_reads`` transient ``unknown`` reads."""
        self.waiting = self.knobs.waiting_reads
        self.loading = False

    def push_overlay(self, screen: Screen) -> None:
        assert self.run is not None
        self.run.overlays.append(screen)

    def pop_overlay(self, screen: Screen) -> None:
        assert self.run is not None
        if screen in self.run.overlays:
            self.run.overlays.remove(screen)
        if self.knobs.overlay_linger_reads and self.last_render is not None:
            self.linger = [self.knobs.overlay_linger_reads, copy.deepcopy(self.last_render)]

    def stats(self) -> dict:
        return {
            "reads": self.reads,
            "duplicate_guarded_actions": self.duplicates,
            "dropped_effects": self.dropped_effects,
            "runs_started": self.runs_started,
            "screens_seen": sorted(self.screens_seen),
            "seed": self.seed,
        }


def _error(message: str) -> dict:
    return {"status": "error", "error": message}
