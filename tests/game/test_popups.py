"""Tutorials and popups that replace the whole state mid-run, and block every action.

Each test names the mod function it checks (Gennadiyev/STS2MCP @ 2fb5390):
H = McpMod.Helpers.cs, A = McpMod.Actions.cs.
"""

from __future__ import annotations

import pytest

from actors.game.knobs import Knobs
from actors.game.screens.gameover import finish_run
from actors.game.screens.popups import show_popup

from .conftest import arrange, get, http_client, ok, post, refused

pytestmark = pytest.mark.timeout(30)

BLOCKING = "Blocking popup active. Use menu_select with one of the advertised popup options before gameplay actions."
TUTORIAL = {
    "state_type": "menu",
    "menu_screen": "tutorial",
    "message": "Tutorial popup active. Use advance to dismiss.",
    "options": [{"name": "advance", "enabled": True}, {"name": "proceed", "enabled": True}],
}


def embark(c) -> dict:
    for option in ("singleplayer", "standard", "ironbound"):
        ok(c, action="menu_select", option=option)
    return ok(c, action="menu_select", option="embark")


def test_tutorial_prompt_blocks_then_yes_enables_tutorials(client):
    # H BuildVisibleFtueState (tutorial_prompt); A ExecuteAction's popup check;
    # A ExecuteMenuSelect's tutorial prompt answers
    state = embark(client)
    assert state == {
        "state_type": "menu",
        "menu_screen": "tutorial_prompt",
        "message": "Enable Tutorials? Choose yes or no.",
        "options": [{"name": "no", "enabled": True}, {"name": "yes", "enabled": True}],
    }
    assert refused(client, action="advance_dialogue") == BLOCKING
    assert refused(client, action="dance") == BLOCKING  # before the unknown-name check
    assert (
        refused(client, action="menu_select", option="maybe") == "Unknown tutorial prompt option: maybe. Use: yes, no"
    )
    assert post(client, action="menu_select", option="YES")["message"] == "Tutorials: enabled"
    # the first screen of the run now shows its first-time tutorial instead
    assert get(client) == TUTORIAL
    assert refused(client, action="advance_dialogue") == BLOCKING
    assert refused(client, action="menu_select", option="yes") == "Unknown tutorial option: yes. Use: advance, proceed"
    assert post(client, action="menu_select", option="proceed")["message"] == "Dismissed tutorial popup"
    state = get(client)
    assert state["state_type"] == "event" and state["event"]["in_dialogue"] is True


def test_no_disables_tutorials(client):
    # A ExecuteMenuSelect: "no" → "Tutorials: disabled"; no first-time tutorials follow
    embark(client)
    assert post(client, action="menu_select", option="no")["message"] == "Tutorials: disabled"
    assert get(client)["state_type"] == "event"


def test_run_underneath_is_untouched(make_server):
    # H BuildVisiblePopupState replaces the whole state; the run resumes as it was
    srv = make_server(1, Knobs(popup_every_reads=4))
    with http_client(srv.url) as c:
        embark(c)
        post(c, action="menu_select", option="no")
        before = get(c)
        assert before["state_type"] == "event"
        popup = get(c)
        while popup["state_type"] != "menu":
            before, popup = popup, get(c)
        assert popup["menu_screen"] == "popup"
        assert refused(c, action="advance_dialogue") == BLOCKING
        enabled = next(o["name"] for o in popup["options"] if o["enabled"])
        assert get(c) == popup  # it stays until dismissed
        assert ok(c, action="menu_select", option=enabled) == before


def test_ftue_buttons_disabled_on_first_read(make_server):
    # knob ftue_unready_reads; A ExecuteMenuSelect: no actionable advance control
    srv = make_server(1, Knobs(ftue_unready_reads=2))
    with http_client(srv.url) as c:
        embark(c)
        post(c, action="menu_select", option="yes")
        first = get(c)
        assert first["menu_screen"] == "tutorial"
        assert first["options"] == [{"name": "advance", "enabled": False}, {"name": "proceed", "enabled": False}]
        assert refused(c, action="menu_select", option="advance") == (
            "Tutorial popup visible but no actionable advance/proceed control is "
            "available; retry after the next state poll"
        )
        assert get(c)["options"][0]["enabled"] is False
        assert get(c) == TUTORIAL


