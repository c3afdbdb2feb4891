"""Saved runs and the start knobs (joining a game in progress), the catch-all overlay and
``unknown`` as the mod builds them.

Each test names the mod function it checks (Gennadiyev/STS2MCP @ 2fb5390):
SB = McpMod.StateBuilder.cs, A = McpMod.Actions.cs.
"""

from __future__ import annotations

import pytest

from actors.game.knobs import Knobs
from actors.game.screens.overlay import show_overlay

from .conftest import arrange, get, http_client, ok, post, refused

pytestmark = pytest.mark.timeout(30)


def test_start_in_run_is_deterministic(make_server):
    # knob start_in_run (+ start_floor): the server starts inside a run, seeded
    states = []
    for _ in range(2):
        srv = make_server(4, Knobs(start_in_run=1, start_floor=3))
        with http_client(srv.url) as c:
            assert client_compendium(c)["is_in_progress"] is True
            states.append(settle(c))
    assert states[0] == states[1]
    assert states[0]["run"]["floor"] == 3 and "player" in states[0]


def settle(c) -> dict:
    """Read, dismissing first-time tutorials (the started profile has them on)."""
    state = get(c)
    while state["state_type"] == "menu":
        assert state["menu_screen"] == "tutorial"
        state = ok(c, action="menu_select", option="advance")
    return state


def client_compendium(c) -> dict:
    return c.get("/api/v1/compendium").json()["current_run"]


def test_start_on_main_menu_with_a_saved_run_then_continue(make_server):
    # SB BuildGameState main menu: continue and abandon_run listed first
    srv = make_server(4, Knobs(start_saved_run=1, start_floor=2))
    with http_client(srv.url) as c:
        state = get(c)
        assert state["options"][:3] == ["continue", "abandon_run", "singleplayer"]
        assert client_compendium(c) is None  # no run in progress on the main menu
        assert refused(c, action="end_turn") == "No run in progress"
        assert post(c, action="menu_select", option="continue")["message"] == "Selected continue"
        state = settle(c)
        assert state["run"]["floor"] == 2
        assert client_compendium(c)["is_in_progress"] is True
        assert srv.stats()["runs_started"] == 1  # resumed, not restarted


def test_a_saved_run_continued_into_a_fight_still_loading_gets_its_fight(make_server):
    # The conformance campaign's seed 11: with waiting_reads on, a run saved while its floor-1
    # fight was still loading lost the loading timer, and `continue` showed "Combat ended.
    # Waiting for rewards..." for ever (SB BuildGameState: a CombatRoom without a combat).
    srv = make_server(11, Knobs(start_saved_run=1, start_floor=1, waiting_reads=2))
    with http_client(srv.url) as c:
        for _ in range(5):  # reads on the main menu: the timer must wait for the saved run
            assert get(c)["menu_screen"] == "main"
        ok(c, action="menu_select", option="continue")
        states = []
        for _ in range(8):
            state = settle(c)
            states.append(state)
            if "battle" in state:
                break
        assert "battle" in states[-1], [s.get("message") or s["state_type"] for s in states]
        assert all(s.get("message") is None for s in states), "never 'Combat ended' before a fight"


def test_abandon_run_asks_then_deletes_the_save(make_server):
    # the popup is our assumption (docs/game.md); A ExecutePopupOption answers it
    srv = make_server(4, Knobs(start_saved_run=1))
    with http_client(srv.url) as c:
        assert post(c, action="menu_select", option="abandon_run")["message"] == "Selected abandon_run"
        popup = get(c)
        assert popup == {
            "state_type": "menu",
            "menu_screen": "popup",
            "message": "Abandon Run?",
            "body": "Are you sure you want to abandon this run?",
            "options": [{"name": "yes", "enabled": True}, {"name": "no", "enabled": True}],
        }
        assert refused(c, action="end_turn") == "No run in progress"  # no run: first
        ok(c, action="menu_select", option="no")
        assert get(c)["options"][0] == "continue"
        ok(c, action="menu_select", option="abandon_run")
        state = ok(c, action="menu_select", option="yes")
        assert state["options"][0] == "singleplayer"
        assert c.get("/api/v1/profile").json()["total_losses"] == 1


def test_new_run_discards_the_saved_run(make_server):
    srv = make_server(4, Knobs(start_saved_run=1))
    with http_client(srv.url) as c:
        for option in ("singleplayer", "standard", "wanderer", "embark"):
            ok(c, action="menu_select", option=option)
        assert srv.stats()["runs_started"] == 2
        assert arrange(srv, lambda game: game.saved) is None


def test_overlay_clears_after_two_reads(server, client):
    # SB BuildGameState catch-all overlay branch
    ok(client, action="menu_select", option="singleplayer")
    ok(client, action="menu_select", option="standard")
    ok(client, action="menu_select", option="ironbound")
    ok(client, action="menu_select", option="embark")
    ok(client, action="menu_select", option="no")
    fired = []
    arrange(server, lambda game: show_overlay(game, "NAncientCutscene", lambda: fired.append(1)))
    state = get(client)
    assert state["overlay"] == {
        "screen_type": "NAncientCutscene",
        "message": ("An overlay (NAncientCutscene) is active. It may require manual interaction in-game."),
    }
    assert list(state) == ["state_type", "overlay", "run", "player"]
    assert get(client)["state_type"] == "overlay"
    assert get(client)["state_type"] == "event" and fired == [1]


def test_sticky_overlay_until_manual(make_server):
    # knob sticky_overlay_reads; POST /__gamerig/manual (a person at the keyboard)
    srv = make_server(1, Knobs(sticky_overlay_reads=50))
    with http_client(srv.url) as c:
        for option in ("singleplayer", "standard", "ironbound", "embark", "no"):
            ok(c, action="menu_select", option=option)
        arrange(srv, lambda game: show_overlay(game, "NDeckViewScreen", lambda: None))
        assert all(get(c)["state_type"] == "overlay" for _ in range(10))
        reply = c.post("/__gamerig/manual").json()
        assert reply == {"status": "ok", "message": "Closed overlay NDeckViewScreen"}
        assert get(c)["state_type"] == "event"
