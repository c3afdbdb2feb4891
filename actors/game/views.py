"""JSON builders shared by the screens: cards, piles, relics, potions, statuses, player.

Null-valued keys are written where the real mod writes them (``star_cost``,
``unplayable_reason``, a relic's ``counter``); keys it never adds outside combat (energy,
piles) are absent.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .content import CHARACTERS, KEYWORDS, POTIONS, RARITY_ORDER, RELICS, STATUSES
from .model import Card, Run

if TYPE_CHECKING:
    from .combat import Combat


def cost_text(card: Card) -> str:
    cost = card.d.cost_for(card.upgraded)
    if cost is None:
        return "-1"
    return str(cost)


def card_view(card: Card, index: int) -> dict:
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
        "keywords": [{"name": k, "description": KEYWORDS.get(k, "")} for k in d.keywords],
        "index": index,
    }


def hand_card_view(combat: "Combat", card: Card, index: int) -> dict:
    view = card_view(card, index)
    reason = combat.unplayable_reason(card)
    view["target_type"] = card.d.target
    view["can_play"] = reason is None
    view["unplayable_reason"] = reason
    return view


def pile_view(cards: list[Card], sort: bool = False) -> list[dict]:
    if sort:
        cards = sorted(cards, key=lambda c: (RARITY_ORDER.get(c.d.rarity, 9), c.d.id))
    return [{"name": c.name, "cost": cost_text(c), "description": c.d.description(c.upgraded)}
            for c in cards]


def status_view(status: dict[str, int]) -> list[dict]:
    out = []
    for sid, amount in sorted(status.items()):
        d = STATUSES[sid]
        out.append({"id": sid, "name": d.name, "amount": amount, "type": d.type,
                    "description": d.text.format(amount)})
    return out


def relic_views(run: Run) -> list[dict]:
    return [{"id": r.rid, "name": RELICS[r.rid].name, "description": RELICS[r.rid].description,
             "counter": r.counter, "keywords": []} for r in run.relics]


def potion_view(pid: str, slot: int) -> dict:
    p = POTIONS[pid]
    return {"id": p.id, "name": p.name, "description": p.description, "slot": slot,
            "can_use_in_combat": True, "target_type": p.target_type, "keywords": []}


def player_view(run: Run) -> dict:
    combat = run.combat
    view = {
        "character": CHARACTERS[run.character].name,
        "hp": run.hp,
        "max_hp": run.max_hp,
        "block": combat.block if combat else 0,
        "gold": run.gold,
        "status": status_view(combat.status) if combat else [],
        "relics": relic_views(run),
        "potions": [potion_view(p, i) for i, p in enumerate(run.potions) if p is not None],
        "max_potion_slots": len(run.potions),
    }
    if combat is not None:
        view.update({
            "energy": combat.energy,
            "max_energy": combat.max_energy,
            "hand": [hand_card_view(combat, c, i) for i, c in enumerate(combat.hand)],
            "draw_pile_count": len(combat.draw),
            "discard_pile_count": len(combat.discard),
            "exhaust_pile_count": len(combat.exhaust),
            "draw_pile": pile_view(combat.draw, sort=True),
            "discard_pile": pile_view(combat.discard),
            "exhaust_pile": pile_view(combat.exhaust),
            "orbs": [],
            "orb_slots": 0,
            "orb_empty_slots": 0,
            "pets": [],
        })
    return view


def run_view(run: Run) -> dict:
    return {"act": run.act, "floor": run.floor, "ascension": run.ascension}


def relic_choice_view(rid: str, index: int) -> dict:
    d = RELICS[rid]
    return {"index": index, "id": d.id, "name": d.name, "description": d.description}