def test_random_popups_mid_run(make_server):
    # H BuildVisiblePopupState; A ExecutePopupOption's texts
    srv = make_server(1, Knobs(popup_every_reads=3))
    with http_client(srv.url) as c:
        embark(c)
        ok(c, action="menu_select", option="no")
        popups, reads = [], 0
        while len(popups) < 4 and reads < 60:
            state = get(c)
            reads += 1
            if state.get("menu_screen") != "popup":
                continue
            assert list(state) == ["state_type", "menu_screen", "message", "body", "options"]
            popups.append(state)
            assert refused(c, action="advance_dialogue") == BLOCKING
            names = [o["name"] for o in state["options"]]
            assert (
                refused(c, action="menu_select", option="nope")
                == f"Popup option 'nope' is not actionable. Use: {', '.join(names)}"
            )
            disabled = [o["name"] for o in state["options"] if not o["enabled"]]
            if disabled:
                assert (
                    refused(c, action="menu_select", option=disabled[0]) == f"Popup option '{disabled[0]}' is disabled"
                )
            enabled = next(o["name"] for o in state["options"] if o["enabled"])
            assert (
                post(c, action="menu_select", option=enabled.upper())["message"] == f"Selected popup option: {enabled}"
            )
            assert get(c).get("menu_screen") != "popup"
        assert len(popups) == 4


def test_popups_are_deterministic(make_server):
    seen = []
    for _ in range(2):
        srv = make_server(5, Knobs(popup_every_reads=2))
        with http_client(srv.url) as c:
            embark(c)
            ok(c, action="menu_select", option="no")
            seen.append([get(c) for _ in range(6)])
    assert seen[0] == seen[1]


def test_an_action_accepted_before_a_popup_still_happens(server, client):
    # A ExecuteAction checks for a popup when the POST arrives; an accepted action is in the
    # game's queue and runs even if a popup opens before its effect shows
    embark(client)
    before = ok(client, action="menu_select", option="no")
    while before["event"]["in_dialogue"]:
        before = ok(client, action="advance_dialogue")
    arrange(server, lambda game: setattr(game, "knobs", Knobs(effect_delay_reads=1, popup_every_reads=5)))
    while client.get("/__gamerig/stats").json()["reads"] % 5 != 4:
        before = get(client)
    assert before["state_type"] == "event" and before["event"]["options"]
    assert post(client, action="choose_event_option", index=0)["status"] == "ok"
    popup = get(client)  # read 5k: the popup opens; the effect is due at the next read
    assert popup["menu_screen"] == "popup"
    assert get(client) == popup
    names = [o["name"] for o in popup["options"] if o["enabled"]]
    assert post(client, action="menu_select", option=names[0])["status"] == "ok"
    get(client)
    after = get(client)
    assert after != before
    assert server.stats()["dropped_effects"] == 0


def test_first_run_warning_over_character_select(make_server):
    # A ExecuteMenuSelect: "generic blocking menu popups, such as the first-run warning that
    # appears over character select on fresh profiles" (knob first_run_warning)
    srv = make_server(1, Knobs(first_run_warning=1))
    with http_client(srv.url) as c:
        ok(c, action="menu_select", option="singleplayer")
        state = ok(c, action="menu_select", option="standard")
        assert state["menu_screen"] == "popup" and state["options"] == [{"name": "continue", "enabled": True}]
        assert (
            refused(c, action="menu_select", option="ironbound")
            == "Popup option 'ironbound' is not actionable. Use: continue"
        )
        assert refused(c, action="end_turn") == "No run in progress"  # no run: first
        assert ok(c, action="menu_select", option="continue")["menu_screen"] == "character_select"
        ok(c, action="menu_select", option="back")
        assert ok(c, action="menu_select", option="standard")["menu_screen"] == "character_select"  # once per profile


def test_a_popup_over_the_game_over_screen_answers_as_the_game_over(server, client):
    # A ExecuteMenuSelect checks the game-over screen BEFORE any tutorial or popup: a popup
    # shown over it replaces the state (H BuildVisiblePopupState) and blocks gameplay actions
    # (A ExecuteAction), but its own options are answered as game-over options
    assert embark(client)["menu_screen"] == "tutorial_prompt"
    ok(client, action="menu_select", option="no")

    def over_then_popup(game):
        finish_run(game, False)
        show_popup(game, "Feedback", "Tell us about this run?", (("yes", True), ("no", True)))

    arrange(server, over_then_popup)
    state = get(client)
    assert (state["menu_screen"], state["body"]) == ("popup", "Tell us about this run?")
    assert refused(client, action="proceed") == BLOCKING
    assert refused(client, action="menu_select", option="no") == "Unknown game over option: no. Use: main_menu"
    assert post(client, action="menu_select", option="main_menu")["message"] == "Returning to main menu"
