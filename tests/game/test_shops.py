"""Shops, the fake merchant and the crystal sphere through HTTP, each rule beside the
McpMod source function it follows (StateBuilder ``BuildShopState``,
``BuildFakeMerchantState``, ``BuildFakeMerchantShopItems``, ``BuildCrystalSphereState``;
Actions ``ExecuteShopPurchase``, ``ExecuteProceed``, ``ExecuteCrystalSphere*``)."""

from __future__ import annotations

import pytest

from actors.game.screens.events_content import pool_event
from actors.game.screens.rooms import build_room

from .conftest import arrange, get, new_run, ok, post, refused

pytestmark = pytest.mark.timeout(30)

ITEM = ["index", "category", "price", "is_stocked", "can_afford"]
CARD_ITEM = ITEM + [
    "on_sale",
    "card_id",
    "card_name",
    "card_type",
    "card_cost",
    "card_star_cost",
    "card_rarity",
    "card_description",
    "keywords",
]


def enter(server, client, kind: str, gold: int = 500, potions=None) -> dict:
    new_run(client)

    def setup(game):
        game.run.gold = gold
        if potions is not None:
            game.run.potions = list(potions)
        if kind == "CRYSTAL_SPHERE":
            game.run.room = pool_event(game, kind)
        else:
            build_room(game, kind)

    arrange(server, setup)
    return get(client)


def test_shop_not_ready_then_items_as_the_mod_shapes_them(server, client):
    """BuildShopState: the not-ready variant first; then items by category (flattened
    card_*/relic_*/potion_* fields, on_sale on cards, bare card_removal); can_proceed
    false while the inventory is open. ExecuteShopPurchase texts and order."""
    state = enter(server, client, "Shop")
    assert state["shop"] == {
        "items": [],
        "can_proceed": True,
        "error": (
            "Shop inventory is not ready yet (null). Often happens right after entering the "
            "merchant from the map; retry in a moment."
        ),
    }
    assert refused(client, action="shop_purchase", index=0) == "Shop inventory not ready yet; wait a moment and retry"
    shop = get(client)["shop"]
    assert list(shop) == ["items", "can_proceed"] and shop["can_proceed"] is False
    items = shop["items"]
    assert [i["category"] for i in items] == ["card"] * 3 + ["relic"] + ["potion"] * 2 + ["card_removal"]
    assert list(items[0]) == CARD_ITEM and isinstance(items[0]["on_sale"], bool)
    assert list(items[3]) == ITEM + ["relic_id", "relic_name", "relic_description", "keywords"]
    assert list(items[4]) == ITEM + ["potion_id", "potion_name", "potion_description", "keywords"]
    assert list(items[6]) == ITEM
    assert refused(client, action="shop_purchase") == "Missing 'index' (shop item index)"
    assert refused(client, action="shop_purchase", index=7) == "Shop item index 7 out of range (7 items)"
    assert post(client, action="shop_purchase", index=0) == {
        "status": "ok",
        "message": f"Purchasing item for {items[0]['price']} gold",
    }
    state = get(client)
    assert state["player"]["gold"] == 500 - items[0]["price"]
    assert state["shop"]["items"][0]["is_stocked"] is False
    assert refused(client, action="shop_purchase", index=0) == "Item is sold out"
    arrange(server, lambda g: setattr(g.run, "gold", 1))
    assert refused(client, action="shop_purchase", index=1) == f"Not enough gold (need {items[1]['price']}, have 1)"


