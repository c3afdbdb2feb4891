"""A seeded embark: ``menu_select confirm|embark`` with ``seed``, and the knob that says what it
meets on the character select (``char_select_lobby``).

Each test names the mod function it checks (Gennadiyev/STS2MCP @ 2fb5390): A =
McpMod.Actions.cs ``ExecuteCharacterSelectMenuOption`` (1579-1659; the seed 1620-1643), M =
McpMod.cs ``HandlePostAction`` (reads ``seed`` with ``GetString``, 459), C =
McpMod.Compendium.cs ``BuildCurrentRunContext`` (``current_run.seed``, 398-400). The replies
are compared with their samples (vendor/sts2mcp/reply__seed*.json).
"""

from __future__ import annotations

import json

import pytest

from actors.game.knobs import Knobs

from .conftest import drive, get, http_client, ok, post, refused, screen
from .shapes import SAMPLES

pytestmark = pytest.mark.timeout(30)

SEED = "2450ZAR9EF"  # the seed of vendor/sts2mcp/reply__seeded_embark.json


def sample(name: str) -> dict:
    return json.loads((SAMPLES / f"{name}.json").read_text())


def to_character_select(client, pick: str | None = "ironbound") -> None:
    ok(client, action="menu_select", option="singleplayer")
    ok(client, action="menu_select", option="standard")
    if pick:
        ok(client, action="menu_select", option=pick)


def run_seed(client) -> object:
    """The run's seed as the compendium reports it (C: the save's ``rng.seed``)."""
    return client.get("/api/v1/compendium").json()["current_run"]["seed"]


def into_the_run(client) -> dict:
    """From an accepted embark: decline the tutorials, then the run's first screen."""
    state = get(client)
    assert state["menu_screen"] == "tutorial_prompt", state
    return ok(client, action="menu_select", option="no")


def test_a_seed_is_read_only_by_the_character_selects_embark(client):
    # A ExecuteMenuSelect hands ``seed`` only to ExecuteCharacterSelectMenuOption, which reads
    # it only for confirm/embark: on the submenus, a pick and ``back`` it is ignored
    assert post(client, action="menu_select", option="singleplayer", seed=SEED)["status"] == "ok"
    assert ok(client, action="menu_select", option="standard", seed=SEED)["menu_screen"] == "character_select"
    assert (
        post(client, action="menu_select", option="ironbound", seed=SEED)["message"]
        == "Selected The Ironbound. Use 'confirm' to embark."
    )
    assert post(client, action="menu_select", option="back", seed=SEED)["message"] == "Going back"
    assert get(client)["menu_screen"] == "singleplayer"


def test_without_a_lobby_a_seed_is_refused_before_the_embark_button(client):
    # A 1620-1626 (knob char_select_lobby 0, the default): no character picked yet, and still
    # the refusal of the seed comes first; nothing changes
    to_character_select(client, pick=None)
    assert post(client, action="menu_select", option="embark", seed=SEED) == sample("reply__seed_not_supported")
    assert get(client)["menu_screen"] == "character_select"


def test_a_standard_mode_lobby_refuses_with_the_games_text_and_a_plain_embark_follows(make_server):
    # A 1628-1635: the lobby's SetSeed threw; the message is the one the game's standard-mode
    # character select throws. Nothing started: a plain embark then starts the game's own run
    srv = make_server(1, Knobs(char_select_lobby=1))
    with http_client(srv.url) as c:
        to_character_select(c)
        assert post(c, action="menu_select", option="confirm", seed=SEED) == sample("reply__seed_failed")
        assert get(c)["menu_screen"] == "character_select"
        assert post(c, action="menu_select", option="embark") == {"status": "ok", "message": "Embarking on run"}
        into_the_run(c)
        assert run_seed(c) == "1"


def test_a_lobby_that_takes_the_seed_generates_the_run_from_it(make_server):
    # A 1628-1643 (knob 2): the trimmed seed is set on the lobby, the reply names it, and the
    # run is generated from it: the compendium reports it, and its map is the one the game
    # generates for that seed (the standard run of a game seeded 7 = a run seeded "7" here)
    srv = make_server(1, Knobs(char_select_lobby=2))
    with http_client(srv.url) as c:
        to_character_select(c)
        assert post(c, action="menu_select", option="embark", seed=f"  {SEED} ") == sample("reply__seeded_embark")
        into_the_run(c)
        assert run_seed(c) == SEED

    def first_map(game_seed: int, knobs: Knobs, seed: str | None) -> list:
        srv = make_server(game_seed, knobs)
        with http_client(srv.url) as c:
            to_character_select(c)
            body = {"seed": seed} if seed else {}
            ok(c, action="menu_select", option="embark", **body)
            into_the_run(c)
            return drive(c, screen("map"))["map"]["nodes"]

    seeded_7 = first_map(1, Knobs(char_select_lobby=2), "7")
    assert seeded_7 == first_map(7, Knobs(), None)
    assert seeded_7 != first_map(1, Knobs(char_select_lobby=2), "8")


def test_a_seed_the_lobby_took_stays_on_it_until_the_character_select_is_left(make_server):
    # A 1630 then 1638-1645: SetSeed runs before the embark button is looked at, so the seed
    # stays on the lobby when the embark is refused for want of a character; ``back`` leaves
    # the lobby (the source's comment on _backButton, A 1586)
    srv = make_server(1, Knobs(char_select_lobby=2))
    with http_client(srv.url) as c:
        to_character_select(c, pick=None)
        assert (
            refused(c, action="menu_select", option="embark", seed="KEPT")
            == "Embark button not available — select a character first"
        )
        ok(c, action="menu_select", option="ironbound")
        assert post(c, action="menu_select", option="embark")["message"] == "Embarking on run"
        into_the_run(c)
        assert run_seed(c) == "KEPT"
    srv = make_server(1, Knobs(char_select_lobby=2))
    with http_client(srv.url) as c:
        to_character_select(c, pick=None)
        refused(c, action="menu_select", option="embark", seed="LOST")
        ok(c, action="menu_select", option="back")
        ok(c, action="menu_select", option="standard")
        ok(c, action="menu_select", option="ironbound")
        ok(c, action="menu_select", option="embark")
        into_the_run(c)
        assert run_seed(c) == "1"


@pytest.mark.parametrize("lobby", [0, 1, 2])
def test_a_blank_seed_is_no_seed_yet_the_reply_shows_it(make_server, lobby):
    # A 1620 (IsNullOrWhiteSpace: no seed, untrimmed) and 1641 (IsNullOrEmpty on that value)
    srv = make_server(1, Knobs(char_select_lobby=lobby))
    with http_client(srv.url) as c:
        to_character_select(c)
        assert post(c, action="menu_select", option="confirm", seed="  ") == {
            "status": "ok",
            "message": "Embarking on run (seed:   )",
        }
        into_the_run(c)
        assert run_seed(c) == "1"


def test_a_seed_that_is_not_a_string_is_a_500(client):
    # M HandlePostAction: seedElem.GetString() throws on a number, before any screen is read
    reply = client.post("/api/v1/singleplayer", json={"action": "menu_select", "option": "embark", "seed": 7})
    assert reply.status_code == 500
    assert reply.json()["error"].startswith("Menu action failed: ")


def test_the_knob_takes_0_1_or_2():
    assert Knobs.from_mapping({"char_select_lobby": 2}).char_select_lobby == 2
    with pytest.raises(ValueError, match="'char_select_lobby' must be one of 0, 1, 2, got 3"):
        Knobs(char_select_lobby=3)
