"""Combat through HTTP, each rule beside the McpMod source function it follows:
fields (StateBuilder ``BuildPlayerState``, ``BuildCardState``, ``BuildPileCardList``,
``BuildEnemyState``, ``BuildPowersState``), ``play_card`` / ``end_turn`` (Actions
``ExecutePlayCard``, ``ExecuteEndTurn``), ``hand_select`` (``BuildHandSelectState``,
``ExecuteCombatSelectCard``, ``ExecuteCombatConfirmSelection``), the "combat ended" state
(``BuildGameState`` 500-514), potions (``ExecuteUsePotion``, ``ExecuteDiscardPotion``) and
parameter reads (``GetInt32`` / ``GetString`` -> HTTP 500 "Action failed: ...")."""

from __future__ import annotations

import random

import pytest

from actors.game.combat import Combat
from actors.game.knobs import Knobs
from actors.game.model import Card
from actors.game.screens.battle import CombatRoom

from .conftest import SP, arrange, get, http_client, new_run, ok, post, refused, wait_for

pytestmark = pytest.mark.timeout(30)

CARD_KEYS = ["id", "name", "type", "cost", "star_cost", "description", "rarity", "is_upgraded", "keywords", "index"]
COMBAT_KEYS = [
    "energy",
    "max_energy",
    "hand",
    "draw_pile_count",
    "discard_pile_count",
    "exhaust_pile_count",
    "draw_pile",
    "discard_pile",
    "exhaust_pile",
]
PLAYER_KEYS = ["character", "hp", "max_hp", "block", "gold", "status", "relics", "potions", "max_potion_slots"]


def fight(server, client, monsters=("GNAT", "GNAT"), hand=None, kind="monster", potions=None) -> dict:
    """Start a run, then put the player in a fight with a chosen hand (white-box)."""
    new_run(client)
    return enter_fight(server, client, monsters, hand, kind, potions)


def enter_fight(server, client, monsters=("GNAT", "GNAT"), hand=None, kind="monster", potions=None) -> dict:
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


def test_player_card_pile_enemy_fields(server, client):
    """BuildPlayerState (key order, combat block), BuildCardState, BuildPileCardList,
    BuildEnemyState, BuildPowersState."""
    state = fight(server, client, hand=["STRIKE", "CRUSH", "DOUBT"])
    assert state["state_type"] == "monster" and list(state)[-2:] == ["run", "player"]
    p = state["player"]
    assert list(p) == PLAYER_KEYS[:4] + COMBAT_KEYS + PLAYER_KEYS[4:]
    assert "orbs" not in p and "pets" not in p and "stars" not in p
    card = p["hand"][1]
    assert list(card) == CARD_KEYS + ["target_type", "can_play", "unplayable_reason"]
    assert card["cost"] == "2" and card["star_cost"] is None
    assert card["keywords"] == [{"name": "Vulnerable", "description": "Takes 50% more damage from attacks."}]
    assert card["can_play"] is True and card["unplayable_reason"] is None
    assert p["hand"][2]["unplayable_reason"] == "Unplayable"
    assert list(p["draw_pile"][0]) == ["name", "cost", "star_cost", "description"]
    assert p["relics"][0] == {
        "id": "EMBER_HEART",
        "name": "Ember Heart",
        "description": "At the end of combat, heal 6 HP.",
        "counter": None,
        "keywords": [{"name": "Heal", "description": "Restore HP."}],
    }
    battle = state["battle"]
    assert list(battle) == ["round", "turn", "is_play_phase", "enemies"]
    assert [e["entity_id"] for e in battle["enemies"]] == ["GNAT_0", "GNAT_1"]
    assert list(battle["enemies"][0]) == [
        "entity_id",
        "combat_id",
        "name",
        "hp",
        "max_hp",
        "block",
        "status",
        "intents",
    ]
    state = ok(client, action="play_card", card_index=1, target="GNAT_0")
    status = state["battle"]["enemies"][0]["status"]
    assert status == [
        {
            "id": "VULNERABLE",
            "name": "Vulnerable",
            "amount": 2,
            "type": "Debuff",
            "description": status[0]["description"],
            "keywords": [],
        }
    ]


