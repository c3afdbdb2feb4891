"""The ``game_over`` screen (victory or defeat); ``menu_select`` leaves it for the menu."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..errors import ActionRefused
from ..model import Screen

if TYPE_CHECKING:
    from ..engine import Game

OPTIONS = ["main_menu"]


class GameOver(Screen):
    state_type = "game_over"

    def __init__(self, victory: bool, floor: int, score: int) -> None:
        self.victory = victory
        self.floor = floor
        self.score = score

    def block(self, game: "Game") -> dict:
        return {"victory": self.victory, "outcome": "victory" if self.victory else "defeat",
                "floor_reached": self.floor, "score": self.score, "options": list(OPTIONS)}

    def menu_select(self, game: "Game", option: str):
        from .menu import return_to_menu

        if option not in OPTIONS:
            raise ActionRefused(f"Invalid option '{option}' (available: {OPTIONS})")
        return "Returning to the main menu", lambda: return_to_menu(game)


def finish_run(game: "Game", victory: bool) -> None:
    run = game.run
    assert run is not None
    run.outcome = "victory" if victory else "defeat"
    run.combat = None
    run.map_open = False
    score = run.floor * 10 + run.gold // 10 + (100 if victory else 0)
    run.overlays = [GameOver(victory, run.floor, score)]
    if victory:
        game.profile.victories += 1
    else:
        game.profile.defeats += 1
    game.save.write()
