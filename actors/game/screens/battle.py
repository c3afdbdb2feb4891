"""Combat screens (``monster``/``elite``/``boss`` and ``hand_select``) and their actions:
``play_card``, ``end_turn``, ``use_potion``, ``discard_potion``, ``combat_select_card``,
``combat_confirm_selection``.

Hand indices shift left after each play; ``target`` is an ``entity_id`` over living
enemies (``GNAT_1`` becomes ``GNAT_0`` once ``GNAT_0`` dies).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .. import rng
from ..combat import Combat, intents
from ..content import POTIONS
from ..errors import ActionRefused
from ..model import Screen
from ..registry import action, index_in
from ..views import card_view, status_view

if TYPE_CHECKING:
    from ..engine import Game
    from ..model import Run

COMBAT_SCREENS = ("monster", "elite", "boss")
ROOM_TYPES = {"monster": "MonsterRoom", "elite": "EliteRoom", "boss": "BossRoom"}


class CombatRoom(Screen):
    def __init__(self, kind: str) -> None:
        self.state_type = kind
        self.room_type = ROOM_TYPES[kind]


def battle_block(run: "Run") -> dict:
    combat = run.combat
    assert combat is not None
    enemies = []
    for eid, e in combat.entity_ids():
        enemies.append({"entity_id": eid, "combat_id": e.combat_id, "name": e.name,
                        "hp": e.hp, "max_hp": e.max_hp, "block": e.block,
                        "status": status_view(e.status), "intents": intents(combat, e)})
    return {"round": combat.round, "turn": combat.phase,
            "is_play_phase": combat.phase == "player" and combat.hand_select is None,
            "enemies": enemies}


def hand_select_block(run: "Run") -> dict:
    hs = run.combat.hand_select if run.combat else None
    assert hs is not None
    return {"mode": hs.mode, "prompt": hs.prompt,
            "cards": [card_view(c, i) for i, c in enumerate(hs.cards)],
            "selected_cards": [card_view(c, i) for i, c in enumerate(hs.selected)],
            "can_confirm": hs.can_confirm}


def need_combat(game: "Game", what: str) -> Combat:
    run = game.run
    assert run is not None
    screen = game.current_screen()
    if screen == "hand_select":
        raise ActionRefused(f"Cannot {what}: finish the hand selection first")
    if screen not in COMBAT_SCREENS or run.combat is None:
        raise ActionRefused(f"Cannot {what}: not in combat")
    if run.combat.phase != "player":
        raise ActionRefused(f"Cannot {what}: it is the enemy turn")
    return run.combat


def after_combat_change(game: "Game") -> None:
    """Resolve a finished fight: victory leads to rewards, 0 HP to defeat."""
    from ..runflow import combat_won
    from .gameover import finish_run

    run = game.run
    if run is None or run.combat is None:
        return
    if run.hp <= 0:
        finish_run(game, False)
    elif not run.combat.living():
        combat_won(game)


@action("play_card", ("card_index", int, True), ("target", str, False))
def play_card(game: "Game", p: dict):
    combat = need_combat(game, "play a card")
    card = index_in(combat.hand, p["card_index"], "card")
    reason = combat.unplayable_reason(card)
    if reason is not None:
        raise ActionRefused(f"Card '{card.name}' cannot be played: {reason}")
    target = None
    if card.d.target == "AnyEnemy":
        if "target" not in p:
            raise ActionRefused(f"Card '{card.name}' requires a target")
        target = combat.enemy_by_entity(p["target"])
        if target is None:
            ids = [eid for eid, _ in combat.entity_ids()]
            raise ActionRefused(f"Invalid target '{p['target']}' (living: {ids})")
    message = f"Playing '{card.name}'" + (f" targeting {target.name}" if target else "")

    def effect() -> None:
        combat.play(card, target)
        after_combat_change(game)
    return message, effect


@action("end_turn")
def end_turn(game: "Game", p: dict):
    combat = need_combat(game, "end the turn")

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


def _potion_slot(game: "Game", slot: int) -> str:
    run = game.run
    assert run is not None
    if not 0 <= slot < len(run.potions) or run.potions[slot] is None:
        raise ActionRefused(f"No potion in slot {slot}")
    return run.potions[slot]


@action("use_potion", ("slot", int, True), ("target", str, False))
def use_potion(game: "Game", p: dict):
    from .cardselect import CardSelect

    run = game.run
    assert run is not None
    pid = _potion_slot(game, p["slot"])
    combat = need_combat(game, "use a potion")
    potion = POTIONS[pid]
    target = None
    if potion.target_type == "AnyEnemy":
        target = combat.enemy_by_entity(p.get("target", ""))
        if target is None:
            raise ActionRefused(f"Potion '{potion.name}' requires a valid target")

    def effect() -> None:
        run.potions[p["slot"]] = None
        if pid == "FIRE_POTION":
            target.hp = max(0, target.hp - potion.amount)
        elif pid == "IRON_POTION":
            combat.block += potion.amount
        elif pid == "SPARK_POTION":
            combat.energy += potion.amount
        elif pid == "INSIGHT_POTION":
            r = rng.stream(run.seed, "insight", run.floor, combat.round)
            from ..runflow import card_choices
            game.push_overlay(CardSelect.choose_into_hand(card_choices(r, 3)))
        after_combat_change(game)
    return f"Using {potion.name}", effect


@action("discard_potion", ("slot", int, True))
def discard_potion(game: "Game", p: dict):
    run = game.run
    assert run is not None
    pid = _potion_slot(game, p["slot"])
    return f"Discarding {POTIONS[pid].name}", lambda: run.potions.__setitem__(p["slot"], None)


def _need_hand_select(game: "Game"):
    run = game.run
    assert run is not None
    if game.current_screen() != "hand_select" or run.combat is None:
        raise ActionRefused("No hand selection in progress")
    return run.combat.hand_select


@action("combat_select_card", ("card_index", int, True))
def combat_select_card(game: "Game", p: dict):
    hs = _need_hand_select(game)
    card = index_in(hs.cards, p["card_index"], "card")
    if len(hs.selected) >= hs.count:
        game.note_duplicate()
        raise ActionRefused(f"Selection is full ({hs.count}); confirm it")

    def effect() -> None:
        hs.cards.remove(card)
        hs.selected.append(card)
    return f"Selected '{card.name}'", effect


@action("combat_confirm_selection", confirm=True)
def combat_confirm_selection(game: "Game", p: dict):
    hs = _need_hand_select(game)
    if not hs.can_confirm:
        raise ActionRefused(f"Select {hs.count - len(hs.selected)} more card(s) first")
    combat = game.run.combat
    return "Confirming selection", combat.confirm_hand_select
