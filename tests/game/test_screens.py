"""Non-combat screens through HTTP, each rule beside the McpMod source function it follows:
map, events, rest site, treasure, rewards, card_select (every screen type), bundle_select,
relic_select, proceed. Shops, the fake merchant and the crystal sphere: test_shops.py."""

from __future__ import annotations

import pytest

from actors.game.knobs import Knobs
from actors.game.mapgen import MapNode
from actors.game.runflow import enter_node
from actors.game.screens.events_content import extra_boons, pool_event, tide_warden
from actors.game.screens.rewards import Rewards
from actors.game.screens.rooms import build_room

from .conftest import arrange, get, http_client, new_run, ok, post, refused

pytestmark = pytest.mark.timeout(30)

CARD_KEYS = ["id", "name", "type", "cost", "star_cost", "description", "rarity", "is_upgraded", "keywords", "index"]


def room(server, client, kind: str, gold: int | None = None) -> dict:
    """A run standing in room ``kind`` (a map node type, or a "?" event id)."""
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


def to_map(server, client) -> dict:
    new_run(client)
    arrange(server, lambda g: setattr(g.run, "map_open", True))
    return get(client)


def test_map_before_and_after_the_first_node(server, client):
    """BuildMapState: no current_position before the first node; nodes start with the
    starting point; boss node/boss/bosses carry id and name; leads_to only when non-empty.
    ExecuteChooseMapNode: texts and order."""
    m = to_map(server, client)["map"]
    assert list(m) == ["visited", "next_options", "nodes", "boss", "bosses"]
    assert m["visited"] == [] and m["nodes"][0]["type"] == "Ancient"
    assert m["nodes"][0]["children"] == [[o["col"], o["row"]] for o in m["next_options"]]
    assert m["boss"] == {"col": 1, "row": 9, "id": "HOLLOW_KING", "name": "Hollow King"}
    assert m["bosses"] == [m["boss"]] and m["nodes"][-1] == {
        "col": 1,
        "row": 9,
        "type": "Boss",
        "children": [],
        "id": "HOLLOW_KING",
        "name": "Hollow King",
    }
    assert all(list(o) == ["index", "col", "row", "type", "leads_to"] for o in m["next_options"])
    assert refused(client, action="choose_map_node") == "Missing 'index' (map node index from next_options)"
    assert (
        refused(client, action="choose_map_node", index=9)
        == f"Map node index 9 out of range ({len(m['next_options'])} options available)"
    )
    first = m["next_options"][0]
    assert (
        post(client, action="choose_map_node", index=0)["message"]
        == f"Traveling to {first['type']} at ({first['col']},{first['row']})"
    )
    get(client)
    assert refused(client, action="choose_map_node", index=0) == "Map screen is not open"

    def last_row(game):
        run = game.run
        run.position = next(p for p in run.act_map.nodes if p[1] == 8)
        run.visited = [run.position]
        run.map_open = True

    arrange(server, last_row)
    m = get(client)["map"]
    assert m["current_position"]["row"] == 8 and m["visited"] == [m["current_position"]]
    assert m["next_options"] == [{"index": 0, "col": 1, "row": 9, "type": "Boss"}]


def test_ancient_event_dialogue_options_and_proceed(server, client):
    """BuildEventState (ancient, in_dialogue, options fields); ExecuteAdvanceDialogue and
    ExecuteChooseEventOption texts; ExecuteProceed has no event branch."""
    state = new_run(client)
    ev = state["event"]
    assert list(ev) == ["event_id", "event_name", "is_ancient", "in_dialogue", "body", "options"]
    assert ev["is_ancient"] and ev["in_dialogue"] and ev["options"] == []
    assert refused(client, action="choose_event_option", index=0) == "No event options available"
    state = ok(client, action="advance_dialogue")
    state = ok(client, action="advance_dialogue")
    assert state["event"]["in_dialogue"] is False
    assert refused(client, action="advance_dialogue") == "Dialogue hitbox not available - dialogue may have ended"
    assert refused(client, action="proceed") == "No proceed button available or enabled"
    options = state["event"]["options"]
    assert all(o["was_chosen"] is False and o["is_proceed"] is False for o in options)
    assert all(
        list(o)[:6] == ["index", "title", "description", "is_locked", "is_proceed", "was_chosen"]
        and list(o)[-1] == "keywords"
        for o in options
    )
    assert refused(client, action="choose_event_option") == "Missing 'index' (event option index)"
    assert refused(client, action="choose_event_option", index=3) == "Event option index 3 out of range (3 options)"


