"""Contract tests of the endpoints and both error shapes (real HTTP on 127.0.0.1:0)."""

from __future__ import annotations

import re

import pytest

from actors.game.knobs import Knobs

from .conftest import SP, get, http_client, new_run, ok, post, refused

pytestmark = pytest.mark.timeout(30)


def test_root_says_hello(client):
    reply = client.get("/")
    assert reply.status_code == 200
    body = reply.json()
    assert body["status"] == "ok" and body["message"].startswith("Hello from STS2 MCP v")


def test_options_is_204(client):
    assert client.options(SP).status_code == 204
    assert client.options("/anything").status_code == 204


def test_unknown_path_is_404_transport_error(client):
    reply = client.get("/api/v1/nope")
    assert reply.status_code == 404
    assert "error" in reply.json() and "status" not in reply.json()


@pytest.mark.parametrize("method,path", [("PUT", SP), ("DELETE", SP), ("POST", "/"),
                                         ("POST", "/api/v1/compendium"), ("PATCH", SP)])
def test_wrong_method_is_405(client, method, path):
    reply = client.request(method, path, json={})
    assert reply.status_code == 405
    assert "error" in reply.json() and "status" not in reply.json()


def test_invalid_json_is_400(client):
    reply = client.post(SP, content=b"{nope")
    assert reply.status_code == 400 and reply.json() == {"error": "Invalid JSON"}


def test_missing_action_is_400(client):
    reply = client.post(SP, json={"option": "singleplayer"})
    assert reply.status_code == 400 and reply.json() == {"error": "Missing 'action' field"}


def test_non_string_action_is_500_internal_error(client):
    reply = client.post(SP, json={"action": 7})
    assert reply.status_code == 500
    assert reply.json()["error"].startswith("Internal error: ")


def test_unknown_action_is_200_error(client):
    assert refused(client, action="dance") == "Unknown action: dance"


def test_gameplay_action_outside_a_run_is_refused(client):
    assert refused(client, action="end_turn") == "No run in progress"
    assert refused(client, action="play_card", card_index=0) == "No run in progress"


@pytest.mark.parametrize("bad", ["0", 0.0, 1.5, True])
def test_wrongly_typed_index_is_500_action_failed(client, bad):
    new_run(client)
    reply = client.post(SP, json={"action": "choose_event_option", "index": bad})
    assert reply.status_code == 500
    assert reply.json()["error"].startswith("Action failed: ")


def test_markdown_format(client):
    reply = client.get(SP, params={"format": "markdown"})
    assert reply.status_code == 200
    assert reply.headers["content-type"].startswith("text/markdown")
    assert reply.text.startswith("# menu")


def test_multiplayer_is_409_during_a_singleplayer_run(client):
    assert client.get("/api/v1/multiplayer").status_code == 200
    new_run(client)
    for reply in (client.get("/api/v1/multiplayer"),
                  client.post("/api/v1/multiplayer", json={"action": "end_turn"})):
        assert reply.status_code == 409
        assert "error" in reply.json() and "status" not in reply.json()


def test_compendium_current_run_null_in_menu_then_run_id(client):
    body = client.get("/api/v1/compendium").json()
    assert body["current_run"] is None
    assert {c["id"] for c in body["cards"]} >= {"STRIKE", "DEFEND", "CYCLONE"}
    new_run(client)
    cur = client.get("/api/v1/compendium").json()["current_run"]
    assert cur["is_in_progress"] is True
    assert cur["run_id"] == f"{cur['save_scope']}:profile{cur['profile_id']}:{cur['start_time']}"
    assert re.fullmatch(r"modded:profile1:\d+", cur["run_id"])
    for key in ("id_format", "save_path", "save_time", "run_time", "game_mode", "ascension",
                "current_act_index", "schema_version", "platform_type", "seed"):
        assert key in cur


def test_compendium_limitation_while_save_lags(make_server):
    srv = make_server(1, Knobs(identity_lag_reads=2))
    with http_client(srv.url) as c:
        new_run(c)
        first = c.get("/api/v1/compendium").json()["current_run"]
        assert "limitation" in first and "run_id" not in first
        later = [c.get("/api/v1/compendium").json()["current_run"] for _ in range(2)]
        assert "run_id" in later[-1]


