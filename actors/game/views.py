"""JSON builders shared by the screens: cards, piles, relics, potions, statuses, player.

Each follows the function of McpMod.StateBuilder.cs named beside it. Null-valued keys are
written where the mod writes them (``star_cost``, ``unplayable_reason``, a relic's
``counter``); keys it only adds during a fight (energy, hand, piles) are absent otherwise.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .content import CHARACTERS, KEYWORDS, POTIONS, RARITY_ORDER, RELICS, STATUSES
from .model import Card, Run

if TYPE_CHECKING:
    from .combat import Combat


def cost_text(card: Card) -> str:
    """``GetCostDisplay``: "X" or the energy to spend, as a string (-1: unplayable)."""
    cost = card.d.cost_for(card.upgraded)
    if cost is None:
        return "-1"
    return str(cost)


def hover_tips(names: tuple[str, ...] | list[str]) -> list[dict]:
    """Helpers ``BuildHoverTips``: ``[{name, description}]``, duplicates dropped."""
    out, seen = [], set()
    for name in names:
        if name not in seen:
            seen.add(name)
            out.append({"name": name, "description": KEYWORDS.get(name, "")})
    return out


def card_info(card: Card) -> dict:
    """``BuildCardInfo``: the fields every card view shares (callers add ``index``)."""
    d = card.d
    return {
        "id": d.id,
        "name": card.name,
        "type": d.type,
        "cost": cost_text(card),
        "star_cost": None,
        "description": d.description(card.upgraded),
        "rarity": d.rarity,
        "is_upgraded": card.upgraded,
        "keywords": hover_tips(d.keywords),
    }


def card_view(card: Card, index: int) -> dict:
    """Card info plus ``index`` (card_reward, card_select, bundle and hand_select cards)."""
    return {**card_info(card), "index": index}


def hand_card_view(combat: Combat, card: Card, index: int) -> dict:
    """``BuildCardState``: a hand card."""
    view = card_view(card, index)
    reason = combat.unplayable_reason(card)
    view["target_type"] = card.d.target
    view["can_play"] = reason is None
    view["unplayable_reason"] = reason
    return view


def pile_view(cards: list[Card], sort: bool = False) -> list[dict]:
    """``BuildPileCardList``; the draw pile is sorted by rarity, then card id."""
    if sort:
        cards = sorted(cards, key=lambda c: (RARITY_ORDER.get(c.d.rarity, 9), c.d.id))
    return [
        {"name": c.name, "cost": cost_text(c), "star_cost": None, "description": c.d.description(c.upgraded)}
        for c in cards
    ]


def status_view(status: dict[str, int]) -> list[dict]:
    """``BuildPowersState``: ``{id, name, amount, type, description, keywords}``."""
    out = []
    for sid, amount in sorted(status.items()):
        d = STATUSES[sid]
        out.append(
            {
                "id": sid,
                "name": d.name,
                "amount": amount,
                "type": d.type,
                "description": d.text.format(amount),
                "keywords": [],
            }
        )
    return out


def relic_views(run: Run) -> list[dict]:
    """``BuildPlayerState`` relics: ``counter`` is null unless the relic shows one."""
    return [
        {
            "id": r.rid,
            "name": RELICS[r.rid].name,
            "description": RELICS[r.rid].description,
            "counter": r.counter,
            "keywords": hover_tips(RELICS[r.rid].keywords),
        }
        for r in run.relics
    ]


def potion_view(pid: str, slot: int) -> dict:
    """``BuildPlayerState`` potions: ``can_use_in_combat`` for CombatOnly and AnyTime."""
    p = POTIONS[pid]
    return {
        "id": p.id,
        "name": p.name,
        "description": p.description,
        "slot": slot,
        "can_use_in_combat": p.usage in ("CombatOnly", "AnyTime"),
        "target_type": p.target_type,
        "keywords": hover_tips(p.keywords),
    }


def combat_fields(combat: Combat) -> dict:
    """The fields ``BuildPlayerState`` adds only while a fight is in progress. No orbs,
    stars or pets here: the mod adds those only for characters that have them."""
    return {
        "energy": combat.energy,
        "max_energy": combat.max_energy,
        "hand": [hand_card_view(combat, c, i) for i, c in enumerate(combat.hand)],
        "draw_pile_count": len(combat.draw),
        "discard_pile_count": len(combat.discard),
        "exhaust_pile_count": len(combat.exhaust),
        "draw_pile": pile_view(combat.draw, sort=True),
        "discard_pile": pile_view(combat.discard),
        "exhaust_pile": pile_view(combat.exhaust),
    }


def player_view(run: Run) -> dict:
    """``BuildPlayerState``, keys in the mod's order."""
    combat = run.combat
    view = {
        "character": CHARACTERS[run.character].name,
        "hp": run.hp,
        "max_hp": run.max_hp,
        "block": combat.block if combat else 0,
    }
    if combat is not None:
        view.update(combat_fields(combat))
    view.update(
        {
            "gold": run.gold,
            "status": status_view(combat.status) if combat else [],
            "relics": relic_views(run),
            "potions": [potion_view(p, i) for i, p in enumerate(run.potions) if p is not None],
            "max_potion_slots": len(run.potions),
        }
    )
    return view


def run_view(run: Run) -> dict:
    return {"act": run.act, "floor": run.floor, "ascension": run.ascension}


def relic_choice_view(rid: str, index: int) -> dict:
    """A relic to pick (``BuildRelicSelectState``, ``BuildTreasureState``)."""
    d = RELICS[rid]
    return {
        "index": index,
        "id": d.id,
        "name": d.name,
        "description": d.description,
        "rarity": d.rarity,
        "keywords": hover_tips(d.keywords),
    }
