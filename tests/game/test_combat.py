"""Combat: fields, play_card, energy, block, targets, X-cost, ids, end_turn, potions,
hand_select (upgrade and simple modes)."""

from __future__ import annotations

import random

import pytest

from actors.game.combat import Combat
from actors.game.model import Card
from actors.game.screens.battle import CombatRoom

from .conftest import arrange, get, new_run, ok, refused

pytestmark = pytest.mark.timeout(30)


def fight(server, client, monsters=("GNAT", "GNAT"), hand=None, kind="monster",
          potions=None) -> dict:
    """Start a run, then put the player in a fight with a chosen hand (white-box)."""
    new_run(client)

    def setup(game):
        run = game.run
        run.room = CombatRoom(kind)
        run.combat = Combat(run, kind, tuple(monsters), random.Random(5))
        if hand is not None:
            run.combat.hand = [Card(100 + i, cid) for i, cid in enumerate(hand)]
        if potions is not None:
            run.potions = list(potions) + [None] * (3 - len(potions))
    arrange(server, setup)
    return get(client)


def test_combat_fields(server, client):
    state = fight(server, client)
    assert state["state_type"] == "monster"
    p = state["player"]
    for key in ("energy", "max_energy", "hand", "draw_pile_count", "discard_pile_count",
                "exhaust_pile_count", "draw_pile", "discard_pile", "exhaust_pile", "orbs",
                "orb_slots", "orb_empty_slots", "pets", "relics", "potions",
                "max_potion_slots", "status", "block", "gold"):
        assert key in p, key
    assert p["energy"] == 3 and len(p["hand"]) == 5 and p["draw_pile_count"] == 5
    card = p["hand"][0]
    assert set(card) == {"id", "name", "type", "cost", "star_cost", "description", "rarity",
                         "is_upgraded", "keywords", "index", "target_type", "can_play",
                         "unplayable_reason"}
    assert isinstance(card["cost"], str) and card["star_cost"] is None
    assert set(p["draw_pile"][0]) == {"name", "cost", "description"}
    battle = state["battle"]
    assert battle["round"] == 1 and battle["turn"] == "player" and battle["is_play_phase"]
    assert [e["entity_id"] for e in battle["enemies"]] == ["GNAT_0", "GNAT_1"]
    enemy = battle["enemies"][0]
    assert set(enemy) == {"entity_id", "combat_id", "name", "hp", "max_hp", "block",
                          "status", "intents"}
    assert set(enemy["intents"][0]) == {"type", "label", "title", "description"}


def test_play_shifts_hand_and_spends_energy(server, client):
    fight(server, client, hand=["STRIKE", "DEFEND", "STRIKE", "DEFEND", "JAB"])
    reply = client.post("/api/v1/singleplayer", json={"action": "play_card", "card_index": 1})
    assert reply.json() == {"status": "ok", "message": "Playing 'Defend'"}
    state = get(client)
    p = state["player"]
    assert p["block"] == 5 and p["energy"] == 2
    assert [c["name"] for c in p["hand"]] == ["Strike", "Strike", "Defend", "Quick Jab"]
    assert [c["index"] for c in p["hand"]] == [0, 1, 2, 3]
    assert p["discard_pile_count"] == 1


def test_targeting_and_errors(server, client):
    fight(server, client, hand=["STRIKE", "CLEAVE", "DOUBT", "CRUSH", "CRUSH"])
    assert "requires a target" in refused(client, action="play_card", card_index=0)
    assert "Invalid target 'GNAT_9'" in refused(client, action="play_card", card_index=0,
                                                 target="GNAT_9")
    assert "Unplayable" in refused(client, action="play_card", card_index=2)
    assert "Invalid card index 7" in refused(client, action="play_card", card_index=7)
    state = ok(client, action="play_card", card_index=1)  # Cleave: no target needed
    hps = [e["hp"] for e in state["battle"]["enemies"]]
    assert all(h < m for h, m in zip(hps, [e["max_hp"] for e in state["battle"]["enemies"]]))
    state = ok(client, action="play_card", card_index=2, target="GNAT_0")  # Crush
    hand = state["player"]["hand"]
    assert [c["name"] for c in hand] == ["Strike", "Doubt", "Crush"]
    assert hand[2]["can_play"] is False and hand[2]["unplayable_reason"] == "Not enough energy"
    assert "Not enough energy" in refused(client, action="play_card", card_index=2,
                                           target="GNAT_0")


def test_enemy_ids_rederived_after_death(server, client):
    fight(server, client, hand=["STRIKE"] * 5)
    arrange(server, lambda g: setattr(g.run.combat.enemies[0], "hp", 3))
    state = ok(client, action="play_card", card_index=0, target="GNAT_0")
    enemies = state["battle"]["enemies"]
    assert [e["entity_id"] for e in enemies] == ["GNAT_0"]
    assert enemies[0]["combat_id"] == 2
    assert "Invalid target 'GNAT_1'" in refused(client, action="play_card", card_index=0,
                                                 target="GNAT_1")


def test_x_cost_spends_all_energy(server, client):
    state = fight(server, client, monsters=("SLIME",), hand=["CYCLONE", "STRIKE"])
    assert state["player"]["hand"][0]["cost"] == "X"
    hp = state["battle"]["enemies"][0]["hp"]
    state = ok(client, action="play_card", card_index=0)
    assert state["player"]["energy"] == 0
    assert state["battle"]["enemies"][0]["hp"] == hp - 15


