"""The hostile knobs, one test each (plus ``Knobs.from_mapping`` validation)."""

from __future__ import annotations

import pytest

from actors.game.knobs import Knobs

from .conftest import drive, get, http_client, new_run, ok, post, refused, screen

pytestmark = pytest.mark.timeout(30)


def test_knobs_default_off_and_validation():
    defaults = Knobs().as_dict()
    assert all(v == 0 for k, v in defaults.items() if k != "acts")  # acts: not hostile
    assert Knobs.from_mapping({"waiting_reads": 2}).waiting_reads == 2
    with pytest.raises(ValueError, match="unknown game knob.*'bogus'"):
        Knobs.from_mapping({"bogus": 1})
    with pytest.raises(ValueError, match="'waiting_reads' must be an integer"):
        Knobs.from_mapping({"waiting_reads": "2"})
    with pytest.raises(ValueError, match="'enemy_turn_reads' must be >= 0"):
        Knobs.from_mapping({"enemy_turn_reads": -1})
    with pytest.raises(ValueError, match="'start_in_run' must be 0 or 1"):
        Knobs(start_in_run=2)
    with pytest.raises(ValueError, match="exclude each other"):
        Knobs(start_in_run=1, start_saved_run=1)
    with pytest.raises(ValueError, match="'start_floor' needs"):
        Knobs(start_floor=3)


def test_reject_every_nth(make_server):
    srv = make_server(1, Knobs(reject_every_nth=2))
    with http_client(srv.url) as c:
        assert post(c, action="menu_select", option="singleplayer")["status"] == "ok"
        reply = post(c, action="menu_select", option="standard")
        assert reply == {"status": "error", "error": "Action rejected: the game is busy"}
        assert get(c)["menu_screen"] == "singleplayer"


def test_slow_confirmation(make_server):
    srv = make_server(2, Knobs(slow_confirm_reads=2))
    with http_client(srv.url) as c:
        state = drive(c, screen("card_reward"))
        assert post(c, action="select_card_reward", card_index=0)["status"] == "ok"
        assert get(c) == state and get(c) == state  # a confirmation: 2 more reads
        assert get(c)["state_type"] != "card_reward"


def test_waiting_reads_between_screens(make_server):
    # SB BuildGameState: CurrentRoom null → unknown with room_type null (run, player);
    # RunManager in progress without a RunState → {"state_type": "unknown"} alone
    srv = make_server(2, Knobs(waiting_reads=2))
    with http_client(srv.url) as c:
        for option in ("singleplayer", "standard", "wanderer", "embark"):
            post(c, action="menu_select", option=option)
            if option != "embark":
                get(c)
        assert get(c) == {
            "state_type": "menu",
            "menu_screen": "tutorial_prompt",
            "message": "Enable Tutorials? Choose yes or no.",
            "options": [{"name": "no", "enabled": True}, {"name": "yes", "enabled": True}],
        }
        post(c, action="menu_select", option="no")
        assert get(c) == {"state_type": "unknown"}
        assert refused(c, action="end_turn") == "Not in combat"
        assert get(c) == {"state_type": "unknown"}
        drive(c, screen("map"))
        post(c, action="choose_map_node", index=0)
        first = get(c)
        assert first["state_type"] == "unknown" and first["room_type"] is None
        assert list(first) == ["state_type", "room_type", "run", "player"]
        assert get(c)["state_type"] == "unknown"
        assert get(c)["state_type"] != "unknown"


def test_enemy_turn_takes_reads(make_server):
    srv = make_server(2, Knobs(enemy_turn_reads=2))
    with http_client(srv.url) as c:
        state = drive(c, screen("monster"))
        assert post(c, action="end_turn")["status"] == "ok"
        for _ in range(2):
            battle = get(c)["battle"]
            assert battle["turn"] == "enemy" and battle["is_play_phase"] is False
        assert "enemy turn" in refused(c, action="play_card", card_index=0)
        state = get(c)
        assert state["battle"]["turn"] == "player" and state["battle"]["round"] == 2


def test_overlay_lingers(make_server):
    srv = make_server(2, Knobs(overlay_linger_reads=2))
    with http_client(srv.url) as c:
        state = drive(c, screen("rewards"))
        post(c, action="proceed")
        assert get(c) == state and get(c) == state  # the closed rewards screen lingers
        assert refused(c, action="claim_reward", index=0)  # the real screen: the map
        assert get(c)["state_type"] == "map"


def test_run_replaced_with_same_seed(make_server):
    srv = make_server(3, Knobs(replace_run_after_actions=3))
    with http_client(srv.url) as c:
        new_run(c)
        first = c.get("/api/v1/compendium").json()["current_run"]
        state = ok(c, action="advance_dialogue")
        state = ok(c, action="advance_dialogue")
        assert not state["event"]["in_dialogue"]
        state = ok(c, action="choose_event_option", index=0)
        assert state["state_type"] == "event" and state["event"]["in_dialogue"] is True
        second = c.get("/api/v1/compendium").json()["current_run"]
        assert second["run_id"] != first["run_id"] and second["seed"] == first["seed"]
        assert srv.stats()["runs_started"] == 2


def test_identity_lags_behind_a_replaced_run(make_server):
    srv = make_server(3, Knobs(replace_run_after_actions=1, identity_lag_reads=2))
    with http_client(srv.url) as c:
        new_run(c)
        c.get("/api/v1/compendium")
        old = c.get("/api/v1/compendium").json()["current_run"]["run_id"]
        ok(c, action="advance_dialogue")  # the run is replaced here
        stale = c.get("/api/v1/compendium").json()["current_run"]
        assert stale["run_id"] == old  # the save metadata has not caught up yet
        fresh = c.get("/api/v1/compendium").json()["current_run"]
        assert fresh["run_id"] != old


def test_effect_delay_validates_against_stale_state(make_server):
    """A double click sent before the first took effect is accepted, then dropped."""
    srv = make_server(1, Knobs(effect_delay_reads=1))
    with http_client(srv.url) as c:
        assert post(c, action="menu_select", option="singleplayer")["status"] == "ok"
        assert post(c, action="menu_select", option="singleplayer")["status"] == "ok"
        get(c)
        get(c)
        assert get(c)["menu_screen"] == "singleplayer"
        assert srv.stats()["dropped_effects"] == 1
