"""The ``treasure`` room: ``claim_treasure_relic`` once, then ``proceed``."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .. import rng
from ..content import RELIC_POOL
from ..errors import ActionRefused
from ..model import Screen
from ..registry import action, index_in
from ..views import relic_choice_view

if TYPE_CHECKING:
    from ..engine import Game
    from ..model import Run


class TreasureRoom(Screen):
    state_type = "treasure"
    room_type = "TreasureRoom"

    def __init__(self, run: "Run") -> None:
        owned = {x.rid for x in run.relics}
        pool = [x for x in RELIC_POOL if x not in owned] or list(RELIC_POOL)
        self.relics = [rng.stream(run.seed, "treasure", run.floor).choice(pool)]
        self.claimed = False

    def block(self, game: "Game") -> dict:
        return {"relics": [relic_choice_view(r, i) for i, r in enumerate(self.relics)],
                "claimed": self.claimed, "can_proceed": True}

    def proceed(self, game: "Game"):
        from ..runflow import open_map
        return "Leaving the treasure room", lambda: open_map(game)


@action("claim_treasure_relic", ("index", int, True))
def claim_treasure_relic(game: "Game", p: dict):
    run = game.run
    assert run is not None
    room = run.room
    if not isinstance(room, TreasureRoom) or game.current_screen() != "treasure":
        raise ActionRefused("Not in a treasure room")
    rid = index_in(room.relics, p["index"], "relic")
    if room.claimed:
        game.note_duplicate()
        raise ActionRefused("The treasure has already been claimed")

    def effect() -> None:
        room.claimed = True
        run.add_relic(rid)
    return f"Claiming {rid}", effect