def test_event_option_with_a_relic_and_the_proceed_page(server, client):
    """BuildEventState: relic_name/relic_description on an option giving a relic; after a
    choice the body is the outcome and one Proceed option (is_proceed) opens the map."""
    state = room(server, client, "SHIFTING_ALTAR")
    assert state["event"]["is_ancient"] is False and state["event"]["in_dialogue"] is False
    assert state["event"]["options"][-1]["is_proceed"] is True
    assert refused(client, action="advance_dialogue") == "No ancient dialogue active"

    def keeper(game):
        run = game.run
        run.room = pool_event(game, "OLD_LIBRARY")
        room_ = run.room
        room_.options[1].relic = "TEA_FLASK"

    arrange(server, keeper)
    opt = get(client)["event"]["options"][1]
    assert opt["relic_name"] == "Tea Flask"
    assert opt["relic_description"] == "Upon pickup, raise your Max HP by 8."
    assert list(opt)[-3:] == ["relic_name", "relic_description", "keywords"]
    assert post(client, action="choose_event_option", index=1)["message"] == "Choosing event option: Nap"
    ev = get(client)["event"]
    assert ev["body"] == "You heal 10 HP."
    assert [(o["title"], o["is_proceed"]) for o in ev["options"]] == [("Proceed", True)]
    assert ok(client, action="choose_event_option", index=0)["state_type"] == "map"


def test_rest_site_is_enabled_can_proceed_and_smith_cancel(server, client):
    """BuildRestSiteState: is_enabled per option, can_proceed false until one is used.
    ExecuteChooseRestOption: index read first, texts. Smith's upgrade select can be
    cancelled back to the rest site with its options still enabled."""
    state = room(server, client, "RestSite")
    rest = state["rest_site"]
    assert rest == {
        "options": [
            {"index": 0, "id": "HEAL", "name": "Rest", "description": "Heal 30% of your max HP.", "is_enabled": True},
            {
                "index": 1,
                "id": "SMITH",
                "name": "Smith",
                "description": "Upgrade a card in your deck.",
                "is_enabled": True,
            },
        ],
        "can_proceed": False,
    }
    assert refused(client, action="proceed") == "No proceed button available or enabled"
    assert refused(client, action="choose_rest_option") == "Missing 'index' (rest site option index)"
    assert refused(client, action="choose_rest_option", index=2) == "Rest option index 2 out of range (2 options)"
    assert post(client, action="choose_rest_option", index=1)["message"] == "Selecting rest site option: Smith"
    cs = get(client)["card_select"]
    assert cs["screen_type"] == "upgrade" and cs["can_cancel"] is True
    state = ok(client, action="cancel_selection")
    assert state["state_type"] == "rest_site"
    assert [o["is_enabled"] for o in state["rest_site"]["options"]] == [True, True]
    ok(client, action="choose_rest_option", index=1)
    ok(client, action="select_card", index=0)
    state = ok(client, action="confirm_selection")
    assert state["rest_site"]["can_proceed"] is True
    assert [o["is_enabled"] for o in state["rest_site"]["options"]] == [False, False]
    assert refused(client, action="choose_rest_option", index=0) == "Rest option 0 (HEAL) is disabled"
    assert server.stats()["duplicate_guarded_actions"] == 1
    assert post(client, action="proceed")["message"] == "Proceeding from rest site"
    assert get(client)["state_type"] == "map"
    assert post(client, action="proceed")["status"] == "ok"  # the button stays enabled
    assert get(client)["state_type"] == "map"


def test_rest_heals_thirty_percent(server, client):
    new_run(client)
    arrange(server, lambda g: (setattr(g.run, "hp", 10), build_room(g, "RestSite")))
    state = ok(client, action="choose_rest_option", index=0)
    assert state["player"]["hp"] == 10 + state["player"]["max_hp"] * 3 // 10


