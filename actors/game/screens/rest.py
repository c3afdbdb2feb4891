"""The ``rest_site`` room and ``choose_rest_option`` (McpMod.StateBuilder.cs
``BuildRestSiteState``, McpMod.Actions.cs ``ExecuteChooseRestOption``).

Options ``HEAL`` (heal 30% of max HP) and ``SMITH`` (upgrade a card: a ``card_select``
``upgrade`` on top; cancelling it returns to the rest site with nothing used). One option
per visit, as in the game: once one is used every option shows ``is_enabled: false`` and
the proceed button enables (``can_proceed`` is false until then). ``SMITH`` is disabled
when no card can be upgraded. ``proceed`` (``ExecuteProceed``'s rest-site branch) opens the
map; the button stays enabled, so a later ``proceed`` still answers ok (a no-op).
"""

from __future__ import annotations

from ..errors import ActionRefused
from ..model import Card, Screen, room_of
from ..registry import action, in_range
from ..world import World
from .cardselect import CardSelect


class RestRoom(Screen):
    state_type = "rest_site"
    room_type = "RestSiteRoom"

    def __init__(self) -> None:
        self.used = False

    def options(self, game: World) -> list[dict]:
        can_smith = any(c.upgradable for c in game.run.deck)
        return [
            {
                "index": 0,
                "id": "HEAL",
                "name": "Rest",
                "description": "Heal 30% of your max HP.",
                "is_enabled": not self.used,
            },
            {
                "index": 1,
                "id": "SMITH",
                "name": "Smith",
                "description": "Upgrade a card in your deck.",
                "is_enabled": not self.used and can_smith,
            },
        ]

    def block(self, game: World) -> dict:
        return {"options": self.options(game), "can_proceed": self.used}


@action("choose_rest_option")
def choose_rest_option(game: World, p):
    run = game.run
    index = p.int("index", "Missing 'index' (rest site option index)")
    room = room_of(game)
    if not isinstance(room, RestRoom):
        raise ActionRefused("Rest site room is not open")
    options = room.options(game)
    opt = in_range(options, index, f"Rest option index {index} out of range ({len(options)} options)")
    if not opt["is_enabled"]:
        if room.used:
            game.note_duplicate()
        raise ActionRefused(f"Rest option {index} ({opt['id']}) is disabled")
    message = f"Selecting rest site option: {opt['name']}"
    if opt["id"] == "HEAL":

        def rest() -> None:
            room.used = True
            run.heal(run.max_hp * 3 // 10)

        return message, rest

    def confirm(game: World, chosen: list[Card]) -> None:
        room.used = True
        for card in chosen:
            card.upgraded = True

    cards = [c for c in run.deck if c.upgradable]
    return message, lambda: game.push_overlay(
        CardSelect("upgrade", "Choose a card to upgrade.", cards, 1, confirm, can_cancel=True)
    )
