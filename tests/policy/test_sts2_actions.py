"""The legal actions an agent is offered on each screen, against the screen samples written
from the mod's source (``vendor/sts2mcp/``, McpMod.StateBuilder.cs): only what the screen lists
and enables, nothing on screens that need no decision, and the screen's text without noise."""

from __future__ import annotations

import json
import os
from typing import ClassVar

import pytest

from actors.policy.sts2_actions import legal_actions, only_choice, proposal_for, screen_text
from tests.harness import REPO


class Memory:
    toggles: ClassVar[set] = set()
    skipped_reward = False


class Policy:
    ctx = Memory()


def sample(name: str) -> dict:
    with open(os.path.join(REPO, "vendor", "sts2mcp", f"{name}.json"), encoding="utf-8") as fh:
        return json.load(fh)


def offered(state: dict) -> dict[str, list[dict]]:
    out: dict[str, list[dict]] = {}
    for entry in legal_actions(Policy, state):
        out.setdefault(entry["action"], []).append(entry["args"])
    return out


@pytest.mark.parametrize("name", ["monster", "elite", "boss"])
def test_a_fight_offers_the_playable_cards_the_living_enemies_and_the_usable_potions(name):
    st = sample(name)
    hand = st["player"]["hand"]
    enemies = [e["entity_id"] for e in st["battle"]["enemies"] if e["hp"] > 0]
    got = offered(st)
    cards = sorted(i for args in got["play_card"] for i in args["card_index"])
    assert cards == sorted(c["index"] for c in hand if c["can_play"])
    for args in got["play_card"]:
        aimed = {c["index"] for c in hand if c["target_type"] == "AnyEnemy"}
        assert ("target" in args) == bool(set(args["card_index"]) & aimed)
        assert args.get("target", enemies) == enemies
    pots = sorted(s for args in got.get("use_potion", []) for s in args["slot"])
    assert pots == sorted(p["slot"] for p in st["player"]["potions"] if p.get("can_use_in_combat"))
    assert got["end_turn"] == [{}]


@pytest.mark.parametrize(
    "name",
    [
        "monster__enemy_turn",
        "monster__combat_ended",
        "treasure__opening",
        "shop__not_ready",
        "menu__main",
        "menu__popup",
        "game_over",
        "overlay",
    ],
)
def test_screens_that_need_no_decision_offer_nothing(name):
    assert legal_actions(Policy, sample(name)) == []


def test_only_what_is_enabled_stocked_affordable_or_unlocked_is_offered():
    shop = sample("shop")
    items = shop["shop"]["items"]
    assert offered(shop)["shop_purchase"] == [
        {"index": [i["index"] for i in items if i["is_stocked"] and i["can_afford"]]}
    ]
    rest = sample("rest_site")
    assert offered(rest)["choose_rest_option"] == [
        {"index": [o["index"] for o in rest["rest_site"]["options"] if o["is_enabled"]]}
    ]
    assert offered(sample("rest_site__used")) == {"proceed": [{}]}
    event = sample("event")
    assert offered(event)["choose_event_option"] == [
        {"index": [o["index"] for o in event["event"]["options"] if not o.get("is_locked")]}
    ]
    assert only_choice(legal_actions(Policy, sample("event__ancient_dialogue"))) == {"action": "advance_dialogue"}


def test_a_crystal_sphere_cell_must_be_one_of_the_clickable_cells():
    st = sample("crystal_sphere")
    cells = st["crystal_sphere"]["clickable_cells"]
    ok, why = proposal_for({"action": "crystal_sphere_click_cell", "x": cells[0]["x"], "y": cells[0]["y"]}, st)
    assert ok is not None and why is None
    bad, why = proposal_for({"action": "crystal_sphere_click_cell", "x": 99, "y": 99}, st)
    assert bad is None and "(99,99) is not one of the clickable cells" in why


def test_the_screen_text_leaves_out_nulls_glossaries_and_pile_contents_but_keeps_counts():
    st = sample("monster")
    text = screen_text(st)
    back = json.loads(text)
    assert "keywords" not in text and 'draw_pile"' not in text and "null" not in text
    assert back["player"]["draw_pile_count"] == st["player"]["draw_pile_count"]
    assert [c["name"] for c in back["player"]["hand"]] == [c["name"] for c in st["player"]["hand"]]
    assert len(text) < len(json.dumps(st)) * 0.8