def test_treasure_loading_opening_relics_claimed(server, client):
    """BuildTreasureState: loading, then "Opening chest..." only, then relics and
    can_proceed (false until taken), then {can_proceed} only. ExecuteClaimTreasureRelic."""
    state = room(server, client, "Treasure")
    assert state["treasure"] == {"message": "Treasure room loading..."}
    assert refused(client, action="claim_treasure_relic", index=0) == "Treasure room is not open"
    assert get(client)["treasure"] == {"message": "Opening chest..."}
    assert (
        refused(client, action="claim_treasure_relic", index=0)
        == "Relic collection is not visible - chest may not be opened yet"
    )
    t = get(client)["treasure"]
    assert list(t) == ["relics", "can_proceed"] and t["can_proceed"] is False
    assert list(t["relics"][0]) == ["index", "id", "name", "description", "rarity", "keywords"]
    assert refused(client, action="proceed") == "No proceed button available or enabled"
    assert refused(client, action="claim_treasure_relic") == "Missing 'index' (relic index)"
    assert refused(client, action="claim_treasure_relic", index=1) == "Relic index 1 out of range (1 relics available)"
    n = len(get(client)["player"]["relics"])
    assert (
        post(client, action="claim_treasure_relic", index=0)["message"]
        == f"Claiming treasure relic: {t['relics'][0]['name']}"
    )
    state = get(client)
    assert state["treasure"] == {"can_proceed": True} and len(state["player"]["relics"]) == n + 1
    assert (
        refused(client, action="claim_treasure_relic", index=0)
        == "Relic collection is not visible - chest may not be opened yet"
    )
    assert post(client, action="proceed")["message"] == "Proceeding from treasure room"
    assert get(client)["state_type"] == "map"


def test_rewards_items_and_a_full_belt(server, client):
    """BuildRewardsState: gold_amount on gold, potion_id/name/description on potions.
    ExecuteClaimReward: texts; a potion with a full belt is ok and changes nothing."""
    new_run(client)

    def rewards(game):
        game.run.potions = ["FIRE_POTION"] * 3
        game.push_overlay(
            Rewards(
                [
                    {"type": "gold", "gold": 17},
                    {"type": "potion", "potion": "IRON_POTION"},
                    {"type": "relic", "relic": "TEA_FLASK"},
                    {"type": "card", "cards": ["JAB", "SAP", "FLEX"]},
                ]
            )
        )

    arrange(server, rewards)
    items = get(client)["rewards"]["items"]
    assert items == [
        {"index": 0, "type": "gold", "description": "17 Gold", "gold_amount": 17},
        {
            "index": 1,
            "type": "potion",
            "description": "Iron Potion",
            "potion_id": "IRON_POTION",
            "potion_name": "Iron Potion",
            "potion_description": "Gain 12 Block.",
        },
        {"index": 2, "type": "relic", "description": "Tea Flask"},
        {"index": 3, "type": "card", "description": "Add a card to your deck."},
    ]
    assert refused(client, action="claim_reward") == "Missing 'index' (reward index)"
    assert (
        refused(client, action="claim_reward", index=4)
        == "Reward index 4 out of range (screen has 4 claimable rewards)"
    )
    assert post(client, action="claim_reward", index=1)["message"] == "Claiming reward: potion (Iron Potion)"
    state = get(client)
    assert len(state["rewards"]["items"]) == 4 and len(state["player"]["potions"]) == 3
    assert post(client, action="claim_reward", index=0)["message"] == "Claiming reward: gold (17)"
    assert post(client, action="claim_reward", index=2)["message"] == "Claiming reward: card (opens card selection)"
    state = wait_card_reward(client)
    cards = state["card_reward"]
    assert list(cards) == ["cards", "can_skip"] and list(cards["cards"][0]) == CARD_KEYS
    assert refused(client, action="select_card_reward") == "Missing 'card_index'"
    assert (
        refused(client, action="select_card_reward", card_index=3) == "Card index 3 out of range (screen has 3 cards)"
    )
    assert post(client, action="select_card_reward", card_index=1)["message"] == "Selecting card: Sap"
    state = get(client)
    assert [i["type"] for i in state["rewards"]["items"]] == ["potion", "relic"]
    assert refused(client, action="skip_card_reward") == "Card reward selection screen is not open"
    assert post(client, action="proceed")["message"] == "Proceeding from rewards"
    assert get(client)["state_type"] == "map"
    assert refused(client, action="claim_reward", index=0) == "Rewards screen is not open"


def wait_card_reward(client) -> dict:
    state = get(client)
    while state["state_type"] == "menu":  # a first-time popup may come first
        state = ok(client, action="menu_select", option=next(o["name"] for o in state["options"] if o["enabled"]))
    assert state["state_type"] == "card_reward"
    return state


