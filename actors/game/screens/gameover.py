"""The ``game_over`` screen and ``finish_run``.

The state is exactly McpMod.StateBuilder.cs ``BuildGameState``'s NGameOverScreen branch:
``{"game_over": {"message": "Run ended.", "options": ["main_menu"]}}`` plus ``run`` and
``player``; victory or defeat is not shown. ``menu_select`` answers as McpMod.Actions.cs
``ExecuteMenuSelect`` does (checked before any popup): ``main_menu`` returns to the main
menu (the run's save is gone), ``continue`` and anything else are refused.
"""

from __future__ import annotations

from collections.abc import Callable

from ..errors import ActionRefused
from ..model import Screen
from ..progress import record_end
from ..world import World
from .saves import return_to_menu

OPTIONS = ["main_menu"]


class GameOver(Screen):
    state_type = "game_over"
    room_type = "NGameOverScreen"

    def __init__(self, victory: bool, floor: int, score: int) -> None:
        self.victory = victory
        self.floor = floor
        self.score = score

    def block(self, game: World) -> dict:
        return {"message": "Run ended.", "options": list(OPTIONS)}

    def menu_select(self, game: World, option: str) -> tuple[str, Callable[[], None]]:
        low = option.lower()
        if low == "continue":
            raise ActionRefused("Game-over option 'continue' is not actionable. Use: main_menu")
        if low != "main_menu":
            raise ActionRefused(f"Unknown game over option: {option}. Use: main_menu")
        return "Returning to main menu", lambda: return_to_menu(game)


def finish_run(game: World, victory: bool) -> None:
    """End the run: the game over screen on top of everything (victory or defeat)."""
    run = game.run
    assert run is not None
    run.outcome = "victory" if victory else "defeat"
    run.combat = None
    run.map_open = False
    score = run.floor * 10 + run.gold // 10 + (100 if victory else 0)
    run.overlays = [GameOver(victory, run.floor, score)]
    record_end(game, run, victory)
    game.save.write()
