"""Menus, character select, popups, the opening event and game over → main menu."""

from __future__ import annotations

import pytest

from .conftest import arrange, get, ok, refused

pytestmark = pytest.mark.timeout(30)


def test_main_menu_has_string_options(client):
    state = get(client)
    assert state["state_type"] == "menu" and state["menu_screen"] == "main"
    menu = state["menu"]
    assert menu["options"] == ["singleplayer"]
    assert all(isinstance(o, str) for o in menu["options"] + menu["blocked_options"])
    assert "run" not in state and "player" not in state
    assert refused(client, action="menu_select", option="multiplayer") == \
        "Option 'multiplayer' is blocked"
    assert "Invalid option" in refused(client, action="menu_select", option="quit")


def test_singleplayer_submenu_lists_name_enabled(client):
    menu = ok(client, action="menu_select", option="singleplayer")["menu"]
    assert menu["menu_screen"] == "singleplayer"
    assert {"name": "standard", "enabled": True} in menu["options"]
    assert "not available" in refused(client, action="menu_select", option="daily")
    assert ok(client, action="menu_select", option="back")["menu"]["menu_screen"] == "main"


def test_character_select_embark_disabled_until_pick(client):
    ok(client, action="menu_select", option="singleplayer")
    state = ok(client, action="menu_select", option="standard")
    assert state["menu_screen"] == "character_select"
    menu = state["menu"]
    chars = {c["id"]: c for c in menu["characters"]}
    assert set(chars["ironbound"]) == {"name", "id", "locked", "hp", "gold", "energy",
                                       "starting_relics", "starting_deck"}
    assert chars["hollow"]["locked"] is True
    assert {"name": "embark", "enabled": False} in menu["options"]
    assert "pick a character" in refused(client, action="menu_select", option="embark")
    assert "locked" in refused(client, action="menu_select", option="hollow")
    menu = ok(client, action="menu_select", option="The Ironbound")["menu"]
    assert "selected_character" not in menu  # the real mod does not expose the pick
    assert {"name": "embark", "enabled": True} in menu["options"]


def test_embark_shows_tutorial_prompt_then_opening_event(client):
    for option in ("singleplayer", "standard", "wanderer"):
        ok(client, action="menu_select", option=option)
    state = ok(client, action="menu_select", option="embark", seed=7)
    assert state["state_type"] == "menu" and state["menu_screen"] == "tutorial_prompt"
    assert state["menu"]["options"] == ["yes", "no"]
    assert "popup" in refused(client, action="end_turn")
    state = ok(client, action="menu_select", option="yes")
    assert state["menu_screen"] == "tutorial"
    state = ok(client, action="menu_select", option="continue")
    assert state["state_type"] == "event"
    assert state["player"]["character"] == "The Wanderer"
    assert state["run"] == {"act": 1, "floor": 0, "ascension": 0}
    assert "energy" not in state["player"] and "hand" not in state["player"]
    event = state["event"]
    assert event["in_dialogue"] is True and event["options"] == []
    assert "advance_dialogue" in refused(client, action="choose_event_option", index=0)
    assert "Cannot proceed" in refused(client, action="proceed")
    while state["event"]["in_dialogue"]:
        state = ok(client, action="advance_dialogue")
    assert "No dialogue" in refused(client, action="advance_dialogue")
    options = state["event"]["options"]
    assert len(options) == 3
    assert set(options[0]) == {"index", "title", "description", "is_locked", "is_proceed"}


def test_opening_event_then_map(client):
    from .conftest import new_run
    state = new_run(client)
    while state["event"]["in_dialogue"]:
        state = ok(client, action="advance_dialogue")
    simple = [o for o in state["event"]["options"]
              if o["title"] in ("Gift of Coin", "Vigor", "Trinket")]
    assert simple, state["event"]["options"]
    state = ok(client, action="choose_event_option", index=simple[0]["index"])
    assert state["event"]["options"][0]["is_proceed"] is True
    state = ok(client, action="choose_event_option", index=0)
    assert state["state_type"] == "map"
    m = state["map"]
    assert m["current_position"] is None and m["visited"] == []
    assert [o["index"] for o in m["next_options"]] == list(range(len(m["next_options"])))
    for opt in m["next_options"]:
        assert opt["row"] == 0 and opt["leads_to"]
        assert set(opt["leads_to"][0]) == {"col", "row", "type"}
    assert m["boss"]["type"] == "Boss"
    assert all(isinstance(ch, list) and len(ch) == 2 for n in m["nodes"] for ch in n["children"])
    assert "Invalid map node index" in refused(client, action="choose_map_node", index=99)


def test_game_over_defeat_back_to_main_menu(server, client):
    from .conftest import new_run
    new_run(client)

    def lose(game):
        from actors.game.screens.gameover import finish_run
        finish_run(game, False)
    arrange(server, lose)
    state = get(client)
    assert state["state_type"] == "game_over"
    assert state["game_over"]["victory"] is False and state["game_over"]["outcome"] == "defeat"
    assert "Invalid option" in refused(client, action="menu_select", option="embark")
    assert refused(client, action="proceed").startswith("Cannot proceed")
    state = ok(client, action="menu_select", option="main_menu")
    assert state["state_type"] == "menu" and state["menu_screen"] == "main"
    assert client.get("/api/v1/compendium").json()["current_run"] is None


def test_menu_select_mid_run_is_refused(client):
    from .conftest import new_run
    new_run(client)
    assert "only available" in refused(client, action="menu_select", option="singleplayer")
