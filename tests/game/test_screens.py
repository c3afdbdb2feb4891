"""Non-combat screens: shop, rest site, treasure, events, card_select (all five types),
bundle_select, relic_select, crystal_sphere, fake_merchant, overlay, unknown, victory."""

from __future__ import annotations

import pytest

from actors.game.screens.events_content import pool_event
from actors.game.screens.rooms import build_room

from .conftest import arrange, get, new_run, ok, refused

pytestmark = pytest.mark.timeout(30)


def room(server, client, kind: str, gold: int | None = None) -> dict:
    new_run(client)

    def setup(game):
        if gold is not None:
            game.run.gold = gold
        if kind.isupper():
            game.run.room = pool_event(game, kind)
        else:
            build_room(game, kind)
    arrange(server, setup)
    return get(client)


def pass_dialogue(client, state) -> dict:
    while state["event"]["in_dialogue"]:
        state = ok(client, action="advance_dialogue")
    return state


def test_shop_purchase_removal_and_quirks(server, client):
    state = room(server, client, "Shop", gold=500)
    assert state["state_type"] == "shop"
    items = state["shop"]["items"]
    cats = [i["category"] for i in items]
    assert cats.count("card") == 3 and "relic" in cats and "card_removal" in cats
    assert set(items[0]) >= {"index", "category", "name", "cost", "is_stocked", "can_afford"}
    assert items[0]["card"]["id"] == items[0]["id"]
    state = ok(client, action="shop_purchase", index=0)
    assert state["player"]["gold"] == 500 - items[0]["cost"]
    assert state["shop"]["items"][0]["is_stocked"] is False
    assert "sold out" in refused(client, action="shop_purchase", index=0)
    removal = cats.index("card_removal")
    state = ok(client, action="shop_purchase", index=removal)
    cs = state["card_select"]
    assert cs["screen_type"] == "select" and cs["can_cancel"] is True
    assert "selected" not in str(sorted(cs))  # the selection is never exposed
    state = ok(client, action="select_card", index=0)
    assert state["card_select"]["can_confirm"] is True
    assert "preview_showing" in state["card_select"]
    state = ok(client, action="confirm_selection")
    assert state["state_type"] == "shop"
    assert state["shop"]["items"][removal]["is_stocked"] is False
    state = ok(client, action="proceed")
    assert state["state_type"] == "map"
    # quirks of the real mod: purchase still works and proceed still answers ok
    assert client.post("/api/v1/singleplayer",
                       json={"action": "proceed"}).json()["status"] == "ok"
    stocked = next(i for i in items if i["category"] == "potion")
    assert ok(client, action="shop_purchase", index=stocked["index"])["state_type"] == "map"
    stats = server.stats()
    assert stats["duplicate_guarded_actions"] == 1


def test_shop_not_enough_gold(server, client):
    room(server, client, "Shop", gold=0)
    assert "Not enough gold" in refused(client, action="shop_purchase", index=0)
    assert "Invalid shop item index" in refused(client, action="shop_purchase", index=50)


def test_rest_site_rest_and_duplicate(server, client):
    new_run(client)
    arrange(server, lambda g: setattr(g.run, "hp", 10))
    arrange(server, lambda g: build_room(g, "RestSite"))
    state = get(client)
    assert state["state_type"] == "rest_site"
    opts = state["rest_site"]["options"]
    assert [o["id"] for o in opts] == ["rest", "smith"]
    assert set(opts[0]) == {"index", "id", "name", "description", "is_enabled"}
    state = ok(client, action="choose_rest_option", index=0)
    assert state["player"]["hp"] == 10 + state["player"]["max_hp"] * 3 // 10
    assert not any(o["is_enabled"] for o in state["rest_site"]["options"])
    assert "already been used" in refused(client, action="choose_rest_option", index=1)
    assert ok(client, action="proceed")["state_type"] == "map"


