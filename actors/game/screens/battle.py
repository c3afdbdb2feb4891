"""Combat screens (``monster``/``elite``/``boss`` and ``hand_select``) and their actions:
``play_card``, ``end_turn``, ``combat_select_card``, ``combat_confirm_selection``
(McpMod.Actions.cs ``ExecutePlayCard``, ``ExecuteEndTurn``, ``ExecuteCombatSelectCard``,
``ExecuteCombatConfirmSelection``); starting and ending a fight.

Hand indices shift left after each play; ``target`` is an ``entity_id`` over living
enemies (``GNAT_1`` becomes ``GNAT_0`` once ``GNAT_0`` dies) or a ``combat_id`` as a
string (``ResolveTarget``). When the last enemy dies the room shows the "combat ended"
state (McpMod.StateBuilder.cs 500-514: no ``battle``, a top-level ``message``, the player
without combat fields) for one read, then the rewards. An act's boss leads to rewards and
the next act; the last act's boss ends the run in victory (after an unhandled overlay,
the victory cut-scene).

"Player actions are disabled" (the mod's ``PlayerActionsDisabled``) during the enemies'
turn and while a card's own selection is open: a ``hand_select`` or a potion's
``card_select`` on top of the fight.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from .. import rng
from ..bestiary import ELITE_ENCOUNTERS, MONSTER_ENCOUNTERS, boss_of
from ..combat import Combat, Enemy, intents
from ..content import POTION_POOL, RELIC_POOL, REWARD_POOL
from ..errors import ActionRefused
from ..model import Screen
from ..registry import action, in_range
from ..render import TopLevel
from ..runflow import is_last_act, start_next_act
from ..views import card_view, status_view
from ..world import World
from .gameover import finish_run
from .overlay import show_overlay
from .rewards import Rewards

if TYPE_CHECKING:
    from ..model import Run

COMBAT_SCREENS = ("monster", "elite", "boss")
ROOM_TYPES = {"monster": "MonsterRoom", "elite": "EliteRoom", "boss": "BossRoom"}
ENDED = "Combat ended. Waiting for rewards..."
NOT_PLAY_PHASE = "Not in play phase - cannot act during enemy turn"
DISABLED = "Player actions are currently disabled"


class CombatRoom(Screen):
    """A fight's room. Once the fight is over (``run.combat`` is None) it shows the
    "combat ended" state until the rewards open. ``resume`` is the room the run returns
    to after the rewards (a fight started inside an event), else the map opens."""

    def __init__(self, kind: str, resume: Screen | None = None) -> None:
        self.state_type = kind
        self.room_type = ROOM_TYPES[kind]
        self.resume = resume

    def block(self, game: World) -> dict:
        return TopLevel(message=ENDED)


def battle_block(run: Run) -> dict:
    """``BuildBattleState`` (enemies: ``BuildEnemyState``)."""
    combat = run.combat
    assert combat is not None
    enemies = []
    for eid, e in combat.entity_ids():
        enemies.append(
            {
                "entity_id": eid,
                "combat_id": e.combat_id,
                "name": e.name,
                "hp": e.hp,
                "max_hp": e.max_hp,
                "block": e.block,
                "status": status_view(e.status),
                "intents": intents(combat, e),
            }
        )
    return {"round": combat.round, "turn": combat.phase, "is_play_phase": combat.phase == "player", "enemies": enemies}


def hand_select_block(run: Run) -> dict:
    """``BuildHandSelectState``: ``selected_cards`` only once a card is selected."""
    hs = run.combat.hand_select if run.combat else None
    assert hs is not None
    view: dict = {"mode": hs.mode, "prompt": hs.prompt, "cards": [card_view(c, i) for i, c in enumerate(hs.cards)]}
    if hs.selected:
        view["selected_cards"] = [{"index": i, "name": c.name} for i, c in enumerate(hs.selected)]
    view["can_confirm"] = hs.can_confirm
    return view


def actions_disabled(game: World) -> bool:
    """``PlayerActionsDisabled``: the enemies act, or a card's or potion's selection is
    still open."""
    run = game.run
    assert run is not None
    combat = run.combat
    return bool(combat and (combat.phase != "player" or combat.hand_select is not None or run.overlays))


def need_combat(game: World, disabled: str = DISABLED) -> Combat:
    """The checks ``ExecutePlayCard`` / ``ExecuteEndTurn`` start with."""
    run = game.run
    assert run is not None
    combat = run.combat
    if combat is None:
        raise ActionRefused("Not in combat")
    if combat.phase != "player":
        raise ActionRefused(NOT_PLAY_PHASE)
    if actions_disabled(game):
        raise ActionRefused(disabled)
    return combat


def resolve_target(combat: Combat, target: str) -> Enemy | None:
    """``ResolveTarget``: a number is a ``combat_id``, else an ``entity_id``."""
    if target.isdigit():
        return next((e for e in combat.enemies if e.combat_id == int(target)), None)
    return combat.enemy_by_entity(target)


# ----- starting and ending a fight ----------------------------------------------------
def start_combat(game: World, kind: str, monsters: tuple[str, ...] | None = None, resume: Screen | None = None) -> None:
    run = game.run
    assert run is not None
    r = rng.stream(run.seed, "combat", run.floor)
    if monsters is None:
        if kind == "boss":
            monsters = boss_of(run.act).monsters
        else:
            monsters = r.choice(ELITE_ENCOUNTERS if kind == "elite" else MONSTER_ENCOUNTERS)
    run.room = CombatRoom(kind, resume)
    combat = Combat(run, kind, monsters, r)
    if game.waiting:  # the fight begins once the room has loaded
        game.after_reads(game.waiting, lambda: setattr(run, "combat", combat))
    else:
        run.combat = combat


def after_combat_change(game: World) -> None:
    """Resolve a finished fight: 0 HP is a defeat, no living enemy a win."""
    run = game.run
    if run is None or run.combat is None:
        return
    if run.hp <= 0:
        finish_run(game, False)
    elif not run.combat.living():
        combat_won(game)


def combat_won(game: World) -> None:
    """The fight is over: end-of-combat relics now, the rewards (or the victory) after
    one "combat ended" read."""
    run = game.run
    assert run is not None and run.combat is not None
    kind = run.combat.kind
    run.combat = None
    if run.has_relic("EMBER_HEART"):
        run.heal(6)
    if kind == "boss" and is_last_act(game):
        game.after_reads(1, lambda: show_overlay(game, "NBossVictoryCutscene", lambda: finish_run(game, True)))
        return
    room = run.room
    after = _after_rewards(game, kind, room)
    items = combat_rewards(run, kind)
    game.after_reads(1, lambda: game.push_overlay(Rewards(items, after)))


def _after_rewards(game: World, kind: str, room: Screen | None) -> Callable[[World], None] | None:
    if kind == "boss":
        return start_next_act
    resume = room.resume if isinstance(room, CombatRoom) else None
    if resume is None:
        return None

    def back(game: World) -> None:
        game.run.room = resume

    return back


def combat_rewards(run: Run, kind: str) -> list[dict]:
    r = rng.stream(run.seed, "rewards", run.floor)
    gold = {"monster": r.randint(10, 20), "elite": r.randint(25, 35), "boss": r.randint(50, 60)}[kind]
    if run.has_relic("LUCKY_COIN"):
        gold = gold * 5 // 4
    items: list[dict] = [{"type": "gold", "gold": gold}]
    if r.random() < (0.4 if kind == "monster" else 1.0):
        items.append({"type": "potion", "potion": r.choice(POTION_POOL)})
    if kind == "elite":
        owned = {x.rid for x in run.relics}
        pool = [x for x in RELIC_POOL if x not in owned] or list(RELIC_POOL)
        items.append({"type": "relic", "relic": r.choice(pool)})
    items.append({"type": "card", "cards": reward_cards(r, 3)})
    return items


def reward_cards(r, n: int) -> list[str]:
    return r.sample(REWARD_POOL, n)


# ----- actions ------------------------------------------------------------------------
@action("play_card")
def play_card(game: World, p):
    combat = need_combat(game)
    index = p.int("card_index", "Missing 'card_index'")
    card = in_range(combat.hand, index, f"card_index {index} out of range (hand has {len(combat.hand)} cards)")
    reason = combat.unplayable_reason(card)
    if reason is not None:
        raise ActionRefused(f"Card '{card.name}' cannot be played: {reason}")
    target = None
    if card.d.target == "AnyEnemy":
        tid = p.str("target", "Card requires a target. Provide 'target' with an entity_id.")
        target = resolve_target(combat, tid)
        if target is None:
            raise ActionRefused(f"Target '{tid}' not found among alive enemies")
    message = f"Playing '{card.name}'" + (f" targeting {target.name}" if target else "")

    def effect() -> None:
        combat.play(card, target)
        after_combat_change(game)

    return message, effect


@action("end_turn")
def end_turn(game: World, p):
    combat = need_combat(game, DISABLED + " (turn may already be ending)")

    def enemy_turn() -> None:
        combat.run_enemy_turn()
        after_combat_change(game)

    def effect() -> None:
        combat.end_player_turn()
        n = game.knobs.enemy_turn_reads
        if n:
            game.after_reads(n, enemy_turn)
        else:
            enemy_turn()

    return "Ending turn", effect


def _need_hand_select(game: World):
    run = game.run
    assert run is not None
    if run.combat is None or run.combat.hand_select is None:
        raise ActionRefused("No in-combat card selection is active")
    return run.combat.hand_select


@action("combat_select_card")
def combat_select_card(game: World, p):
    hs = _need_hand_select(game)
    index = p.int("card_index", "Missing 'card_index' (index of the card in hand)")
    card = in_range(hs.cards, index, f"Card index {index} out of range ({len(hs.cards)} selectable cards)")
    message = f"Selecting card from hand: {card.name}"
    if len(hs.selected) >= hs.count:  # the game ignores a click beyond the count
        game.note_duplicate()
        return message, lambda: None

    def effect() -> None:
        hs.cards.remove(card)
        hs.selected.append(card)

    return message, effect


@action("combat_confirm_selection", confirm=True)
def combat_confirm_selection(game: World, p):
    hs = _need_hand_select(game)
    if not hs.can_confirm:
        raise ActionRefused("Confirm button is not enabled - select more cards first")
    combat = game.run.combat
    return "Confirming combat card selection", combat.confirm_hand_select