def test_shop_full_belt_removal_proceed_and_the_room_only_quirk(server, client):
    """A potion bought with a full belt: ok, nothing changes. Card removal opens a
    'select' card_select, paid on confirm. ExecuteProceed's shop branch; the purchase
    still works from the map (ExecuteShopPurchase checks only the room)."""
    enter(server, client, "Shop", potions=["FIRE_POTION"] * 3)
    items = get(client)["shop"]["items"]
    assert ok(client, action="shop_purchase", index=4)["player"]["gold"] == 500
    state = get(client)
    assert state["shop"]["items"][4]["is_stocked"] is True
    state = ok(client, action="shop_purchase", index=6)
    assert state["card_select"]["screen_type"] == "select"
    assert state["player"]["gold"] == 500
    size = arrange(server, lambda g: len(g.run.deck))
    ok(client, action="select_card", index=0)
    state = ok(client, action="confirm_selection")
    assert state["state_type"] == "shop" and state["player"]["gold"] == 500 - items[6]["price"]
    assert arrange(server, lambda g: len(g.run.deck)) == size - 1
    assert post(client, action="proceed")["message"] == "Proceeding from shop"
    assert get(client)["state_type"] == "map"
    arrange(server, lambda g: g.run.potions.__setitem__(0, None))
    state = ok(client, action="shop_purchase", index=5)
    assert state["state_type"] == "map" and len(state["player"]["potions"]) == 3


def test_fake_merchant_is_a_relic_shop(server, client):
    """BuildFakeMerchantState / BuildFakeMerchantShopItems: not ready first, then relic
    items only; bought with shop_purchase; no event option buttons; proceed leaves."""
    state = enter(server, client, "FakeMerchant", gold=100)
    fm = state["fake_merchant"]
    assert fm == {
        "event_id": "FAKE_MERCHANT",
        "event_name": "Fake Merchant",
        "started_fight": False,
        "shop": {
            "items": [],
            "error": "Fake merchant inventory is not ready yet; retry in a moment.",
            "can_proceed": False,
        },
    }
    shop = get(client)["fake_merchant"]["shop"]
    assert {i["category"] for i in shop["items"]} == {"relic"}
    assert list(shop["items"][0]) == ITEM + ["relic_id", "relic_name", "relic_description", "keywords"]
    n = len(get(client)["player"]["relics"])
    price = shop["items"][0]["price"]
    state = ok(client, action="shop_purchase", index=0)
    assert len(state["player"]["relics"]) == n + 1 and state["player"]["gold"] == 100 - price
    assert refused(client, action="choose_event_option", index=0) == "No event options available"
    assert post(client, action="proceed")["message"] == "Proceeding from fake merchant"
    assert get(client)["state_type"] == "map"


def test_fake_merchant_fight_with_the_foul_potion(server, client):
    """A Foul Potion thrown at the fake merchant (AnyTime usage, out of combat) starts a
    fight; after its rewards the room shows the started-fight variant."""
    enter(server, client, "FakeMerchant", potions=["FOUL_POTION", None, None])
    get(client)
    assert post(client, action="use_potion", slot=0)["message"] == "Using potion 'Foul Potion' from slot 0"
    state = get(client)
    assert state["state_type"] == "monster"
    assert [e["entity_id"] for e in state["battle"]["enemies"]] == ["FAKE_MERCHANT_0"]
    arrange(server, lambda g: setattr(g.run.combat.enemies[0], "hp", 0))
    ok(client, action="end_turn")  # the fight resolves as the turn ends
    state = get(client)
    while state["state_type"] != "rewards":
        state = get(client)
    state = ok(client, action="proceed")
    assert state["fake_merchant"] == {
        "event_id": "FAKE_MERCHANT",
        "event_name": "Fake Merchant",
        "started_fight": True,
        "shop": {"items": [], "can_proceed": True},
        "message": "The fake merchant has been defeated. Proceed to map.",
    }
    assert refused(client, action="shop_purchase", index=0) == "Shop inventory not ready yet; wait a moment and retry"
    assert ok(client, action="proceed")["state_type"] == "map"


def test_foul_potion_elsewhere_cannot_be_used(server, client):
    """ExecuteUsePotion: PassesCustomUsabilityCheck fails out of combat away from a
    merchant."""
    new_run(client)
    arrange(server, lambda g: setattr(g.run, "potions", ["FOUL_POTION", None, None]))
    assert refused(client, action="use_potion", slot=0) == "Potion 'Foul Potion' cannot be used right now"