def test_statuses_show_on_enemies_and_player(server, client):
    fight(server, client, monsters=("SLIME",), hand=["CRUSH", "FLEX", "SAP"])
    state = ok(client, action="play_card", card_index=1)
    assert state["player"]["status"][0]["id"] == "STRENGTH"
    state = ok(client, action="play_card", card_index=0, target="SLIME_0")
    status = state["battle"]["enemies"][0]["status"]
    assert status == [{"id": "VULNERABLE", "name": "Vulnerable", "amount": 2,
                       "type": "Debuff", "description": status[0]["description"]}]


def test_end_turn_enemy_acts_and_new_hand(server, client):
    state = fight(server, client, monsters=("GNAT",))
    hp = state["player"]["hp"]
    state = ok(client, action="end_turn")
    assert state["battle"]["round"] == 2 and state["player"]["energy"] == 3
    assert len(state["player"]["hand"]) == 5
    assert state["player"]["hp"] <= hp


def test_win_leads_to_rewards_then_card_reward(server, client):
    fight(server, client, monsters=("GNAT",), hand=["STRIKE"] * 5)
    arrange(server, lambda g: setattr(g.run.combat.enemies[0], "hp", 1))
    state = ok(client, action="play_card", card_index=0, target="GNAT_0")
    assert state["state_type"] == "rewards"
    assert "energy" not in state["player"]
    items = state["rewards"]["items"]
    assert items[0]["type"] == "gold" and "gold_amount" in items[0]
    assert all("gold_amount" not in i for i in items[1:])
    assert [i["index"] for i in items] == list(range(len(items)))
    gold = state["player"]["gold"]
    state = ok(client, action="claim_reward", index=0)
    assert state["player"]["gold"] == gold + items[0]["gold_amount"]
    card_item = next(i for i in state["rewards"]["items"] if i["type"] == "card")
    state = ok(client, action="claim_reward", index=card_item["index"])
    assert state["state_type"] == "menu" and state["menu_screen"] == "popup"
    state = ok(client, action="menu_select", option="ok")
    assert state["state_type"] == "card_reward"
    assert len(state["card_reward"]["cards"]) == 3
    assert "Invalid card index" in refused(client, action="select_card_reward", card_index=5)
    state = ok(client, action="skip_card_reward")
    assert state["state_type"] == "rewards"
    assert all(i["type"] != "card" for i in state["rewards"]["items"])
    assert "Not on the card reward" in refused(client, action="skip_card_reward")
    state = ok(client, action="proceed")
    assert state["state_type"] == "map"


def test_potions(server, client):
    state = fight(server, client, monsters=("GNAT",),
                  potions=["FIRE_POTION", "IRON_POTION", "INSIGHT_POTION"])
    pots = state["player"]["potions"]
    assert [p["slot"] for p in pots] == [0, 1, 2]
    assert set(pots[0]) == {"id", "name", "description", "slot", "can_use_in_combat",
                            "target_type", "keywords"}
    assert "requires a valid target" in refused(client, action="use_potion", slot=0)
    state = ok(client, action="use_potion", slot=1)
    assert state["player"]["block"] >= 12 and len(state["player"]["potions"]) == 2
    assert "No potion in slot 1" in refused(client, action="use_potion", slot=1)
    state = ok(client, action="use_potion", slot=2)
    assert state["state_type"] == "card_select"
    assert state["card_select"]["screen_type"] == "choose"
    hand = len(get(client)["player"]["hand"])
    state = ok(client, action="select_card", index=1)
    assert state["state_type"] == "monster" and len(state["player"]["hand"]) == hand + 1
    state = ok(client, action="discard_potion", slot=0)
    assert state["player"]["potions"] == []


def test_hand_select_upgrade_mode(server, client):
    fight(server, client, hand=["HONE", "STRIKE", "DEFEND"])
    state = ok(client, action="play_card", card_index=0)
    assert state["state_type"] == "hand_select"
    hs = state["hand_select"]
    assert hs["mode"] == "upgrade_select" and hs["can_confirm"] is False
    assert "finish the hand selection" in refused(client, action="end_turn")
    assert "more card" in refused(client, action="combat_confirm_selection")
    state = ok(client, action="combat_select_card", card_index=0)
    assert [c["name"] for c in state["hand_select"]["selected_cards"]] == ["Strike"]
    assert state["hand_select"]["can_confirm"] is True
    assert "Selection is full" in refused(client, action="combat_select_card", card_index=0)
    state = ok(client, action="combat_confirm_selection")
    assert state["state_type"] == "monster"
    assert state["player"]["hand"][0]["name"] == "Strike+"
    assert state["player"]["hand"][0]["is_upgraded"] is True


def test_hand_select_simple_mode_discards(server, client):
    fight(server, client, hand=["SIFT", "STRIKE", "DEFEND"])
    state = ok(client, action="play_card", card_index=0)
    assert state["hand_select"]["mode"] == "simple_select"
    n = len(state["hand_select"]["cards"])
    state = ok(client, action="combat_select_card", card_index=0)
    state = ok(client, action="combat_confirm_selection")
    assert len(state["player"]["hand"]) == n - 1
    assert "No hand selection" in refused(client, action="combat_select_card", card_index=0)


def test_defeat_shows_game_over(server, client):
    fight(server, client, monsters=("SENTINEL",), kind="elite")
    arrange(server, lambda g: setattr(g.run, "hp", 1))
    state = ok(client, action="end_turn")
    assert state["state_type"] == "game_over"
    assert state["game_over"]["outcome"] == "defeat"
    assert state["player"]["hp"] == 0
