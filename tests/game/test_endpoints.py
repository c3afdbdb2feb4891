"""The HTTP contract: routes, codes, texts, headers, ExecuteAction's order, the 500s.

Each test names the mod function it checks (Gennadiyev/STS2MCP @ 2fb5390):
M = McpMod.cs, A = McpMod.Actions.cs, P = McpMod.Profile.cs, C = McpMod.Compendium.cs,
W = McpMod.Wiki.cs.
"""

from __future__ import annotations

import re

import pytest

from actors.game.knobs import Knobs
from actors.game.screens.gameover import finish_run

from .conftest import SP, arrange, get, http_client, new_run, ok, post, refused

pytestmark = pytest.mark.timeout(30)

MP = "/api/v1/multiplayer"
WRONG_STRING = "The requested operation requires an element of type 'String', but the target element has type '{}'."
WRONG_NUMBER = "The requested operation requires an element of type 'Number', but the target element has type '{}'."
CORS = {
    "access-control-allow-origin": "*",
    "access-control-allow-methods": "GET, POST, OPTIONS",
    "access-control-allow-headers": "Content-Type",
}


def test_root_says_hello_to_any_method(client):
    # M HandleRequest: "/" answers hello whatever the method
    for method in ("GET", "POST", "PUT"):
        reply = client.request(method, "/")
        assert reply.status_code == 200
        assert reply.json() == {"message": "Hello from STS2 MCP v0.4.0-gamerig", "status": "ok"}


def test_options_is_204_with_cors(client):
    # M HandleRequest: OPTIONS → 204 on any path; every reply carries the CORS headers
    for path in (SP, "/anything"):
        reply = client.options(path)
        assert reply.status_code == 204
        assert {k: reply.headers[k] for k in CORS} == CORS
    reply = client.get(SP)
    assert {k: reply.headers[k] for k in CORS} == CORS
    assert reply.headers["content-type"] == "application/json; charset=utf-8"
    assert reply.text.startswith('{\n  "state_type"')  # WriteIndented


@pytest.mark.parametrize("path", ["/api/v1/nope", SP + "/", "/api/v1"])
def test_unknown_path_is_404(client, path):
    # M HandleRequest: exact paths only; SendError(404, "Not found")
    reply = client.get(path)
    assert reply.status_code == 404 and reply.json() == {"error": "Not found"}


@pytest.mark.parametrize(
    "method,path",
    [
        ("PUT", SP),
        ("DELETE", SP),
        ("PATCH", SP),
        ("POST", "/api/v1/compendium"),
        ("POST", "/api/v1/profile"),
        ("PUT", "/api/v1/profiles"),
    ],
)
def test_wrong_method_is_405(client, method, path):
    # M HandleRequest: SendError(405, "Method not allowed")
    reply = client.request(method, path, json={})
    assert reply.status_code == 405 and reply.json() == {"error": "Method not allowed"}


@pytest.mark.parametrize("raw", [b"{nope", b"", b"[1]", b'"x"', b"7", b'{"action": NaN}'])
def test_invalid_json_is_400(client, raw):
    # M HandlePostAction: Deserialize<Dictionary<string, JsonElement>> fails → 400
    reply = client.post(SP, content=raw)
    assert reply.status_code == 400 and reply.json() == {"error": "Invalid JSON"}


@pytest.mark.parametrize("raw", [b"null", b'{"option": "singleplayer"}'])
def test_missing_action_is_400(client, raw):
    # M HandlePostAction: parsed == null or no "action" → 400
    reply = client.post(SP, content=raw)
    assert reply.status_code == 400 and reply.json() == {"error": "Missing 'action' field"}


@pytest.mark.parametrize("value,kind", [(7, "Number"), (True, "True"), ([], "Array")])
def test_non_string_action_is_500_internal_error(client, value, kind):
    # M HandlePostAction: GetString() throws; HandleRequest's catch → "Internal error: ..."
    reply = client.post(SP, json={"action": value})
    assert reply.status_code == 500
    assert reply.json() == {"error": "Internal error: " + WRONG_STRING.format(kind)}


def test_null_action_is_the_empty_name(client):
    # M HandlePostAction: GetString() of null is null → "" → ExecuteAction("")
    assert refused(client, action=None) == "No run in progress"
    new_run(client)
    assert refused(client, action=None) == "Unknown action: "


def test_no_run_comes_before_unknown_action(client):
    # A ExecuteAction: "No run in progress" for every non-menu name, even unknown ones
    assert refused(client, action="dance") == "No run in progress"
    assert refused(client, action="end_turn") == "No run in progress"
    assert refused(client, action="play_card", card_index="x") == "No run in progress"
    new_run(client)
    assert refused(client, action="dance") == "Unknown action: dance"