def test_card_select_grid_preview_toggle_and_texts(server, client):
    """BuildCardSelectState / ExecuteSelectCard / ExecuteConfirmSelection /
    ExecuteCancelSelection on a previewed grid (transform)."""
    room(server, client, "SHIFTING_ALTAR")
    assert refused(client, action="select_card", index=0) == "No card selection screen is open"
    assert refused(client, action="select_card") == "Missing 'index' (card index in the grid)"
    cs = ok(client, action="choose_event_option", index=0)["card_select"]
    assert list(cs) == ["screen_type", "prompt", "cards", "preview_showing", "can_cancel", "can_confirm"]
    assert cs["screen_type"] == "transform" and cs["can_confirm"] is False
    assert (
        refused(client, action="confirm_selection")
        == "No confirm button is currently enabled - select more cards first"
    )
    assert (
        refused(client, action="select_card", index=99)
        == f"Card index 99 out of range ({len(cs['cards'])} cards available)"
    )
    assert post(client, action="select_card", index=0)["message"].startswith("Toggling card selection: ")
    cs = get(client)["card_select"]
    assert cs["preview_showing"] is True and cs["can_confirm"] is True
    assert post(client, action="cancel_selection")["message"] == "Cancelling preview - returning to card selection"
    cs = get(client)["card_select"]
    assert cs["preview_showing"] is False and cs["can_confirm"] is False
    ok(client, action="select_card", index=1)
    assert post(client, action="confirm_selection")["message"] == "Confirming selection from preview"
    assert get(client)["state_type"] == "event"


def test_simple_select_toggles_and_closes(server, client):
    """simple_select: the main confirm enables from one pick; a second click deselects
    (a counted duplicate); the close button ("Closing card selection screen")."""
    room(server, client, "WISHING_WELL")
    cs = ok(client, action="choose_event_option", index=0)["card_select"]
    assert cs["screen_type"] == "simple_select" and cs["can_cancel"] is True
    assert ok(client, action="select_card", index=0)["card_select"]["can_confirm"] is True
    assert ok(client, action="select_card", index=0)["card_select"]["can_confirm"] is False
    assert server.stats()["duplicate_guarded_actions"] == 1
    assert post(client, action="cancel_selection")["message"] == "Closing card selection screen"
    assert get(client)["state_type"] == "event"


def test_choose_card_screen(server, client):
    """BuildChooseCardState: fixed prompt, can_skip, can_cancel = can_skip; picking is
    immediate; confirm is refused with the source's text; cancel skips."""
    room(server, client, "OLD_LIBRARY")
    cs = ok(client, action="choose_event_option", index=0)["card_select"]
    assert cs == {
        **cs,
        "screen_type": "choose",
        "prompt": "Choose a card.",
        "can_skip": True,
        "preview_showing": False,
        "can_confirm": False,
        "can_cancel": True,
    }
    assert list(cs) == ["screen_type", "prompt", "cards", "can_skip", "preview_showing", "can_confirm", "can_cancel"]
    assert refused(client, action="confirm_selection") == (
        "Choose-a-card screen requires no confirmation - use select_card(index) to pick directly"
    )
    size = arrange(server, lambda g: len(g.run.deck))
    assert post(client, action="select_card", index=2)["message"].startswith("Choosing card: ")
    assert get(client)["state_type"] == "event"
    assert arrange(server, lambda g: len(g.run.deck)) == size + 1


def test_bundle_select(server, client):
    """BuildBundleSelectState (screen_type bundle, card_count, preview_cards);
    ExecuteSelectBundle / ...Confirm... / ...Cancel... texts."""
    new_run(client)
    arrange(server, lambda g: extra_boons()[0].apply(g, g.run.room))
    bs = get(client)["bundle_select"]
    assert list(bs) == [
        "screen_type",
        "prompt",
        "bundles",
        "preview_showing",
        "preview_cards",
        "can_cancel",
        "can_confirm",
    ]
    assert bs["screen_type"] == "bundle" and bs["prompt"] == "Choose a bundle."
    assert bs["bundles"][0]["card_count"] == 3 and bs["preview_cards"] == []
    assert refused(client, action="confirm_bundle_selection") == "Bundle confirm button is not enabled"
    assert refused(client, action="cancel_bundle_selection") == "Bundle cancel button is not enabled"
    assert refused(client, action="select_bundle", index=2) == "Bundle index 2 out of range (2 bundles available)"
    bs = ok(client, action="select_bundle", index=1)["bundle_select"]
    assert bs["preview_showing"] and bs["preview_cards"] == bs["bundles"][1]["cards"]
    assert (
        refused(client, action="select_bundle", index=0)
        == "A bundle preview is already open - confirm or cancel it first"
    )
    assert ok(client, action="cancel_bundle_selection")["bundle_select"]["preview_showing"] is False
    ok(client, action="select_bundle", index=1)
    size = arrange(server, lambda g: len(g.run.deck))
    state = ok(client, action="confirm_bundle_selection")
    assert state["state_type"] == "event" and arrange(server, lambda g: len(g.run.deck)) == size + 3
    assert refused(client, action="select_bundle", index=0) == "No bundle selection screen is open"


