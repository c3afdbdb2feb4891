"""The ``shop`` room and ``shop_purchase`` (McpMod.Actions.cs ``ExecuteShopPurchase``, which
serves the fake merchant too).

State as McpMod.StateBuilder.cs ``BuildShopState``: items in the order cards, relic,
potions, card removal; each ``{index, category, price, is_stocked, can_afford}`` plus
``on_sale`` and flattened ``card_*`` fields on cards, ``relic_*`` on relics, ``potion_*`` on
potions, ``keywords`` on all three, nothing more on the card removal.

- The first read after entering shows the "inventory not ready" variant (``items: []``,
  ``error``; the proceed button untouched, so ``can_proceed`` true).
- Later reads open the inventory (``OpenInventory``), which disables the proceed button:
  ``can_proceed`` reads false while the inventory shows; ``proceed`` closes it and leaves.
- Quirk kept from the mod: ``shop_purchase`` only checks that the current *room* is a
  shop, so it still buys after ``proceed`` opened the map.
- A potion bought with a full belt is answered ``ok`` and nothing happens (no gold
  spent), as the game's purchase fails silently.
- The card removal opens a ``card_select`` (``select``); the gold is paid on confirm.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .. import rng
from ..content import CARDS, POTION_POOL, POTIONS, RELIC_POOL
from ..errors import ActionRefused
from ..model import Card, Screen, room_of
from ..registry import action, in_range
from ..views import card_info, hover_tips
from ..world import World
from .cardselect import CardSelect
from .fakemerchant import FakeMerchantRoom, relic_item

if TYPE_CHECKING:
    from ..model import Run

CARD_PRICES = {"Common": 50, "Uncommon": 70, "Rare": 95}
NOT_READY = (
    "Shop inventory is not ready yet (null). Often happens right after entering "
    "the merchant from the map; retry in a moment."
)


class ShopRoom(Screen):
    state_type = "shop"
    room_type = "MerchantRoom"

    def __init__(self, game: World) -> None:
        run = game.run
        r = rng.stream(run.seed, "shop", run.floor)
        self.entries: list[dict] = []
        sale = r.randrange(3)
        for i, cid in enumerate(r.sample(("CLEAVE", "JAB", "BULWARK", "SAP", "HONE", "SIFT", "FLEX", "CYCLONE"), 3)):
            price = CARD_PRICES[CARDS[cid].rarity] + r.randint(-5, 5)
            self.entries.append(
                {"category": "card", "id": cid, "on_sale": i == sale, "cost": price // 2 if i == sale else price}
            )
        owned = {x.rid for x in run.relics}
        relics = [x for x in RELIC_POOL if x not in owned] or list(RELIC_POOL)
        self.entries.append({"category": "relic", "id": r.choice(relics), "cost": 140 + r.randint(0, 20)})
        for pid in r.sample(POTION_POOL, 2):
            self.entries.append({"category": "potion", "id": pid, "cost": 45 + r.randint(0, 10)})
        self.entries.append({"category": "card_removal", "id": None, "cost": run.removal_cost})
        for entry in self.entries:
            entry["stocked"] = True
        self.ready = False
        game.after_reads(game.waiting + 1, lambda: setattr(self, "ready", True))

    @property
    def inventory(self) -> list[dict] | None:
        return self.entries if self.ready else None

    def block(self, game: World) -> dict:
        if not self.ready:
            return {"items": [], "can_proceed": True, "error": NOT_READY}
        gold = game.run.gold
        return {"items": [shop_item(e, i, gold) for i, e in enumerate(self.entries)], "can_proceed": False}


def shop_item(entry: dict, index: int, gold: int) -> dict:
    cat = entry["category"]
    if cat == "relic":
        return relic_item(entry, index, gold)
    item = {
        "index": index,
        "category": cat,
        "price": entry["cost"],
        "is_stocked": entry["stocked"],
        "can_afford": gold >= entry["cost"],
    }
    if cat == "card":
        info = card_info(Card(0, entry["id"]))
        item["on_sale"] = entry["on_sale"]
        for key in ("id", "name", "type", "cost", "star_cost", "rarity", "description"):
            item[f"card_{key}"] = info[key]
        item["keywords"] = info["keywords"]
    elif cat == "potion":
        d = POTIONS[entry["id"]]
        item.update(
            {
                "potion_id": d.id,
                "potion_name": d.name,
                "potion_description": d.description,
                "keywords": hover_tips(d.keywords),
            }
        )
    return item


def _inventory(game: World) -> list[dict]:
    room = room_of(game)
    if not isinstance(room, (ShopRoom, FakeMerchantRoom)):
        raise ActionRefused("Not in a shop")
    if room.inventory is None:
        raise ActionRefused("Shop inventory not ready yet; wait a moment and retry")
    return room.inventory


@action("shop_purchase")
def shop_purchase(game: World, p):
    run = game.run
    entries = _inventory(game)
    index = p.int("index", "Missing 'index' (shop item index)")
    entry = in_range(entries, index, f"Shop item index {index} out of range ({len(entries)} items)")
    if not entry["stocked"]:
        game.note_duplicate()
        raise ActionRefused("Item is sold out")
    if run.gold < entry["cost"]:
        raise ActionRefused(f"Not enough gold (need {entry['cost']}, have {run.gold})")
    return f"Purchasing item for {entry['cost']} gold", lambda: _buy(game, entry)


def _buy(game: World, entry: dict) -> None:
    run = game.run
    cat = entry["category"]
    if cat == "card_removal":
        game.push_overlay(_removal_select(run, entry))
        return
    if cat == "potion" and None not in run.potions:
        return  # the belt is full: the purchase fails, nothing changes
    run.gold -= entry["cost"]
    entry["stocked"] = False
    if cat == "card":
        run.add_card(entry["id"])
    elif cat == "relic":
        run.add_relic(entry["id"])
    else:
        run.add_potion(entry["id"])


def _removal_select(run: Run, entry: dict) -> CardSelect:
    def remove(game: World, chosen: list[Card]) -> None:
        for card in chosen:
            if card in run.deck:
                run.deck.remove(card)
        run.gold -= entry["cost"]
        entry["stocked"] = False
        run.removal_cost += 25

    return CardSelect("select", "Choose a card to remove.", list(run.deck), 1, remove, can_cancel=True)
