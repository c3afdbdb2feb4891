"""Menus, character select, timeline, unmodelled screens, game over → main menu.

Each test names the mod function it checks (Gennadiyev/STS2MCP @ 2fb5390):
SB = McpMod.StateBuilder.cs, A = McpMod.Actions.cs.
"""

from __future__ import annotations

import pytest

from actors.game.knobs import Knobs
from actors.game.screens.gameover import finish_run

from .conftest import arrange, get, http_client, new_run, ok, post, refused

pytestmark = pytest.mark.timeout(30)

MAIN = ["singleplayer", "multiplayer", "compendium", "timeline", "settings", "quit"]


def test_main_menu_at_top_level(client):
    # SB BuildGameState, main-menu branch: fields at the top level, string options,
    # no blocked_options while nothing is blocked, no run/player
    state = get(client)
    assert state == {"state_type": "menu", "menu_screen": "main", "message": "Main menu.", "options": MAIN}


def test_main_menu_errors(client):
    # A ExecuteMenuSelect: empty option, unknown option, a button not shown
    assert refused(client, action="menu_select", option="  ") == "Missing menu option"
    assert refused(client, action="menu_select") == "Missing menu option"
    assert refused(client, action="menu_select", option="dance") == "Unknown menu option: dance"
    assert refused(client, action="menu_select", option="continue") == "Option 'continue' is not available"
    reply = post(client, action="menu_select", option=" Singleplayer ")  # trimmed, any case
    assert reply == {"status": "ok", "message": "Selected Singleplayer"}


def test_singleplayer_submenu(client):
    # SB BuildGameState singleplayer branch; A ExecuteMenuSelect singleplayer submenu
    state = ok(client, action="menu_select", option="singleplayer")
    assert state == {
        "state_type": "menu",
        "menu_screen": "singleplayer",
        "message": "Select game mode.",
        "options": [
            {"name": "standard", "enabled": True},
            {"name": "daily", "enabled": False},
            {"name": "custom", "enabled": False},
            {"name": "back", "enabled": True},
        ],
    }
    assert refused(client, action="menu_select", option="daily") == "Option 'daily' is not available (locked)"
    assert (
        refused(client, action="menu_select", option="ranked")
        == "Unknown singleplayer option: ranked. Use: standard, daily, custom, back"
    )
    assert post(client, action="menu_select", option="back")["message"] == "Going back"
    assert get(client)["menu_screen"] == "main"


def test_character_select_state(client):
    # SB AddCharacterSelectMenuState
    ok(client, action="menu_select", option="singleplayer")
    state = ok(client, action="menu_select", option="standard")
    assert list(state) == ["state_type", "menu_screen", "message", "characters", "options"]
    assert state["message"] == "Select a character."
    chars = {c["id"]: c for c in state["characters"]}
    assert list(chars["IRONBOUND"]) == [
        "name",
        "id",
        "locked",
        "hp",
        "gold",
        "energy",
        "description",
        "starting_relics",
        "starting_deck",
        "total_cards",
        "total_relics",
        "total_potions",
    ]
    assert chars["IRONBOUND"]["starting_relics"] == [
        {"name": "Ember Heart", "description": "At the end of combat, heal 6 HP."}
    ]
    assert chars["HOLLOW"]["locked"] is True and chars["HOLLOW"]["description"] is None
    assert state["options"] == [
        {"name": "IRONBOUND", "enabled": True},
        {"name": "WANDERER", "enabled": True},
        {"name": "HOLLOW", "enabled": False},
        {"name": "confirm", "enabled": False},
        {"name": "embark", "enabled": False},
        {"name": "back", "enabled": True},
    ]