def test_compendium_parse_error_and_outage(make_server):
    srv = make_server(1, Knobs(identity_parse_error_every=2, identity_outage_every=3))
    with http_client(srv.url) as c:
        new_run(c)
        replies = [c.get("/api/v1/compendium") for _ in range(6)]
    codes = [r.status_code for r in replies]
    assert codes == [200, 200, 500, 200, 200, 500]
    assert "parse_error" in replies[1].json()["current_run"]
    assert "run_id" not in replies[1].json()["current_run"]
    assert set(replies[2].json()) == {"error", "exception_type", "stack_trace"}


def test_profile_wiki_profiles(client):
    prof = client.get("/api/v1/profile").json()
    assert prof["profile_id"] == 1
    wiki = client.get("/api/v1/wiki", params={"query": "strike", "item_type": "card",
                                               "limit": 5}).json()
    assert [r["id"] for r in wiki["results"]] == ["STRIKE"]
    assert client.get("/api/v1/wiki", params={"limit": "x"}).status_code == 400
    profiles = client.get("/api/v1/profiles").json()
    assert profiles["current_profile_id"] == 1 and len(profiles["profiles"]) == 3
    reply = client.post("/api/v1/profiles", json={"action": "switch", "profile_id": 2})
    assert reply.json()["status"] == "ok"
    assert client.get("/api/v1/profile").json()["profile_id"] == 2
    new_run(client)
    reply = client.post("/api/v1/profiles", json={"action": "switch", "profile_id": 1})
    assert reply.json()["status"] == "error"
    bad = client.post("/api/v1/profiles", json={"action": "switch", "profile_id": "1"})
    assert bad.status_code == 500


def test_ok_means_queued(make_server):
    """With effect_delay_reads=2 the first reads after an accepted POST are unchanged."""
    srv = make_server(1, Knobs(effect_delay_reads=2))
    with http_client(srv.url) as c:
        before = get(c)
        assert post(c, action="menu_select", option="singleplayer")["status"] == "ok"
        assert get(c) == before
        assert get(c) == before
        assert get(c)["menu"]["menu_screen"] == "singleplayer"


def test_default_effect_shows_on_next_read_not_in_reply(client):
    reply = post(client, action="menu_select", option="singleplayer")
    assert reply == {"status": "ok", "message": "Opening singleplayer"}
    assert get(client)["menu"]["menu_screen"] == "singleplayer"


def test_state_build_error_is_500_with_trace(make_server):
    srv = make_server(1, Knobs(state_error_every=2))
    with http_client(srv.url) as c:
        assert c.get(SP).status_code == 200
        reply = c.get(SP)
        assert reply.status_code == 500
        assert set(reply.json()) == {"error", "exception_type", "stack_trace"}


def test_stats_endpoint(client, server):
    get(client)
    post(client, action="menu_select", option="singleplayer")
    post(client, action="dance")
    stats = client.get("/__gamerig/stats").json()
    assert stats["posts"] == 2 and stats["posts_with_intent"] == 0
    assert stats["actions_by_name"] == {"dance": 1, "menu_select": 1}
    assert stats["seed"] == 1 and stats["runs_started"] == 0
    assert "menu:main" in stats["screens_seen"]
    assert stats == {**server.stats(), "reads": stats["reads"]}


def test_every_action_is_refused_on_the_wrong_screen(client):
    """During the opening event's dialogue, every other action answers a 200 error."""
    from actors.game.registry import ACTIONS
    new_run(client)
    params = {"card_index": 0, "index": 0, "slot": 0, "x": 0, "y": 0, "tool": "big",
              "option": "main_menu", "target": "GNAT_0"}
    assert set(ACTIONS) >= {"play_card", "end_turn", "shop_purchase", "select_bundle",
                            "crystal_sphere_click_cell", "claim_treasure_relic"}
    for name, spec in sorted(ACTIONS.items()):
        if name == "advance_dialogue":
            continue
        body = {"action": name, **{p: params[p] for p, _, _ in spec.params if p in params}}
        reply = post(client, **body)
        assert reply["status"] == "error", (name, reply)
        assert set(reply) == {"status", "error"} and reply["error"], name
    assert get(client)["event"]["in_dialogue"] is True