def test_play_card_texts_and_order(server, client):
    """ExecutePlayCard: state checks, then 'card_index', range, CanPlay, target."""
    fight(server, client, hand=["STRIKE", "CLEAVE", "DOUBT", "CRUSH", "CRUSH"])
    assert refused(client, action="play_card") == "Missing 'card_index'"
    assert refused(client, action="play_card", card_index=7) == "card_index 7 out of range (hand has 5 cards)"
    assert refused(client, action="play_card", card_index=2) == "Card 'Doubt' cannot be played: Unplayable"
    assert (
        refused(client, action="play_card", card_index=0)
        == "Card requires a target. Provide 'target' with an entity_id."
    )
    assert (
        refused(client, action="play_card", card_index=0, target="GNAT_9")
        == "Target 'GNAT_9' not found among alive enemies"
    )
    assert (
        refused(client, action="play_card", card_index=0, target=None) == "Target '' not found among alive enemies"
    )  # GetString() of null ?? ""
    reply = post(client, action="play_card", card_index=0, target="2")  # a combat_id
    assert reply == {"status": "ok", "message": "Playing 'Strike' targeting Gnat"}
    state = get(client)
    assert state["battle"]["enemies"][1]["hp"] < state["battle"]["enemies"][1]["max_hp"]
    state = ok(client, action="play_card", card_index=2, target="GNAT_0")  # Crush: 2 energy
    assert state["player"]["hand"][2]["unplayable_reason"] == "EnergyCostTooHigh"
    assert (
        refused(client, action="play_card", card_index=2, target="GNAT_0")
        == "Card 'Crush' cannot be played: EnergyCostTooHigh"
    )


def test_wrong_json_types_are_http_500(server, client):
    """HandlePostAction: GetInt32/GetString throw -> 500 'Action failed: <message>'; the
    state check comes before the parameter read (ExecutePlayCard)."""
    new_run(client)
    reply = client.post(SP, json={"action": "play_card", "card_index": "0"})
    assert reply.status_code == 200 and reply.json()["error"] == "Not in combat"
    enter_fight(server, client, hand=["STRIKE"])
    cases = [
        ({"card_index": "0"}, "Number", "String"),
        ({"card_index": None}, "Number", "Null"),
        ({"card_index": True}, "Number", "True"),
        ({"card_index": [1]}, "Number", "Array"),
    ]
    for params, want, got in cases:
        reply = client.post(SP, json={"action": "play_card", **params})
        assert reply.status_code == 500, reply.text
        assert reply.json() == {
            "error": f"Action failed: The requested operation requires an "
            f"element of type '{want}', but the target element "
            f"has type '{got}'."
        }
    reply = client.post(SP, json={"action": "play_card", "card_index": 1.5})
    assert reply.json() == {"error": "Action failed: One of the identified items was in an invalid format."}
    reply = client.post(SP, json={"action": "play_card", "card_index": 0, "target": 3})
    assert "element of type 'String', but the target element has type 'Number'" in reply.json()["error"]


def test_end_turn_and_enemy_phase(make_server):
    """ExecuteEndTurn: 'Ending turn'; during the enemy turn 'Not in play phase ...'."""
    srv = make_server(1, Knobs(enemy_turn_reads=2))
    with http_client(srv.url) as client:
        fight(srv, client, monsters=("GNAT",))
        assert post(client, action="end_turn") == {"status": "ok", "message": "Ending turn"}
        state = get(client)
        assert state["battle"]["turn"] == "enemy" and state["battle"]["is_play_phase"] is False
        assert refused(client, action="end_turn") == "Not in play phase - cannot act during enemy turn"
        assert refused(client, action="play_card", card_index=0) == "Not in play phase - cannot act during enemy turn"
        arrange(srv, lambda g: g.run.potions.__setitem__(0, "HEALING_SALVE"))
        assert (
            refused(client, action="use_potion", slot=0) == "Player actions are currently disabled"
        )  # AnyTime: no play-phase check first
        state = wait_for(client, lambda s: s["battle"]["is_play_phase"])
        assert state["battle"]["round"] == 2 and len(state["player"]["hand"]) == 5


