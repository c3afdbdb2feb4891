"""The ``treasure`` room and ``claim_treasure_relic`` (McpMod.StateBuilder.cs
``BuildTreasureState``, McpMod.Actions.cs ``ExecuteClaimTreasureRelic``).

The first read after entering shows only ``{"message": "Treasure room loading..."}`` (the
room's UI is not built yet), the next only ``{"message": "Opening chest..."}`` (the mod's
state read clicks the chest); then the relic collection (``relics``) and ``can_proceed``,
false until the relic is taken. Taking it hides the collection (``{can_proceed: true}`` only);
another claim is refused as the source words it (a counted duplicate). ``proceed`` then
opens the map (``ExecuteProceed``'s treasure branch).
"""

from __future__ import annotations

from .. import rng
from ..content import RELIC_POOL, RELICS
from ..errors import ActionRefused
from ..model import Screen, room_of
from ..registry import action, in_range
from ..views import relic_choice_view
from ..world import World


class TreasureRoom(Screen):
    state_type = "treasure"
    room_type = "TreasureRoom"

    def __init__(self, game: World) -> None:
        run = game.run
        owned = {x.rid for x in run.relics}
        pool = [x for x in RELIC_POOL if x not in owned] or list(RELIC_POOL)
        self.relics = [rng.stream(run.seed, "treasure", run.floor).choice(pool)]
        self.loaded = False
        self.opened = False
        self.claimed = False
        game.after_reads(game.waiting + 1, lambda: setattr(self, "loaded", True))
        game.after_reads(game.waiting + 2, lambda: setattr(self, "opened", True))

    @property
    def collection_visible(self) -> bool:
        return self.opened and not self.claimed

    def block(self, game: World) -> dict:
        if not self.loaded:
            return {"message": "Treasure room loading..."}
        if not self.opened:
            return {"message": "Opening chest..."}
        view: dict = {}
        if self.collection_visible:
            view["relics"] = [relic_choice_view(r, i) for i, r in enumerate(self.relics)]
        view["can_proceed"] = self.claimed
        return view


@action("claim_treasure_relic")
def claim_treasure_relic(game: World, p):
    run = game.run
    room = room_of(game)
    if not isinstance(room, TreasureRoom) or not room.loaded:
        raise ActionRefused("Treasure room is not open")
    if not room.collection_visible:
        if room.claimed:
            game.note_duplicate()
        raise ActionRefused("Relic collection is not visible - chest may not be opened yet")
    index = p.int("index", "Missing 'index' (relic index)")
    rid = in_range(room.relics, index, f"Relic index {index} out of range ({len(room.relics)} relics available)")

    def effect() -> None:
        room.claimed = True
        run.add_relic(rid)

    return f"Claiming treasure relic: {RELICS[rid].name}", effect