@pytest.mark.parametrize(
    "bad,message",
    [
        ("0", WRONG_NUMBER.format("String")),
        (None, WRONG_NUMBER.format("Null")),
        (True, WRONG_NUMBER.format("True")),
        (1.5, "One of the identified items was in an invalid format."),
    ],
)
def test_wrongly_typed_index_is_500_action_failed(client, bad, message):
    # M HandlePostAction: GetInt32 throws inside the handler → "Action failed: <message>"
    state = new_run(client)
    while state["event"]["in_dialogue"]:
        state = ok(client, action="advance_dialogue")
    reply = client.post(SP, json={"action": "choose_event_option", "index": bad})
    assert reply.status_code == 500 and reply.json() == {"error": "Action failed: " + message}


@pytest.mark.parametrize("body", [{"option": 7}, {"option": "embark", "seed": 42}])
def test_wrongly_typed_menu_value_is_500_menu_action_failed(client, body):
    # M HandlePostAction: menu_select's GetString() throws → "Menu action failed: ..."
    reply = client.post(SP, json={"action": "menu_select", **body})
    assert reply.status_code == 500
    assert reply.json() == {"error": "Menu action failed: " + WRONG_STRING.format("Number")}


def test_markdown_format(client):
    # M HandleGetState: ?format=markdown → text/markdown
    reply = client.get(SP, params={"format": "markdown"})
    assert reply.status_code == 200
    assert reply.headers["content-type"] == "text/markdown; charset=utf-8"
    assert reply.text.startswith("# menu")
    assert "Main menu." in reply.text


def test_multiplayer_route_is_409_outside_a_multiplayer_run(client):
    # M HandleRequest: !IsMultiplayerRun() → 409 on the multiplayer route, any method
    for reply in (client.get(MP), client.post(MP, json={"action": "end_turn"}), client.put(MP)):
        assert reply.status_code == 409
        assert reply.json() == {"error": "Not in a multiplayer run. Use /api/v1/singleplayer instead."}
    new_run(client)
    assert client.get(MP).status_code == 409


def test_singleplayer_route_is_409_during_a_multiplayer_run(make_server):
    # M HandleRequest: IsMultiplayerRun() → 409 on the singleplayer route (knob)
    srv = make_server(1, Knobs(multiplayer_run=1))
    with http_client(srv.url) as c:
        assert c.get(MP).status_code == 409  # no run yet: not a multiplayer run
        for option in ("singleplayer", "standard", "ironbound", "embark"):
            ok(c, action="menu_select", option=option)
        for reply in (c.get(SP), c.post(SP, json={"action": "end_turn"})):
            assert reply.status_code == 409
            assert reply.json() == {"error": "Multiplayer run is active. Use /api/v1/multiplayer instead."}
        assert c.get(MP).json()["menu_screen"] == "tutorial_prompt"  # whole state
        reply = c.post(MP, json={"action": "menu_select", "option": "no"})
        assert reply.json()["message"] == "Tutorials: disabled"
        state = c.get(MP).json()  # BuildMultiplayerGameState's metadata first
        assert list(state)[:5] == ["game_mode", "net_type", "player_count", "local_player_slot", "state_type"]
        reply = c.post(MP, json={"action": "end_turn"})
        assert reply.status_code == 200 and reply.json()["status"] == "error"


def test_state_build_error_is_500_with_trace(make_server):
    # M HandleGetState: an exception while building → 500 {error, exception_type, trace}
    srv = make_server(1, Knobs(state_error_every=2))
    with http_client(srv.url) as c:
        assert c.get(SP).status_code == 200
        reply = c.get(SP)
        assert reply.status_code == 500
        body = reply.json()
        assert list(body) == ["error", "exception_type", "stack_trace"]
        assert body["error"].startswith("Failed to read game state: ")
        assert body["exception_type"] == "actors.game.errors.StateBuildError"


def test_compendium_current_run_null_in_menu_then_run_id(client):
    # C BuildCompendiumResponse / BuildCurrentRunContext
    body = client.get("/api/v1/compendium").json()
    assert list(body) == ["profile_id", "current_run", "source", "sections"]
    assert body["current_run"] is None
    new_run(client)
    body = client.get("/api/v1/compendium").json()
    cur = body["current_run"]
    assert list(cur)[:5] == ["is_in_progress", "profile_id", "save_scope", "id_format", "save_path"]
    assert cur["id_format"] == "{save_scope}:profile{profile_id}:{start_time}"
    assert re.fullmatch(r"modded:profile1:\d+", cur["run_id"])
    assert body["sections"]["card_library"]["discovered_ids"][:2] == ["STRIKE", "DEFEND"]


