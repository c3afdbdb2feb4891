"""Run flow: starting a run, entering map nodes, moving on to the next act.

Every room draws its randomness from ``rng.stream(run.seed, <purpose>, run.floor)`` so a
room's content depends only on the seed and where it is, not on earlier choices.

The screens own what a room or an act's opening event is; they register their builders
in ``HOOKS`` when imported (``screens.rooms`` and ``screens.events_content``), so this
module imports no screen.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from . import mapgen
from .identity import start_time_for
from .mapgen import MapNode
from .model import Run
from .world import World


@dataclass
class Hooks:
    """Builders registered by the screens: the room of a map node type, the act's
    opening (ancient) event, and what a "?" node turns out to be."""

    build_room: Callable[[World, str], None] | None = None
    act_opening: Callable[[World], None] | None = None
    roll_unknown: Callable[[Run], str] | None = None


HOOKS = Hooks()


def start_run(game: World, character: str, seed: int | str) -> None:
    """Begin a run in act 1's opening event."""
    run = Run.new(seed, character, mapgen.generate(seed), start_time_for(seed, game.runs_started))
    game.runs_started += 1
    game.run = run
    game.pending.clear()
    game.timers.clear()
    game.linger = None
    game.waiting = 0
    assert HOOKS.act_opening is not None
    HOOKS.act_opening(game)
    game.save.write()


def is_last_act(game: World) -> bool:
    assert game.run is not None
    return game.run.act >= game.knobs.acts


def start_next_act(game: World) -> None:
    """After an act's boss: the next act's map, starting in its opening event."""
    run = game.run
    assert run is not None
    run.act += 1
    run.act_map = mapgen.generate(run.seed, run.act)
    run.position = None
    run.visited = []
    run.map_open = False
    run.combat = None
    run.overlays = []
    run.lingering = None
    game.transition()
    assert HOOKS.act_opening is not None
    HOOKS.act_opening(game)
    game.save.write()


def enter_node(game: World, node: MapNode) -> None:
    """Travel to ``node`` and build its room (an overlay left under the map is cleared,
    as the game's ``ClearScreens`` does on a room transition)."""
    run = game.run
    assert run is not None and HOOKS.build_room is not None
    run.map_open = False
    run.position = node.pos
    run.visited.append(node.pos)
    run.floor += 1
    run.room = None
    run.combat = None
    run.lingering = None
    game.transition()
    kind = node.type
    if kind == "Unknown" and HOOKS.roll_unknown is not None:
        kind = HOOKS.roll_unknown(run)
    HOOKS.build_room(game, kind)
    game.save.write()
