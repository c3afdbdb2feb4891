"""``proceed`` (McpMod.Actions.cs ``ExecuteProceed``): the rewards screen on top, else the
current room's proceed button - rest site, shop, fake merchant, treasure - in that order.

Each room says whether its button is enabled: a rest site once an option was used, a
treasure room once its relic was taken, a shop and the fake merchant always (``proceed``
closes their open inventory first). As in the game, the room's button stays enabled after
it opened the map, so ``proceed`` on the map after those rooms answers ok and does
nothing. Events, fights and every other screen: "No proceed button available or enabled".
"""

from __future__ import annotations

from ..errors import ActionRefused
from ..model import open_map, room_of
from ..registry import action
from ..world import World
from .fakemerchant import FakeMerchantRoom
from .rest import RestRoom
from .rewards import Rewards
from .shop import ShopRoom
from .treasure import TreasureRoom

NONE = "No proceed button available or enabled"


def _room_branch(game: World) -> str | None:
    """The message of the room whose proceed button is enabled, or None."""
    room = room_of(game)
    if isinstance(room, RestRoom) and room.used:
        return "Proceeding from rest site"
    if isinstance(room, ShopRoom):
        return "Proceeding from shop"
    if isinstance(room, FakeMerchantRoom):
        return "Proceeding from fake merchant"
    if isinstance(room, TreasureRoom) and room.claimed:
        return "Proceeding from treasure room"
    return None


@action("proceed")
def proceed(game: World, p):
    run = game.run
    top = run.top
    if isinstance(top, Rewards):
        return "Proceeding from rewards", lambda: top.leave(game)
    message = _room_branch(game)
    if message is None:
        raise ActionRefused(NONE)
    if run.map_open:
        return message, lambda: None
    return message, lambda: open_map(game)
