"""Run flow: starting a run, entering map nodes, winning/losing fights, opening the map.

Every room draws its randomness from ``rng.stream(run.seed, <purpose>, run.floor)`` so a
room's content depends only on the seed and where it is, not on earlier choices.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from . import mapgen, rng
from .bestiary import BOSS_ENCOUNTER, ELITE_ENCOUNTERS, MONSTER_ENCOUNTERS
from .combat import Combat
from .content import POTION_POOL, RELIC_POOL, REWARD_POOL
from .identity import start_time_for
from .mapgen import MapNode
from .model import Run

if TYPE_CHECKING:
    from .engine import Game


def start_run(game: "Game", character: str, seed: int | str) -> None:
    """Begin a run in its opening event."""
    from .screens.event import open_opening_event

    run = Run.new(seed, character, mapgen.generate(seed),
                  start_time_for(seed, game.runs_started))
    game.runs_started += 1
    game.run = run
    game.pending.clear()
    game.timers.clear()
    game.linger = None
    game.waiting = 0
    open_opening_event(game)
    game.save.write()


def open_map(game: "Game") -> None:
    run = game.run
    assert run is not None
    run.map_open = True
    game.transition()


def enter_node(game: "Game", node: MapNode) -> None:
    """Travel to ``node`` and build its room."""
    from .screens import rooms

    run = game.run
    assert run is not None
    run.map_open = False
    run.position = node.pos
    run.visited.append(node.pos)
    run.floor += 1
    run.room = None
    run.combat = None
    game.transition()
    kind = node.type
    if kind == "Unknown":
        kind = rooms.roll_unknown(run)
    rooms.build_room(game, kind)
    game.save.write()


def start_combat(game: "Game", kind: str) -> None:
    from .screens.battle import CombatRoom

    run = game.run
    assert run is not None
    r = rng.stream(run.seed, "combat", run.floor)
    if kind == "boss":
        monsters = BOSS_ENCOUNTER
    elif kind == "elite":
        monsters = r.choice(ELITE_ENCOUNTERS)
    else:
        monsters = r.choice(MONSTER_ENCOUNTERS)
    run.room = CombatRoom(kind)
    run.combat = Combat(run, kind, monsters, r)


def combat_won(game: "Game") -> None:
    """Leave combat: end-of-combat relics, then rewards (or the victory screen)."""
    from .screens.gameover import finish_run
    from .screens.overlay import GenericOverlay
    from .screens.rewards import Rewards

    run = game.run
    assert run is not None and run.combat is not None
    kind = run.combat.kind
    run.combat = None
    if run.has_relic("EMBER_HEART"):
        run.heal(6)
    if kind == "boss":
        overlay = GenericOverlay("victory_cutscene", "The Hollow King falls. The act is won.")
        game.push_overlay(overlay)
        game.after_reads(1, lambda: (game.pop_overlay(overlay), finish_run(game, True)))
        return
    game.transition()
    game.push_overlay(Rewards(combat_rewards(run, kind)))


def combat_rewards(run: Run, kind: str) -> list[dict]:
    r = rng.stream(run.seed, "rewards", run.floor)
    gold = r.randint(10, 20) if kind == "monster" else r.randint(25, 35)
    if run.has_relic("LUCKY_COIN"):
        gold = gold * 5 // 4
    items: list[dict] = [{"type": "gold", "gold": gold}]
    if r.random() < (0.4 if kind == "monster" else 1.0):
        items.append({"type": "potion", "potion": r.choice(POTION_POOL)})
    if kind == "elite":
        owned = {x.rid for x in run.relics}
        pool = [x for x in RELIC_POOL if x not in owned] or list(RELIC_POOL)
        items.append({"type": "relic", "relic": r.choice(pool)})
    items.append({"type": "card", "cards": card_choices(r, 3)})
    return items


def card_choices(r, n: int) -> list[str]:
    return r.sample(REWARD_POOL, n)