def test_character_select_answers(client):
    # A ExecuteCharacterSelectMenuOption: its order and texts
    ok(client, action="menu_select", option="singleplayer")
    ok(client, action="menu_select", option="standard")
    assert (
        refused(client, action="menu_select", option="embark")
        == "Embark button not available — select a character first"
    )
    assert refused(client, action="menu_select", option="hollow") == "Character 'hollow' is locked"
    assert (
        refused(client, action="menu_select", option="zed")
        == "Character 'zed' not found. Available: IRONBOUND, WANDERER"
    )
    assert (
        refused(client, action="menu_select", option="unready")
        == "Unready button not available — you have not confirmed yet"
    )
    reply = post(client, action="menu_select", option="the ironbound")  # by title
    assert reply["message"] == "Selected The Ironbound. Use 'confirm' to embark."
    state = get(client)
    assert {"name": "embark", "enabled": True} in state["options"]
    assert "selected_character" not in state  # the mod does not expose the pick
    # a seeded embark is refused before the embark button is looked at
    seeded = post(client, action="menu_select", option="embark", seed="ABC")
    assert seeded == {
        "status": "error",
        "error": (
            "Seeded embark is not supported for standard singleplayer from this API. "
            "Seed was not applied and the run was not started."
        ),
    }
    assert get(client)["menu_screen"] == "character_select"
    assert post(client, action="menu_select", option="confirm", seed="") == {
        "status": "ok",
        "message": "Embarking on run",
    }  # an empty seed is no seed
    assert get(client)["menu_screen"] == "tutorial_prompt"


def test_back_from_character_select(client):
    # A ExecuteCharacterSelectMenuOption "back" → the singleplayer submenu
    ok(client, action="menu_select", option="singleplayer")
    ok(client, action="menu_select", option="standard")
    assert post(client, action="menu_select", option="back")["message"] == "Going back"
    assert get(client)["menu_screen"] == "singleplayer"


def test_multiplayer_submenu_not_modelled(client):
    # SB BuildGameState multiplayer branch; A ExecuteMenuSelect multiplayer submenu
    state = ok(client, action="menu_select", option="multiplayer")
    assert state["message"] == "Multiplayer menu."
    assert state["options"] == [
        {"name": "host", "enabled": False},
        {"name": "join", "enabled": False},
        {"name": "back", "enabled": True},
    ]
    assert refused(client, action="menu_select", option="host") == "Option 'host' is not available"
    assert refused(client, action="menu_select", option="load") == "Option 'load' is not available"
    assert (
        refused(client, action="menu_select", option="x")
        == "Unknown multiplayer option: x. Use: host, join, load, abandon, back"
    )
    assert ok(client, action="menu_select", option="back")["menu_screen"] == "main"


@pytest.mark.parametrize("button,message", [("compendium", "Compendium screen."), ("settings", "Settings screen.")])
def test_compendium_and_settings_are_dead_ends(client, button, message):
    # SB BuildGameState: no options; A ExecuteMenuSelect falls through to the main-menu
    # buttons, hidden behind the submenu; /__gamerig/manual is the person at the keyboard
    state = ok(client, action="menu_select", option=button)
    assert state == {"state_type": "menu", "menu_screen": button, "message": message}
    assert refused(client, action="menu_select", option="back") == "Unknown menu option: back"
    assert refused(client, action="menu_select", option="singleplayer") == "Option 'singleplayer' is not available"
    reply = client.post("/__gamerig/manual")
    assert reply.json() == {"status": "ok", "message": f"Closed {button}"}
    assert get(client)["menu_screen"] == "main"
    assert client.post("/__gamerig/manual").json()["status"] == "error"


def test_timeline(client):
    # SB BuildGameState timeline branch; A ExecuteMenuSelect timeline
    state = ok(client, action="menu_select", option="timeline")
    assert state["options"] == [{"name": "advance", "enabled": True}, {"name": "back", "enabled": True}]
    assert state["total_slots"] == len(state["epochs"]) == 5
    assert state["revealed_count"] == state["completed_count"] == 2
    assert state["locked_count"] == 3 and state["obtained_unrevealed_count"] == 0
    assert state["epochs"][1] == {
        "id": "TheIronbound1",
        "name": "The Ironbound",
        "state": "Revealed",
        "obtained": state["epochs"][1]["obtained"],
    }
    assert post(client, action="menu_select", option="advance") == {
        "status": "ok",
        "message": "No more epochs to advance",
        "done": True,
    }
    assert refused(client, action="menu_select", option="x") == "Unknown timeline option: x. Use: advance, back"
    assert post(client, action="menu_select", option="back")["message"] == "Going back from timeline"
    assert get(client)["menu_screen"] == "main"


