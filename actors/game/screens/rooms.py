"""Building the room for a map node type, and resolving "?" (Unknown) nodes; importing this
module registers both in ``runflow.HOOKS``.

A "?" node becomes (seeded by floor) an event from the pool, the fake merchant, a fight,
a treasure room, or - invented, to exercise the mod's catch-all - an empty room of a class
the mod does not know: ``unknown`` with ``room_type: "EmptyRoom"`` (McpMod.StateBuilder.cs
``BuildGameState``'s last branch). No action leaves it (``ExecuteProceed`` has no branch
for it); the map opens by itself after two reads.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .. import rng
from ..model import Screen, open_map
from ..runflow import HOOKS
from ..world import World
from .battle import start_combat
from .events_content import POOL, pool_event
from .fakemerchant import FakeMerchantRoom
from .rest import RestRoom
from .shop import ShopRoom
from .treasure import TreasureRoom

if TYPE_CHECKING:
    from ..model import Run

COMBAT_KINDS = {"Monster": "monster", "Elite": "elite", "Boss": "boss"}
UNKNOWN_OUTCOMES = ("Event", "Event", "Event", "FakeMerchant", "Monster", "Treasure", "Empty")
EMPTY_READS = 2


class EmptyRoom(Screen):
    """A room class the mod does not know: shown as ``unknown``; it passes by itself."""

    state_type = "unknown"
    room_type = "EmptyRoom"

    def __init__(self, game: World) -> None:
        run = game.run
        game.after_reads(game.waiting + EMPTY_READS, lambda: open_map(game) if run.room is self else None)


def roll_unknown(run: Run) -> str:
    """What a "?" node turns out to be (seeded by floor)."""
    return rng.stream(run.seed, "unknown", run.floor).choice(UNKNOWN_OUTCOMES)


def build_room(game: World, kind: str) -> None:
    run = game.run
    assert run is not None
    if kind in COMBAT_KINDS:
        start_combat(game, COMBAT_KINDS[kind])
    elif kind == "Shop":
        run.room = ShopRoom(game)
    elif kind == "RestSite":
        run.room = RestRoom()
    elif kind == "Treasure":
        run.room = TreasureRoom(game)
    elif kind == "FakeMerchant":
        run.room = FakeMerchantRoom(game)
    elif kind == "Empty":
        run.room = EmptyRoom(game)
    else:
        r = rng.stream(run.seed, "event", run.floor)
        run.room = pool_event(game, POOL[(r.randrange(len(POOL)) + run.floor) % len(POOL)])


HOOKS.build_room = build_room
HOOKS.roll_unknown = roll_unknown