def test_compendium_limitation_parse_error_and_outage(make_server):
    # C BuildCurrentRunContext's limitation and parse_error; HandleGetCompendium's 500
    srv = make_server(1, Knobs(identity_lag_reads=2, identity_parse_error_every=4, identity_outage_every=5))
    with http_client(srv.url) as c:
        new_run(c)
        replies = [c.get("/api/v1/compendium") for _ in range(5)]
    runs = [r.json()["current_run"] for r in replies[:4]]
    assert runs[0]["limitation"] == "Run is in progress, but current_run.save was not found yet."
    assert "save_path" not in runs[0] and "run_id" in runs[2]
    assert runs[3]["parse_error"].startswith("'0x00' is an invalid start of a value.")
    assert "run_id" not in runs[3] and "save_path" in runs[3]
    assert replies[4].status_code == 500
    assert replies[4].json() == {
        "error": "Failed to build compendium: save metadata unavailable (knob identity_outage_every)"
    }


def test_profile_counts_runs(server, client):
    # P BuildProfile: totals and per-character stats
    new_run(client, "wanderer")
    arrange(server, lambda game: finish_run(game, False))
    body = client.get("/api/v1/profile").json()
    assert body["total_losses"] == 1 and body["number_of_runs"] == 1
    assert [(c["id"], c["total_losses"]) for c in body["characters"]] == [("WANDERER", 1)]
    assert body["epochs"][0] == {"id": "Neow1", "state": "Revealed", "obtained": body["epochs"][0]["obtained"]}


def test_profiles(client):
    # P HandleGetProfiles / HandlePostProfiles / ExecuteProfileAction texts
    profiles = client.get("/api/v1/profiles").json()
    assert profiles["current_profile_id"] == 1
    assert [p["id"] for p in profiles["profiles"]] == [1, 2, 3]
    assert set(profiles["profiles"][0]) == {"id", "is_current", "has_data", "path", "resolved_path"}
    bad = client.post("/api/v1/profiles", json={"action": "switch", "profile_id": "1"})
    assert bad.json() == {"status": "error", "error": "profile_id must be 1-3"}
    other = client.post("/api/v1/profiles", json={"action": "rename", "profile_id": 1})
    assert other.json()["error"] == "Unknown action: rename. Use: switch, delete"
    missing = client.post("/api/v1/profiles", json={"profile_id": 1})
    assert missing.status_code == 400
    assert missing.json() == {"error": "Missing 'action' field. Use: switch, delete"}
    assert (
        client.post("/api/v1/profiles", json={"action": "delete", "profile_id": 1}).json()["error"]
        == "Cannot delete the active profile"
    )
    assert client.post("/api/v1/profiles", json={"action": "delete", "profile_id": 2}).json() == {
        "status": "ok",
        "message": "Deleted profile 2",
    }
    new_run(client)
    during = client.post("/api/v1/profiles", json={"action": "switch", "profile_id": 2})
    assert during.json()["error"] == "Cannot switch profiles during a run"


def test_ok_means_queued(make_server):
    """With effect_delay_reads=2 the first reads after an accepted POST are unchanged."""
    srv = make_server(1, Knobs(effect_delay_reads=2))
    with http_client(srv.url) as c:
        before = get(c)
        assert post(c, action="menu_select", option="singleplayer")["status"] == "ok"
        assert get(c) == before
        assert get(c) == before
        assert get(c)["menu_screen"] == "singleplayer"


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


def test_wiki_searches_discovered_cards_and_relics(client):
    # W HandleGetWiki / BuildWikiSearch / ScoreWikiCandidate (McpMod.Wiki.cs)
    reply = client.get("/api/v1/wiki")
    assert reply.status_code == 400 and reply.json() == {
        "error": "query is required; wiki search does not return the full profile catalog."
    }
    assert client.get("/api/v1/wiki", params={"query": "strike"}).json()["results"] == []
    new_run(client)  # the run's starting cards and relic are discovered
    body = client.get("/api/v1/wiki", params={"q": "strike", "limit": "x"}).json()
    assert body["limit"] == 10 and body["item_type"] == "all"
    top = body["results"][0]
    assert (top["id"], top["score"], top["base"]["cost"]) == ("STRIKE", 1000.0, "1")
    assert top["upgraded"]["is_upgraded"] is True
    relic = client.get("/api/v1/wiki", params={"query": "ember hart", "type": "relics"}).json()
    assert [(r["id"], r["item_type"]) for r in relic["results"]] == [("EMBER_HEART", "relic")]
    bad = client.get("/api/v1/wiki", params={"query": "x", "item_type": "potion"})
    assert bad.json() == {"status": "error", "error": "item_type must be one of: all, card, relic."}