def test_combat_ended_state_then_rewards(server, client):
    """BuildGameState 500-514: monster|elite|boss, top-level message, no battle, player
    without combat fields - at least one read before the rewards."""
    fight(server, client, monsters=("GNAT",), hand=["STRIKE"] * 5, kind="elite")
    arrange(server, lambda g: setattr(g.run.combat.enemies[0], "hp", 1))
    state = ok(client, action="play_card", card_index=0, target="GNAT_0")
    assert list(state) == ["state_type", "message", "run", "player"]
    assert state["state_type"] == "elite"
    assert state["message"] == "Combat ended. Waiting for rewards..."
    assert list(state["player"]) == PLAYER_KEYS
    assert refused(client, action="end_turn") == "Not in combat"
    assert refused(client, action="proceed") == "No proceed button available or enabled"
    state = get(client)
    assert state["state_type"] == "rewards"


def test_hand_select_fields_and_actions(server, client):
    """BuildHandSelectState (selected_cards only once non-empty); ExecuteCombatSelectCard,
    ExecuteCombatConfirmSelection; play is disabled meanwhile."""
    fight(server, client, hand=["HONE", "STRIKE", "DEFEND"])
    state = ok(client, action="play_card", card_index=0)
    assert state["state_type"] == "hand_select" and "battle" in state
    hs = state["hand_select"]
    assert list(hs) == ["mode", "prompt", "cards", "can_confirm"]
    assert hs["mode"] == "upgrade_select" and list(hs["cards"][0]) == CARD_KEYS
    assert refused(client, action="end_turn") == "Player actions are currently disabled (turn may already be ending)"
    assert (
        refused(client, action="combat_confirm_selection") == "Confirm button is not enabled - select more cards first"
    )
    assert refused(client, action="combat_select_card") == "Missing 'card_index' (index of the card in hand)"
    assert (
        refused(client, action="combat_select_card", card_index=9) == "Card index 9 out of range (2 selectable cards)"
    )
    reply = post(client, action="combat_select_card", card_index=0)
    assert reply["message"] == "Selecting card from hand: Strike"
    state = get(client)
    assert state["hand_select"]["selected_cards"] == [{"index": 0, "name": "Strike"}]
    assert state["hand_select"]["can_confirm"] is True
    state = ok(client, action="combat_confirm_selection")
    assert state["state_type"] == "monster" and state["player"]["hand"][0]["name"] == "Strike+"
    assert refused(client, action="combat_select_card", card_index=0) == "No in-combat card selection is active"


def test_potions_in_combat(server, client):
    """ExecuteUsePotion: slot checks, target, messages; Insight opens choose."""
    state = fight(server, client, monsters=("SENTINEL",), potions=["FIRE_POTION", "IRON_POTION", "INSIGHT_POTION"])
    pots = state["player"]["potions"]
    assert list(pots[0]) == ["id", "name", "description", "slot", "can_use_in_combat", "target_type", "keywords"]
    assert refused(client, action="use_potion") == "Missing 'slot' (potion slot index)"
    assert refused(client, action="use_potion", slot=5) == "Potion slot 5 out of range (player has 3 slots)"
    assert (
        refused(client, action="use_potion", slot=0)
        == "Potion requires a target enemy. Provide 'target' with an entity_id."
    )
    assert post(client, action="use_potion", slot=1)["message"] == "Using potion 'Iron Potion' from slot 1 on self"
    state = get(client)
    assert state["player"]["block"] >= 12 and len(state["player"]["potions"]) == 2
    assert refused(client, action="use_potion", slot=1) == "No potion in slot 1"
    assert (
        post(client, action="use_potion", slot=0, target="SENTINEL_0")["message"]
        == "Using potion 'Fire Potion' from slot 0 targeting Sentinel Knight"
    )
    state = ok(client, action="use_potion", slot=2)
    assert state["card_select"]["screen_type"] == "choose"
    assert refused(client, action="play_card", card_index=0) == "Player actions are currently disabled"
    hand = len(state["player"]["hand"])
    state = ok(client, action="select_card", index=1)
    assert state["state_type"] == "monster" and len(state["player"]["hand"]) == hand + 1
    assert state["battle"]["enemies"][0]["hp"] == state["battle"]["enemies"][0]["max_hp"] - 20


