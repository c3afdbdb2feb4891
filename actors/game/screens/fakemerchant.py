"""The fake merchant: an event room shown as a relic-only shop (``fake_merchant``).

State as McpMod.StateBuilder.cs ``BuildFakeMerchantState`` /
``BuildFakeMerchantShopItems``: ``{event_id, event_name, started_fight, shop: {items,
can_proceed}}``; items are relics only (``price``, ``relic_*``, ``keywords``, no
``on_sale``). Bought with ``shop_purchase`` (``ExecuteShopPurchase`` handles both rooms,
see ``shop``), left with ``proceed`` (``ExecuteProceed``'s fake-merchant branch, which
closes the inventory first).

- The first read after entering shows the "inventory not ready" variant (``items: []``,
  ``error``).
- ``can_proceed`` is the proceed button's state: the state read opens the inventory by
  clicking the merchant, which disables that button (the source's comment), so it reads
  false while the merchant trades; ``proceed`` still works.
- Throwing a Foul Potion at him (``use_potion``, out of combat) starts a fight; after its
  rewards the room shows ``started_fight: true``, an empty shop with ``can_proceed: true``
  and the source's ``message``.
"""

from __future__ import annotations

from .. import rng
from ..content import FAKE_RELICS, RELICS
from ..model import Screen
from ..views import hover_tips
from ..world import World

NOT_READY = "Fake merchant inventory is not ready yet; retry in a moment."
DEFEATED = "The fake merchant has been defeated. Proceed to map."


class FakeMerchantRoom(Screen):
    state_type = "fake_merchant"
    room_type = "EventRoom"
    event_id = "FAKE_MERCHANT"
    name = "Fake Merchant"

    def __init__(self, game: World) -> None:
        run = game.run
        r = rng.stream(run.seed, "fake_merchant", run.floor)
        self.entries = [
            {"category": "relic", "id": rid, "cost": 40 + r.randint(0, 30), "stocked": True} for rid in FAKE_RELICS
        ]
        self.ready = False
        self.started_fight = False
        game.after_reads(game.waiting + 1, lambda: setattr(self, "ready", True))

    @property
    def inventory(self) -> list[dict] | None:
        """The merchant's entries, or None while not ready (or after the fight)."""
        return self.entries if self.ready and not self.started_fight else None

    def block(self, game: World) -> dict:
        view = {"event_id": self.event_id, "event_name": self.name, "started_fight": self.started_fight}
        if self.started_fight:
            view["shop"] = {"items": [], "can_proceed": True}
            view["message"] = DEFEATED
            return view
        if not self.ready:
            shop: dict = {"items": [], "error": NOT_READY}
        else:
            shop = {"items": [relic_item(e, i, game.run.gold) for i, e in enumerate(self.entries)]}
        shop["can_proceed"] = False  # the open inventory disables the proceed button
        view["shop"] = shop
        return view


def relic_item(entry: dict, index: int, gold: int) -> dict:
    """A relic entry as ``BuildShopState`` / ``BuildFakeMerchantShopItems`` shape it."""
    d = RELICS[entry["id"]]
    return {
        "index": index,
        "category": "relic",
        "price": entry["cost"],
        "is_stocked": entry["stocked"],
        "can_afford": gold >= entry["cost"],
        "relic_id": d.id,
        "relic_name": d.name,
        "relic_description": d.description,
        "keywords": hover_tips(d.keywords),
    }