def test_pending_epochs_block_the_timeline(make_server):
    # SB BuildGameState blocked_options; A ExecuteMenuSelect TimelineUnlocksNeedManualReveal
    srv = make_server(1, Knobs(pending_epochs=1))
    with http_client(srv.url) as c:
        state = get(c)
        assert "timeline" not in state["options"]
        assert state["blocked_options"] == [
            {
                "name": "timeline",
                "enabled": False,
                "reason": "manual_epoch_reveal_required",
                "pending_epoch_ids": ["TheWanderer1"],
            }
        ]
        reply = post(c, action="menu_select", option="timeline")
        assert reply["status"] == "error" and reply["manual_action_required"] is True
        assert reply["pending_epoch_ids"] == ["TheWanderer1"]
        assert reply["error"].startswith("Timeline has obtained epochs that still need")


def test_quit_closes_the_game(make_server):
    # A ExecuteMenuSelect "quit" clicks the quit button: the game (our server) goes away
    srv = make_server(1)
    with http_client(srv.url) as c:
        assert post(c, action="menu_select", option="quit")["message"] == "Selected quit"
        get(c)  # the effect applies at the next request; the server then stops
    assert srv.quit_event.wait(5)
    srv.thread.join(5)
    assert not srv.thread.is_alive()


def test_game_over_back_to_main_menu(server, client):
    # SB BuildGameState NGameOverScreen branch; A ExecuteMenuSelect game-over handling
    new_run(client)
    arrange(server, lambda game: finish_run(game, False))
    state = get(client)
    assert state["state_type"] == "game_over"
    assert state["game_over"] == {"message": "Run ended.", "options": ["main_menu"]}
    assert list(state) == ["state_type", "game_over", "run", "player"]
    assert (
        refused(client, action="menu_select", option="continue")
        == "Game-over option 'continue' is not actionable. Use: main_menu"
    )
    assert refused(client, action="menu_select", option="embark") == "Unknown game over option: embark. Use: main_menu"
    assert post(client, action="menu_select", option="MAIN_MENU")["message"] == "Returning to main menu"
    assert get(client) == {"state_type": "menu", "menu_screen": "main", "message": "Main menu.", "options": MAIN}
    assert client.get("/api/v1/compendium").json()["current_run"] is None


def test_menu_select_mid_run_is_refused(client):
    # A ExecuteMenuSelect: in a run with nothing menu-like shown
    new_run(client)
    assert refused(client, action="menu_select", option="singleplayer") == "Not on a menu screen"


def test_profile_select(client):
    # P ExecuteProfileAction (switch opens the profile screen first); SB BuildGameState
    # profile_select branch; A ExecuteProfileSelectMenuOption
    def switch(pid):
        return client.post("/api/v1/profiles", json={"action": "switch", "profile_id": pid})

    assert switch(2).json() == {
        "status": "ok",
        "message": "Opened profile screen. Send switch again to select profile.",
    }
    state = get(client)
    assert state == {
        "state_type": "menu",
        "menu_screen": "profile_select",
        "message": "Profile select screen.",
        "current_profile_id": 1,
        "options": [
            {"name": "profile_1", "enabled": True},
            {"name": "profile_2", "enabled": True},
            {"name": "profile_3", "enabled": True},
            {"name": "back", "enabled": True},
        ],
    }
    assert (
        refused(client, action="menu_select", option="p2")
        == "Unknown profile select option: p2. Use: profile_1, profile_2, profile_3, back"
    )
    assert refused(client, action="menu_select", option="slot_9") == "profile_id must be 1-3"
    assert post(client, action="menu_select", option="back")["message"] == "Going back from profile select"
    assert get(client)["menu_screen"] == "main"
    switch(3)
    assert switch(3).json() == {
        "status": "ok",
        "message": "Switch requested for profile 3 (via UI)",
        "target_profile_id": 3,
        "current_profile_id": 1,
    }
    assert get(client)["menu_screen"] == "main"
    assert client.get("/api/v1/profiles").json()["current_profile_id"] == 3
    switch(1)
    reply = post(client, action="menu_select", option="Profile_1")
    assert reply["message"] == "Switch requested for profile 1 (via UI)"
    assert get(client)["menu_screen"] == "main"
    assert client.get("/api/v1/compendium").json()["profile_id"] == 1
