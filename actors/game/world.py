"""``World``: what the screens, the run flow, the profile and the save metadata may read
and change of the game. ``screens/*``, ``runflow``, ``progress`` and ``identity`` take a
``game: World``; ``engine.Game`` is its one implementation.

The engine imports the screens (to detect, render and dispatch them); the screens import
this module, never the engine, so the game's modules form no import cycle. Fields whose
classes live in modules that themselves take a ``World`` are typed ``Any`` here, with the
class named beside them.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

from .knobs import Knobs
from .model import Run, Screen


class World(Protocol):
    seed: int | str
    knobs: Knobs
    # menus
    menu_screen: str
    selected_character: str | None
    lobby_seed: str | None  # the character select's lobby seed (knob char_select_lobby: 2)
    popup: Any  # screens.popups.Popup | None: a tutorial or popup replacing the whole state
    # the run
    run: Run | None
    saved: Run | None  # a saved run the main menu can continue
    runs_started: int
    save: Any  # identity.SaveMeta: the save metadata the compendium reads
    profiles: dict[int, Any]  # profile id -> progress.Profile
    profile: Any  # progress.Profile: the current one
    # reads, queued effects and timers (see engine)
    reads: int
    pending: list[Any]  # engine.Pending: accepted actions whose effects are not applied yet
    timers: list[Any]  # engine.Timer
    waiting: int  # transient "unknown" reads left (a screen change)
    loading: bool  # the transient reads show the run starting (no run state)
    linger: list[Any] | None  # [reads left, the overlay's last rendering]
    validating: bool  # True while a POST is validated (not yet applied)

    def current_screen(self) -> str:
        """The state_type of the screen under any tutorial or popup."""

    def after_reads(self, n: int, fire: Callable[[], None]) -> None:
        """Run ``fire`` at the start of the read after ``n`` more reads (n=0: next read)."""

    def transition(self) -> None:
        """A screen change: shows ``waiting_reads`` transient ``unknown`` reads."""

    def push_overlay(self, screen: Screen) -> None:
        """Show ``screen`` over the run's room."""

    def pop_overlay(self, screen: Screen) -> None:
        """Close the overlay ``screen`` (it may linger for ``overlay_linger_reads``)."""

    def queued(self, name: str) -> list[dict]:
        """The bodies of accepted ``name`` actions whose effects are not applied yet."""

    def note_duplicate(self) -> None:
        """Count a repeated toggle/purchase/click (only when answering the POST)."""

    def maybe_popup(self, key: str) -> None:
        """Does nothing: first-time tutorials show by themselves when a screen is first seen."""
