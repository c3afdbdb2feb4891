"""Combat rules of the built-in STS2MCP policy: cards, targets, potions, in-combat selection.

Shapes (McpMod.StateBuilder.cs): ``monster|elite|boss`` carry ``battle`` (``BuildBattleState``:
``round``, ``turn``, ``is_play_phase``, ``enemies``) — or, once the combat ended and the
rewards are not shown yet, no ``battle`` and a top-level ``message`` ("Combat ended. Waiting
for rewards..."), which is only read again. ``battle`` can also be ``{error}`` (no combat
state yet). Enemies are alive ones only, with ``entity_id`` ``<id>_<n>`` numbered among the
*living* (``BuildEnemyState``): when one dies the others' ids shift, so a target is always
taken from the read being decided on, never remembered.

Potions (``BuildPlayerState``): ``{id, name, description, slot, can_use_in_combat,
target_type, keywords}``; ``use_potion {slot[, target]}`` needs ``target`` (an entity_id) for
``AnyEnemy`` only (McpMod.Actions.cs ``ExecuteUsePotion``). Out of combat, only potions that are
not combat-only can be used; the state does not say which, so the policy tries (when hurt, on
the map) and remembers a "can only be used in combat" or "is automatic" refusal for that potion id.
"""

from __future__ import annotations

from .base import Proposal

ENEMY_TARGETED = ("AnyEnemy",)
SELF_TARGETED = ("Self", "AnyPlayer", "AnyAlly", "None")
JUNK = ("Curse", "Status")


def combat(policy, st: dict, battle: dict) -> list[Proposal]:
    if "battle" not in st:
        return [Proposal.wait(f"combat ended: {st.get('message') or 'waiting for rewards'}; read again")]
    if battle.get("error"):
        return [Proposal.wait(f"no combat state yet ({battle['error']}): read again")]
    if not battle.get("is_play_phase", True) or battle.get("turn") not in (None, "player"):
        return [Proposal.wait("enemy turn")]
    player = st.get("player") or {}
    enemies = [e for e in battle.get("enemies") or [] if isinstance(e, dict) and e.get("hp", 0) > 0]
    target = min(enemies, key=lambda e: e.get("hp", 0) + e.get("block", 0)) if enemies else None
    incoming = sum(intent_damage(e) for e in enemies)
    lethal = target is not None and target.get("hp", 0) + target.get("block", 0) <= 6
    block_first = incoming > player.get("block", 0) and not lethal
    hand = [c for c in player.get("hand") or [] if isinstance(c, dict) and c.get("can_play")]
    hand.sort(key=lambda c: (c.get("type") != ("Skill" if block_first else "Attack"), c.get("index", 0)))
    out = combat_potions(st, battle, player, target, incoming)
    for card in hand:
        params = {"card_index": card.get("index", 0)}
        if card.get("target_type") in ENEMY_TARGETED:
            if target is None:
                continue
            params["target"] = target["entity_id"]
        out.append(Proposal("play_card", params, f"play {card.get('name')}"))
    return out + [Proposal("end_turn", {}, "end the turn" if hand else "no playable card")]


def combat_potions(st: dict, battle: dict, player: dict, target: dict | None, incoming: int) -> list[Proposal]:
    """Drink when it matters: a boss or elite's first round, half HP or less, or a lethal hit."""
    hp, max_hp = player.get("hp", 0), player.get("max_hp", 0) or 1
    big_fight = st.get("state_type") in ("boss", "elite") and battle.get("round", 1) <= 1
    in_danger = hp * 2 <= max_hp or incoming >= hp + player.get("block", 0)
    if not (big_fight or in_danger):
        return []
    out = []
    for pot in player.get("potions") or []:
        if not isinstance(pot, dict) or not pot.get("can_use_in_combat"):
            continue
        p = use_potion(pot, target, "danger" if in_danger else f"{st.get('state_type')} fight")
        if p is not None:
            out.append(p)
    return out


