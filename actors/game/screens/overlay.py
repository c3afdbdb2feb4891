"""The catch-all ``overlay`` screen: an overlay the mod has no handler for.

The state is McpMod.StateBuilder.cs ``BuildGameState``'s catch-all branch:
``{"overlay": {"screen_type": <type name>, "message": "An overlay (<type name>) is active.
It may require manual interaction in-game."}}`` plus ``run`` and ``player``. No action
handles it (each refuses as its screen check says). It clears by itself after
``DEFAULT_READS`` reads (a cut-scene); knob ``sticky_overlay_reads`` keeps it N reads
instead, and ``POST /__gamerig/manual`` (a person at the keyboard) clears it at once.

Interface for rooms: ``show_overlay(game, "NSomeScreen", then)`` pushes the overlay and
calls ``then()`` once it has cleared.
"""

from __future__ import annotations

from collections.abc import Callable

from ..model import Screen
from ..world import World

DEFAULT_READS = 2


class GenericOverlay(Screen):
    state_type = "overlay"

    def __init__(self, screen_type: str, then: Callable[[], None] | None = None) -> None:
        self.screen_type = screen_type
        self.room_type = screen_type
        self.then = then
        self.reads_left = DEFAULT_READS

    def block(self, game: World) -> dict:
        return {
            "screen_type": self.screen_type,
            "message": f"An overlay ({self.screen_type}) is active. It may require manual interaction in-game.",
        }


def show_overlay(game: World, screen_type: str, then: Callable[[], None]) -> GenericOverlay:
    """Push an unhandled overlay; ``then()`` runs once it has cleared."""
    overlay = GenericOverlay(screen_type, then=then)
    overlay.reads_left = game.knobs.sticky_overlay_reads or DEFAULT_READS
    game.push_overlay(overlay)
    return overlay


def clear(game: World, overlay: GenericOverlay) -> None:
    game.pop_overlay(overlay)
    if overlay.then is not None:
        overlay.then()


def on_read(game: World) -> None:
    """Per state read (after rendering): a shown overlay counts down and clears."""
    run = game.run
    top = run.top if run is not None else None
    if isinstance(top, GenericOverlay) and game.popup is None:
        top.reads_left -= 1
        if top.reads_left <= 0:
            clear(game, top)


def manual(game: World) -> str | None:
    """``POST /__gamerig/manual``: what a person would close by hand (an unhandled overlay,
    the compendium or settings screen); returns what was closed, or None."""
    run = game.run
    top = run.top if run is not None else None
    if isinstance(top, GenericOverlay):
        clear(game, top)
        return f"overlay {top.screen_type}"
    if run is None and game.menu_screen in ("compendium", "settings"):
        closed = game.menu_screen
        game.menu_screen = "main"
        return closed
    return None
