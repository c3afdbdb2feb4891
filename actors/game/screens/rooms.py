"""Building the room for a map node type, and resolving "?" (Unknown) nodes.

A "?" node becomes (seeded by floor) an event from the pool, the fake merchant, a fight,
a treasure room, or an empty room (the ``unknown`` screen; ``proceed`` leaves it).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .. import rng
from ..model import Screen

if TYPE_CHECKING:
    from ..engine import Game
    from ..model import Run

COMBAT_KINDS = {"Monster": "monster", "Elite": "elite", "Boss": "boss"}
UNKNOWN_OUTCOMES = ("Event", "Event", "Event", "FakeMerchant", "Monster", "Treasure",
                    "Empty")


class EmptyRoom(Screen):
    state_type = "unknown"
    room_type = "EmptyRoom"

    def block(self, game: "Game") -> dict:
        return {"message": "The room is empty."}

    def proceed(self, game: "Game"):
        from ..runflow import open_map
        return "Leaving the empty room", lambda: open_map(game)


def roll_unknown(run: "Run") -> str:
    """What a "?" node turns out to be (seeded by floor)."""
    return rng.stream(run.seed, "unknown", run.floor).choice(UNKNOWN_OUTCOMES)


def build_room(game: "Game", kind: str) -> None:
    from ..runflow import start_combat
    from .events_content import POOL, pool_event
    from .rest import RestRoom
    from .shop import ShopRoom
    from .treasure import TreasureRoom

    run = game.run
    assert run is not None
    if kind in COMBAT_KINDS:
        start_combat(game, COMBAT_KINDS[kind])
    elif kind == "Shop":
        run.room = ShopRoom(run)
    elif kind == "RestSite":
        run.room = RestRoom()
    elif kind == "Treasure":
        run.room = TreasureRoom(run)
    elif kind == "FakeMerchant":
        run.room = pool_event(game, "FAKE_MERCHANT")
    elif kind == "Event":
        r = rng.stream(run.seed, "event", run.floor)
        run.room = pool_event(game, POOL[(r.randrange(len(POOL)) + run.floor) % len(POOL)])
    else:
        run.room = EmptyRoom()