def test_potion_usage_out_of_combat(server, client):
    """ExecuteUsePotion usage checks: CombatOnly refused out of combat, AnyTime usable,
    Automatic never; ExecuteDiscardPotion anywhere."""
    new_run(client)

    def belt(game):
        game.run.potions = ["FIRE_POTION", "HEALING_SALVE", "FAIRY_POTION"]
        game.run.hp = 20

    arrange(server, belt)
    state = get(client)
    assert [p["can_use_in_combat"] for p in state["player"]["potions"]] == [True, True, False]
    assert refused(client, action="use_potion", slot=0) == "Potion 'Fire Potion' can only be used in combat"
    assert (
        refused(client, action="use_potion", slot=2)
        == "Potion 'Fairy in a Bottle' is automatic and cannot be manually used"
    )
    state = ok(client, action="use_potion", slot=1)
    assert state["player"]["hp"] == 35 and len(state["player"]["potions"]) == 2
    assert post(client, action="discard_potion", slot=0) == {
        "status": "ok",
        "message": "Discarded potion 'Fire Potion' from slot 0",
    }
    assert [p["id"] for p in get(client)["player"]["potions"]] == ["FAIRY_POTION"]


def test_automatic_potion_saves_the_player(server, client):
    """PotionUsage.Automatic: the Fairy triggers by itself when the player would die."""
    fight(server, client, monsters=("SENTINEL",), kind="elite", potions=["FAIRY_POTION"])
    arrange(server, lambda g: setattr(g.run, "hp", 1))
    state = ok(client, action="end_turn")
    assert state["state_type"] == "elite" and state["player"]["hp"] > 1
    assert state["player"]["potions"] == []


def test_defeat_shows_game_over(server, client):
    fight(server, client, monsters=("SENTINEL",), kind="elite")
    arrange(server, lambda g: setattr(g.run, "hp", 1))
    state = ok(client, action="end_turn")
    assert state["state_type"] == "game_over" and state["player"]["hp"] == 0


def test_a_queued_action_whose_late_parameter_read_fails_is_dropped(make_server):
    """Parameters are read where the handler reads them (lazily): a queued play_card whose
    card now needs the (ill-typed) target is dropped when it comes due, not a 500 read."""
    srv = make_server(1)
    with http_client(srv.url) as client:
        fight(srv, client, monsters=("SENTINEL",), hand=["DEFEND", "STRIKE"])
        arrange(srv, lambda g: setattr(g, "knobs", Knobs(effect_delay_reads=1)))
        for _ in range(2):  # both validated against the same (stale) hand: a Defend first
            assert post(client, action="play_card", card_index=0, target=5)["status"] == "ok"
        get(client)
        state = get(client)
        assert [c["name"] for c in state["player"]["hand"]] == ["Strike"]
        assert srv.stats()["dropped_effects"] == 1


def test_a_potion_already_queued_is_refused(make_server):
    """ExecuteUsePotion checks ``potion.IsQueued`` right after "No potion in slot": a second
    use of a potion whose first use is accepted but not yet applied is refused (effect delay
    knob), and the potion is drunk once."""
    srv = make_server(1)
    with http_client(srv.url) as client:
        fight(srv, client, monsters=("SENTINEL",), potions=["IRON_POTION", "SPARK_POTION"])
        arrange(srv, lambda g: setattr(g, "knobs", Knobs(effect_delay_reads=1)))
        assert post(client, action="use_potion", slot=0)["status"] == "ok"
        assert refused(client, action="use_potion", slot=0) == "Potion 'Iron Potion' is already queued for use"
        assert post(client, action="use_potion", slot=1)["status"] == "ok", "another slot"
        get(client)
        state = get(client)
        assert state["player"]["potions"] == [] and state["player"]["block"] == 12
        assert srv.stats()["dropped_effects"] == 0