def use_potion(pot: dict, target: dict | None, why: str) -> Proposal | None:
    params = {"slot": pot.get("slot", 0)}
    if pot.get("target_type") in ENEMY_TARGETED:
        if target is None:
            return None
        params["target"] = target["entity_id"]
    return Proposal("use_potion", params, f"drink {pot.get('name')} ({why})", extra={"potion_id": pot.get("id")})


def out_of_combat_potions(policy, st: dict) -> list[Proposal]:
    """Hurt on a safe screen: try a self-targeted potion the game has not refused out of combat."""
    player = st.get("player") or {}
    if player.get("hp", 0) * 2 > (player.get("max_hp", 0) or 0):
        return []
    out = []
    for pot in player.get("potions") or []:
        if (
            isinstance(pot, dict)
            and pot.get("target_type") in SELF_TARGETED
            and pot.get("id") not in policy.ctx.combat_only_potions | policy.ctx.automatic_potions
        ):
            out.append(use_potion(pot, None, "hurt, out of combat"))
    return out


def potion_swap(policy, st: dict, reward: dict) -> list[Proposal]:
    """A potion reward with a full belt: make room only by dropping a duplicate for a new kind
    (the mod answers ``ok`` to a claim with a full belt and nothing changes)."""
    player = st.get("player") or {}
    potions = [p for p in player.get("potions") or [] if isinstance(p, dict)]
    if len(potions) < (player.get("max_potion_slots") or 0) or not potions:
        return []
    held = [p.get("id") for p in potions]
    if reward.get("potion_id") in held:
        return []
    dup = next((p for p in reversed(potions) if held.count(p.get("id")) > 1), None)
    if dup is None:
        return []
    return [
        Proposal(
            "discard_potion",
            {"slot": dup.get("slot", 0)},
            f"belt full: drop a second {dup.get('name')} for {reward.get('potion_name')}",
            extra={"potion_id": dup.get("id")},
        )
    ]


def hand_select(policy, st: dict, hs: dict) -> list[Proposal]:
    if hs.get("can_confirm"):
        return [Proposal("combat_confirm_selection", {}, "confirm the hand selection")]
    cards = [c for c in hs.get("cards") or [] if isinstance(c, dict)]
    cards.sort(key=lambda c: card_rank(c, hs.get("mode"), hs.get("prompt")))
    return [
        Proposal("combat_select_card", {"card_index": c.get("index", 0)}, f"select {c.get('name')}") for c in cards[:1]
    ] or [Proposal.wait("hand select without cards")]


def card_rank(card: dict, mode: str | None, prompt: str | None) -> tuple:
    """Which card to give up or improve first: junk and basics to lose, the rest to upgrade."""
    text = f"{mode or ''} {prompt or ''}".lower()
    if "upgrade" in text:
        return (bool(card.get("is_upgraded")), card.get("rarity") == "Basic", card.get("index", 0))
    junk = card.get("type") in JUNK or card.get("rarity") in JUNK
    return (not junk, card.get("rarity") != "Basic", card.get("index", 0))


def intent_damage(enemy: dict) -> int:
    total = 0
    for intent in enemy.get("intents") or []:
        digits = "".join(ch if ch.isdigit() else " " for ch in str(intent.get("label") or "")).split()
        if str(intent.get("type", "")).lower().startswith("attack") and digits:
            total += int(digits[0]) * (int(digits[1]) if len(digits) > 1 else 1)
    return total


def combat_escapes(policy, st: dict, battle: dict) -> list[Proposal]:
    return [Proposal("end_turn", {}, "end the turn")] if "battle" in st else []


def hand_select_escapes(policy, st: dict, hs: dict) -> list[Proposal]:
    return [Proposal("combat_confirm_selection", {}, "confirm the hand selection")] + [
        Proposal("combat_select_card", {"card_index": c.get("index", 0)}, f"select {c.get('name')}")
        for c in (hs.get("cards") or [])[:3]
        if isinstance(c, dict)
    ]


__all__ = [
    "combat",
    "hand_select",
    "combat_escapes",
    "hand_select_escapes",
    "out_of_combat_potions",
    "potion_swap",
    "card_rank",
    "intent_damage",
]
