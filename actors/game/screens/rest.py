"""The ``rest_site`` room: ``choose_rest_option`` (rest: heal 30%; smith: upgrade a card
via ``card_select`` ``upgrade``) and ``proceed``. One choice per visit; a second choice
is refused and counted as a duplicate. ``proceed`` keeps answering ok once the map is
open (a quirk of the real mod).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..errors import ActionRefused
from ..model import Card, Screen
from ..registry import action, index_in
from .cardselect import CardSelect

if TYPE_CHECKING:
    from ..engine import Game


class RestRoom(Screen):
    state_type = "rest_site"
    room_type = "RestSiteRoom"

    def __init__(self) -> None:
        self.used = False

    def options(self, game: "Game") -> list[dict]:
        run = game.run
        can_smith = any(c.upgradable for c in run.deck)
        return [
            {"index": 0, "id": "rest", "name": "Rest",
             "description": f"Heal {run.max_hp * 3 // 10} HP.", "is_enabled": not self.used},
            {"index": 1, "id": "smith", "name": "Smith", "description": "Upgrade a card.",
             "is_enabled": not self.used and can_smith},
        ]

    def block(self, game: "Game") -> dict:
        return {"options": self.options(game), "can_proceed": True}

    def proceed(self, game: "Game"):
        from ..runflow import open_map
        return "Leaving the rest site", lambda: open_map(game)


@action("choose_rest_option", ("index", int, True))
def choose_rest_option(game: "Game", p: dict):
    run = game.run
    assert run is not None
    room = run.room
    if not isinstance(room, RestRoom) or game.current_screen() != "rest_site":
        raise ActionRefused("Not at a rest site")
    opt = index_in(room.options(game), p["index"], "rest option")
    if room.used:
        game.note_duplicate()
        raise ActionRefused("The rest site has already been used")
    if not opt["is_enabled"]:
        raise ActionRefused(f"Option '{opt['name']}' is not available")
    if opt["id"] == "rest":
        def rest() -> None:
            room.used = True
            run.heal(run.max_hp * 3 // 10)
        return "Resting", rest

    def confirm(game: "Game", chosen: list[Card]) -> None:
        room.used = True
        for card in chosen:
            card.upgraded = True
    cards = [c for c in run.deck if c.upgradable]
    return "Smithing", lambda: game.push_overlay(CardSelect(
        "upgrade", "Choose a card to upgrade.", cards, 1, confirm, can_cancel=True))