def test_rest_site_smith_upgrade_preview_cancel_confirm(server, client):
    room(server, client, "RestSite")
    state = ok(client, action="choose_rest_option", index=1)
    cs = state["card_select"]
    assert cs["screen_type"] == "upgrade" and cs["preview_showing"] is False
    state = ok(client, action="select_card", index=2)
    assert state["card_select"]["preview_showing"] is True
    assert state["card_select"]["can_confirm"] is True
    assert "preview is showing" in refused(client, action="select_card", index=3)
    state = ok(client, action="cancel_selection")  # closes the preview only
    assert state["card_select"]["preview_showing"] is False
    assert state["card_select"]["can_confirm"] is False
    state = ok(client, action="select_card", index=2)
    state = ok(client, action="confirm_selection")
    assert state["state_type"] == "rest_site"
    deck = arrange(server, lambda g: [c.upgraded for c in g.run.deck])
    assert deck.count(True) == 1


def test_treasure(server, client):
    state = room(server, client, "Treasure")
    t = state["treasure"]
    assert t["claimed"] is False and len(t["relics"]) == 1
    n = len(state["player"]["relics"])
    state = ok(client, action="claim_treasure_relic", index=0)
    assert len(state["player"]["relics"]) == n + 1 and state["treasure"]["claimed"]
    assert "already been claimed" in refused(client, action="claim_treasure_relic", index=0)
    assert server.stats()["duplicate_guarded_actions"] == 1
    assert ok(client, action="proceed")["state_type"] == "map"


def test_transform_event_card_select(server, client):
    state = room(server, client, "SHIFTING_ALTAR")
    assert state["state_type"] == "event" and not state["event"]["in_dialogue"]
    assert "Cannot proceed" in refused(client, action="proceed")
    state = ok(client, action="choose_event_option", index=0)
    cs = state["card_select"]
    assert cs["screen_type"] == "transform" and cs["can_cancel"] is True
    assert refused(client, action="choose_event_option", index=0) == "Not in an event"
    before = arrange(server, lambda g: [c.cid for c in g.run.deck])
    state = ok(client, action="select_card", index=0)
    state = ok(client, action="confirm_selection")
    assert state["state_type"] == "event"
    assert state["event"]["options"] == [{"index": 0, "title": "Proceed",
                                          "description": "Continue onward.",
                                          "is_locked": False, "is_proceed": True}]
    after = arrange(server, lambda g: [c.cid for c in g.run.deck])
    assert after[0] != before[0] and after[1:] == before[1:]
    assert ok(client, action="choose_event_option", index=0)["state_type"] == "map"


def test_simple_select_toggles_without_exposing_selection(server, client):
    state = pass_dialogue(client, room(server, client, "WISHING_WELL"))
    state = ok(client, action="choose_event_option", index=0)
    cs = state["card_select"]
    assert cs["screen_type"] == "simple_select" and cs["can_confirm"] is False
    state = ok(client, action="select_card", index=0)
    assert state["card_select"]["can_confirm"] is True
    shown = state["card_select"]
    state = ok(client, action="select_card", index=0)  # toggles it off again
    assert state["card_select"]["can_confirm"] is False
    assert server.stats()["duplicate_guarded_actions"] == 1
    ok(client, action="select_card", index=0)
    ok(client, action="select_card", index=1)
    assert "Selection is full" in refused(client, action="select_card", index=2)
    assert shown["cards"] == state["card_select"]["cards"]
    size = arrange(server, lambda g: len(g.run.deck))
    state = ok(client, action="confirm_selection")
    assert arrange(server, lambda g: len(g.run.deck)) == size - 2
    assert state["state_type"] == "event"


def test_choose_card_select_and_cancel(server, client):
    room(server, client, "OLD_LIBRARY")
    state = ok(client, action="choose_event_option", index=0)
    cs = state["card_select"]
    assert cs["screen_type"] == "choose" and cs["can_skip"] is True
    assert "incomplete" in refused(client, action="confirm_selection")
    size = arrange(server, lambda g: len(g.run.deck))
    state = ok(client, action="select_card", index=2)
    assert state["state_type"] == "event"
    assert arrange(server, lambda g: len(g.run.deck)) == size + 1


