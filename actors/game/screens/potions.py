"""``use_potion`` and ``discard_potion`` (McpMod.Actions.cs ``ExecuteUsePotion``,
``ExecuteDiscardPotion``), on any in-run screen.

Usage as the game's ``PotionUsage``: ``CombatOnly`` potions are refused outside a fight,
``AnyTime`` potions work anywhere (Healing Salve heals; the Foul Potion, out of combat,
can only be thrown at the fake merchant - which starts a fight), ``Automatic`` potions
(Fairy in a Bottle) are never used by hand: they trigger when the player would die.
``discard_potion`` works anywhere in a run.
"""

from __future__ import annotations

from .. import rng
from ..bestiary import FAKE_MERCHANT_ENCOUNTER
from ..content import POTIONS, PotionDef
from ..errors import ActionRefused
from ..model import room_of
from ..registry import action
from ..world import World
from .battle import actions_disabled, after_combat_change, resolve_target, reward_cards, start_combat
from .cardselect import CardSelect
from .fakemerchant import FakeMerchantRoom

SLOT_MISSING = "Missing 'slot' (potion slot index)"


def _slot(game: World, p) -> tuple[int, str]:
    run = game.run
    assert run is not None
    slot = p.int("slot", SLOT_MISSING)
    if not 0 <= slot < len(run.potions):
        raise ActionRefused(f"Potion slot {slot} out of range (player has {len(run.potions)} slots)")
    pid = run.potions[slot]
    if pid is None:
        raise ActionRefused(f"No potion in slot {slot}")
    return slot, pid


def _not_queued(game: World, slot: int, potion: PotionDef) -> None:
    """``potion.IsQueued``: a use accepted earlier and not yet applied (only while answering
    a POST; the queued use itself, re-validated when due, is no longer in the queue)."""
    if game.validating and any(b.get("slot") == slot for b in game.queued("use_potion")):
        raise ActionRefused(f"Potion '{potion.name}' is already queued for use")


def _usable(game: World, potion: PotionDef) -> None:
    """The usage checks, in ``ExecuteUsePotion``'s order."""
    run = game.run
    in_combat = run.combat is not None
    if potion.id == "FOUL_POTION" and not in_combat and not _merchant(game):
        raise ActionRefused(f"Potion '{potion.name}' cannot be used right now")
    if potion.usage == "CombatOnly":
        if not in_combat:
            raise ActionRefused(f"Potion '{potion.name}' can only be used in combat")
        if run.combat.phase != "player":
            raise ActionRefused("Cannot use potions outside of play phase")
    elif potion.usage == "Automatic":
        raise ActionRefused(f"Potion '{potion.name}' is automatic and cannot be manually used")
    if in_combat and actions_disabled(game):
        raise ActionRefused("Player actions are currently disabled")


def _merchant(game: World) -> FakeMerchantRoom | None:
    """The fake merchant a Foul Potion can be thrown at (before the fight)."""
    room = room_of(game)
    if isinstance(room, FakeMerchantRoom) and not room.started_fight and not game.run.map_open:
        return room
    return None


@action("use_potion")
def use_potion(game: World, p):
    run = game.run
    slot, pid = _slot(game, p)
    potion = POTIONS[pid]
    _not_queued(game, slot, potion)
    _usable(game, potion)
    target = None
    suffix = ""
    if potion.target_type == "AnyEnemy":
        tid = p.str("target", "Potion requires a target enemy. Provide 'target' with an entity_id.")
        if run.combat is None:
            raise ActionRefused("No combat state for target resolution")
        target = resolve_target(run.combat, tid)
        if target is None:
            raise ActionRefused(f"Target '{tid}' not found among alive enemies")
        suffix = f" targeting {target.name}"
    elif potion.target_type == "Self":
        suffix = " on self"

    def effect() -> None:
        run.potions[slot] = None
        _drink(game, potion, target)
        after_combat_change(game)

    return f"Using potion '{potion.name}' from slot {slot}{suffix}", effect


def _drink(game: World, potion: PotionDef, target) -> None:
    run = game.run
    combat = run.combat
    if potion.id == "HEALING_SALVE":
        run.heal(potion.amount)
    elif potion.id == "FOUL_POTION":
        merchant = _merchant(game)
        if combat is not None:
            for e in combat.living():
                e.hp = max(0, e.hp - potion.amount)
        elif merchant is not None:
            merchant.started_fight = True
            start_combat(game, "monster", FAKE_MERCHANT_ENCOUNTER, resume=merchant)
    elif combat is None:
        return
    elif potion.id == "FIRE_POTION" and target is not None:
        target.hp = max(0, target.hp - potion.amount)
    elif potion.id == "IRON_POTION":
        combat.block += potion.amount
    elif potion.id == "SPARK_POTION":
        combat.energy += potion.amount
    elif potion.id == "INSIGHT_POTION":
        r = rng.stream(run.seed, "insight", run.floor, combat.round)
        game.push_overlay(CardSelect.choose_into_hand(reward_cards(r, 3)))


@action("discard_potion")
def discard_potion(game: World, p):
    run = game.run
    slot, pid = _slot(game, p)
    name = POTIONS[pid].name
    return (f"Discarded potion '{name}' from slot {slot}", lambda: run.potions.__setitem__(slot, None))