def test_crystal_sphere(server, client):
    """BuildCrystalSphereState (cells, clickable_cells, revealed_items, tools,
    divinations_left_text, can_proceed only when the button shows) and the three actions'
    checks and texts; after proceed the map is reported, the sphere lingering under it
    (McpMod.StateBuilder.cs ``BuildGameState``)."""
    enter(server, client, "CRYSTAL_SPHERE")
    assert refused(client, action="crystal_sphere_proceed") == "Crystal Sphere screen is not open"
    cs = ok(client, action="choose_event_option", index=0)["crystal_sphere"]
    assert list(cs) == [
        "instructions_title",
        "instructions_description",
        "grid_width",
        "grid_height",
        "cells",
        "clickable_cells",
        "revealed_items",
        "tool",
        "can_use_big_tool",
        "can_use_small_tool",
        "divinations_left_text",
        "can_proceed",
    ]
    assert (cs["grid_width"], cs["grid_height"], len(cs["cells"])) == (5, 4, 20)
    assert list(cs["cells"][0]) == ["x", "y", "is_hidden", "is_clickable", "is_highlighted", "is_hovered"]
    assert cs["tool"] == "big" and cs["can_use_big_tool"] and cs["can_use_small_tool"]
    assert cs["divinations_left_text"] == "5 divinations left" and not cs["can_proceed"]
    assert len(cs["clickable_cells"]) == 20 and cs["revealed_items"] == []
    assert refused(client, action="crystal_sphere_proceed") == "Crystal Sphere proceed button is not enabled"
    assert refused(client, action="crystal_sphere_set_tool") == "Missing 'tool' (expected 'big' or 'small')"
    assert refused(client, action="crystal_sphere_set_tool", tool="huge") == "Unknown Crystal Sphere tool: huge"
    assert refused(client, action="crystal_sphere_click_cell", x=1) == "Missing 'y' (cell y-coordinate)"
    assert refused(client, action="crystal_sphere_click_cell", x=9, y=0) == "Crystal Sphere cell (9, 0) was not found"
    assert (
        post(client, action="crystal_sphere_click_cell", x=1, y=1)["message"] == "Clicking Crystal Sphere cell (1, 1)"
    )
    cs = get(client)["crystal_sphere"]
    revealed = [c for c in cs["cells"] if not c["is_hidden"]]
    assert len(revealed) == 9 and not any(c["is_clickable"] for c in revealed)
    assert all(("item_type" in c) == ("is_good" in c) for c in cs["cells"])
    assert revealed_items_match(cs)
    assert (
        refused(client, action="crystal_sphere_click_cell", x=1, y=1) == "Crystal Sphere cell (1, 1) is not clickable"
    )
    cs = ok(client, action="crystal_sphere_click_cell", x=3, y=2)["crystal_sphere"]
    assert cs["divinations_left_text"] == "1 divinations left"
    assert cs["tool"] == "small" and cs["can_use_big_tool"] is False
    assert refused(client, action="crystal_sphere_set_tool", tool="big") == "Crystal Sphere tool 'big' is not available"
    x, y = (cs["clickable_cells"][0][k] for k in ("x", "y"))
    cs = ok(client, action="crystal_sphere_click_cell", x=x, y=y)["crystal_sphere"]
    assert cs["tool"] == "none" and cs["can_proceed"] is True
    assert not cs["can_use_big_tool"] and not cs["can_use_small_tool"]
    assert post(client, action="crystal_sphere_proceed")["message"] == "Proceeding from Crystal Sphere"
    assert get(client)["state_type"] == "map"
    assert refused(client, action="crystal_sphere_proceed") == "Crystal Sphere proceed button is not enabled"


def revealed_items_match(cs: dict) -> bool:
    """revealed_items are the distinct items with a revealed cell, with their size."""
    kinds = {c["item_type"] for c in cs["cells"] if "item_type" in c}
    return {i["item_type"] for i in cs["revealed_items"]} == kinds and all(
        list(i) == ["item_type", "x", "y", "width", "height", "is_good"] for i in cs["revealed_items"]
    )