def test_bundle_select(server, client):
    new_run(client)
    from actors.game.screens.events_content import _bundle
    arrange(server, lambda g: _bundle(g, g.run.room))
    state = get(client)
    bs = state["bundle_select"]
    assert len(bs["bundles"]) == 2 and len(bs["bundles"][0]["cards"]) == 3
    assert bs["can_confirm"] is False
    assert "Select a bundle" in refused(client, action="confirm_bundle_selection")
    state = ok(client, action="select_bundle", index=1)
    assert state["bundle_select"]["can_confirm"] is True
    size = arrange(server, lambda g: len(g.run.deck))
    state = ok(client, action="confirm_bundle_selection")
    assert arrange(server, lambda g: len(g.run.deck)) == size + 3
    assert state["state_type"] == "event"
    assert "No bundle_select" in refused(client, action="cancel_bundle_selection")


def test_relic_select_and_skip(server, client):
    new_run(client)
    from actors.game.screens.events_content import _relic_choice
    arrange(server, lambda g: _relic_choice(g, g.run.room))
    state = get(client)
    rs = state["relic_select"]
    assert len(rs["relics"]) == 3 and rs["can_skip"] is True
    assert set(rs["relics"][0]) == {"index", "id", "name", "description"}
    n = len(state["player"]["relics"])
    state = ok(client, action="select_relic", index=1)
    assert len(state["player"]["relics"]) == n + 1
    arrange(server, lambda g: _relic_choice(g, g.run.room))
    assert ok(client, action="skip_relic_selection")["state_type"] == "event"


def test_crystal_sphere(server, client):
    state = room(server, client, "CRYSTAL_SPHERE")
    state = ok(client, action="choose_event_option", index=0)
    cs = state["crystal_sphere"]
    assert cs["grid_width"] == 5 and len(cs["cells"]) == 25 and cs["tool"] == "small"
    assert all(c["content"] is None for c in cs["cells"])
    state = ok(client, action="crystal_sphere_click_cell", x=0, y=0)
    assert state["crystal_sphere"]["clicks_remaining"] == 5
    assert state["crystal_sphere"]["cells"][0]["revealed"] is True
    assert "already revealed" in refused(client, action="crystal_sphere_click_cell", x=0, y=0)
    assert "outside" in refused(client, action="crystal_sphere_click_cell", x=9, y=0)
    assert "Unknown tool" in refused(client, action="crystal_sphere_set_tool", tool="huge")
    state = ok(client, action="crystal_sphere_set_tool", tool="big")
    state = ok(client, action="crystal_sphere_click_cell", x=2, y=2)
    assert state["crystal_sphere"]["clicks_remaining"] == 2
    assert sum(c["revealed"] for c in state["crystal_sphere"]["cells"]) == 10
    assert "Not enough divinations" in refused(client, action="crystal_sphere_click_cell",
                                               x=4, y=4)
    state = ok(client, action="crystal_sphere_proceed")
    assert state["state_type"] == "rewards"
    assert server.stats()["duplicate_guarded_actions"] == 1
    assert ok(client, action="proceed")["state_type"] == "map"


def test_fake_merchant(server, client):
    state = room(server, client, "FAKE_MERCHANT", gold=50)
    assert state["state_type"] == "fake_merchant"
    opts = state["fake_merchant"]["options"]
    assert opts[1]["is_locked"] is True
    assert "locked" in refused(client, action="choose_event_option", index=1)
    assert "Not in a shop" in refused(client, action="shop_purchase", index=0)
    state = ok(client, action="choose_event_option", index=0)
    assert state["player"]["gold"] == 10 and "fake" in state["fake_merchant"]["description"]
    assert ok(client, action="choose_event_option", index=0)["state_type"] == "map"


def test_empty_room_is_unknown(server, client):
    state = room(server, client, "Empty")
    assert state["state_type"] == "unknown" and state["room_type"] == "EmptyRoom"
    assert ok(client, action="proceed")["state_type"] == "map"


def test_boss_victory_overlay_then_game_over(server, client):
    new_run(client)

    def boss(game):
        build_room(game, "Boss")
        for e in game.run.combat.enemies:
            e.hp = 1
        from actors.game.model import Card
        game.run.combat.hand = [Card(900, "CLEAVE")]
    arrange(server, boss)
    state = get(client)
    assert state["state_type"] == "boss"
    state = ok(client, action="play_card", card_index=0)
    assert state["state_type"] == "overlay"
    assert set(state["overlay"]) == {"screen_type", "message"}
    assert "overlay" in refused(client, action="proceed")
    state = get(client)
    assert state["state_type"] == "game_over" and state["game_over"]["victory"] is True
