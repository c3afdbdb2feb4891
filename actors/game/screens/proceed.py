"""``proceed``: leaves rewards, rest sites, shops, treasure rooms and empty rooms.

The screen object decides (its ``proceed(game)`` returns ``(message, effect)``). As in the
real mod, ``proceed`` from a rest site or shop keeps answering ``ok`` while the map is
open (a no-op), and it is refused on events (use the event's own proceed option).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..errors import ActionRefused
from ..registry import action

if TYPE_CHECKING:
    from ..engine import Game


@action("proceed")
def proceed(game: "Game", p: dict):
    run = game.run
    assert run is not None
    screen = game.current_screen()
    top = run.top
    if top is not None and screen == top.state_type and hasattr(top, "proceed"):
        return top.proceed(game)
    room = run.room
    if screen == "map" and room is not None and room.state_type in ("shop", "rest_site"):
        return "Proceeding", lambda: None
    if room is not None and screen == room.state_type and hasattr(room, "proceed"):
        return room.proceed(game)
    if screen == "event":
        raise ActionRefused("Cannot proceed from an event; choose one of its options")
    raise ActionRefused(f"Cannot proceed from the {screen} screen")