def test_relic_select(server, client):
    """BuildRelicSelectState; ExecuteSelectRelic / ExecuteSkipRelicSelection."""
    new_run(client)
    arrange(server, lambda g: extra_boons()[1].apply(g, g.run.room))
    rs = get(client)["relic_select"]
    assert list(rs) == ["prompt", "relics", "can_skip"] and rs["prompt"] == "Choose a relic."
    assert list(rs["relics"][0]) == ["index", "id", "name", "description", "rarity", "keywords"]
    assert refused(client, action="select_relic", index=3) == "Relic index 3 out of range (3 relics available)"
    n = len(get(client)["player"]["relics"])
    assert post(client, action="select_relic", index=1)["message"] == f"Selecting relic: {rs['relics'][1]['name']}"
    assert len(get(client)["player"]["relics"]) == n + 1
    arrange(server, lambda g: extra_boons()[1].apply(g, g.run.room))
    assert post(client, action="skip_relic_selection")["message"] == "Skipping relic selection"
    assert refused(client, action="skip_relic_selection") == "No relic selection screen is open"


def test_empty_room_is_unknown_and_passes_by_itself(server, client):
    """BuildGameState's last branch: a room class the mod does not know is ``unknown`` with
    its class name; ExecuteProceed has no branch for it."""
    state = room(server, client, "Empty")
    assert list(state) == ["state_type", "room_type", "run", "player"]
    assert state["state_type"] == "unknown" and state["room_type"] == "EmptyRoom"
    assert refused(client, action="proceed") == "No proceed button available or enabled"
    assert get(client)["state_type"] == "unknown"
    assert get(client)["state_type"] == "map"


@pytest.mark.parametrize("kind, then", [("RestSite", "rest_site"), ("Monster", "monster")])
def test_between_rooms_no_room_answers(make_server, kind, then):
    """BuildGameState with CurrentRoom null (knob waiting_reads): ``unknown``, the player
    without combat fields, and the room's actions refused as with no room node."""
    srv = make_server(1, Knobs(waiting_reads=2))
    with http_client(srv.url) as client:
        new_run(client)
        node = arrange(srv, lambda g: next(n for n in g.run.act_map.nodes.values() if n.row == 1))
        node = MapNode(node.col, node.row, kind)
        arrange(srv, lambda g: enter_node(g, node))
        state = get(client)  # the first of two transient reads
        assert state["state_type"] == "unknown" and "energy" not in state["player"]
        assert refused(client, action="choose_rest_option", index=0) == "Rest site room is not open"
        assert refused(client, action="end_turn") == "Not in combat"
        assert get(client)["state_type"] == "unknown"
        assert get(client)["state_type"] == then


def test_event_with_two_picks_marks_was_chosen(server, client):
    """BuildEventState ``was_chosen``: the act-2 ancient grants two boons; the first pick
    stays listed, chosen and locked, until the second turns the page."""
    new_run(client)

    def act_two(game):
        game.run.act = 2
        game.run.room = tide_warden(game)
        game.run.room.dialogue_pos = 1

    arrange(server, act_two)
    ev = get(client)["event"]
    assert ev["event_id"] == "TIDE_WARDEN" and ev["is_ancient"] and not ev["in_dialogue"]
    ev = ok(client, action="choose_event_option", index=2)["event"]
    assert [(o["was_chosen"], o["is_locked"]) for o in ev["options"]] == [(False, False), (False, False), (True, True)]
    assert ev["body"] == "You gain 50 gold."
    assert refused(client, action="choose_event_option", index=2) == "Event option 2 is locked"
    ev = ok(client, action="choose_event_option", index=0)["event"]
    assert [o["title"] for o in ev["options"]] == ["Proceed"]
