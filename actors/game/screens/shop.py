"""The ``shop`` room: ``shop_purchase`` (cards, a relic, potions, card removal), ``proceed``.

Quirk kept from the real mod: ``shop_purchase`` only checks that the current *room* is a
shop, so it still works after ``proceed`` opened the map. Card removal opens a
``card_select`` (``select``); gold is paid when the removal is confirmed.
Buying a sold-out slot is refused and counted as a duplicate.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .. import rng
from ..content import CARDS, POTION_POOL, POTIONS, RELIC_POOL, RELICS
from ..errors import ActionRefused
from ..model import Card, Screen
from ..registry import action, index_in
from ..views import card_view
from .cardselect import CardSelect

if TYPE_CHECKING:
    from ..engine import Game
    from ..model import Run

CARD_PRICES = {"Common": 50, "Uncommon": 70, "Rare": 95}


class ShopRoom(Screen):
    state_type = "shop"
    room_type = "ShopRoom"

    def __init__(self, run: "Run") -> None:
        r = rng.stream(run.seed, "shop", run.floor)
        self.items: list[dict] = []
        for cid in r.sample(("CLEAVE", "JAB", "BULWARK", "SAP", "HONE", "SIFT", "FLEX",
                             "CYCLONE"), 3):
            price = CARD_PRICES[CARDS[cid].rarity] + r.randint(-5, 5)
            self.items.append({"category": "card", "id": cid, "cost": price})
        owned = {x.rid for x in run.relics}
        relics = [x for x in RELIC_POOL if x not in owned] or list(RELIC_POOL)
        self.items.append({"category": "relic", "id": r.choice(relics),
                           "cost": 140 + r.randint(0, 20)})
        for pid in r.sample(POTION_POOL, 2):
            self.items.append({"category": "potion", "id": pid, "cost": 45 + r.randint(0, 10)})
        self.items.append({"category": "card_removal", "id": "CARD_REMOVAL",
                           "cost": run.removal_cost})
        for item in self.items:
            item["stocked"] = True

    def block(self, game: "Game") -> dict:
        gold = game.run.gold
        out = []
        for i, item in enumerate(self.items):
            view = {"index": i, "category": item["category"], "id": item["id"],
                    "name": _name(item), "description": _description(item),
                    "cost": item["cost"], "is_stocked": item["stocked"],
                    "can_afford": gold >= item["cost"]}
            if item["category"] == "card":
                view["card"] = card_view(Card(0, item["id"]), i)
            out.append(view)
        return {"items": out, "can_proceed": True}

    def proceed(self, game: "Game"):
        from ..runflow import open_map
        return "Leaving the shop", lambda: open_map(game)


def _name(item: dict) -> str:
    cat = item["category"]
    if cat == "card":
        return CARDS[item["id"]].name
    if cat == "relic":
        return RELICS[item["id"]].name
    if cat == "potion":
        return POTIONS[item["id"]].name
    return "Card Removal"


def _description(item: dict) -> str:
    cat = item["category"]
    if cat == "card":
        return CARDS[item["id"]].description(False)
    if cat == "relic":
        return RELICS[item["id"]].description
    if cat == "potion":
        return POTIONS[item["id"]].description
    return "Remove a card from your deck."


@action("shop_purchase", ("index", int, True))
def shop_purchase(game: "Game", p: dict):
    run = game.run
    assert run is not None
    shop = run.room
    if not isinstance(shop, ShopRoom) or game.current_screen() not in ("shop", "map"):
        raise ActionRefused("Not in a shop")
    item = index_in(shop.items, p["index"], "shop item")
    if not item["stocked"]:
        game.note_duplicate()
        raise ActionRefused(f"'{_name(item)}' is already sold out")
    if run.gold < item["cost"]:
        raise ActionRefused(f"Not enough gold for '{_name(item)}' "
                            f"({run.gold} < {item['cost']})")
    if item["category"] == "potion" and None not in run.potions:
        raise ActionRefused("Potion slots are full")

    def effect() -> None:
        if item["category"] == "card_removal":
            game.push_overlay(_removal_select(run, item))
            return
        run.gold -= item["cost"]
        item["stocked"] = False
        if item["category"] == "card":
            run.add_card(item["id"])
        elif item["category"] == "relic":
            run.add_relic(item["id"])
        else:
            run.add_potion(item["id"])
    return f"Purchasing '{_name(item)}' for {item['cost']} gold", effect


def _removal_select(run: "Run", item: dict) -> CardSelect:
    def remove(game: "Game", chosen: list[Card]) -> None:
        for card in chosen:
            if card in run.deck:
                run.deck.remove(card)
        run.gold -= item["cost"]
        item["stocked"] = False
        run.removal_cost += 25
    return CardSelect("select", "Choose a card to remove.", list(run.deck), 1, remove,
                      can_cancel=True)
