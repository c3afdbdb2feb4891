"""``supervisor mcp --game builtin`` driven by the official MCP SDK's stdio client, with only the
STS2MCP mod server's tool names (``mcp/server.py`` of Gennadiyev/STS2MCP at the commit
``vendor/sts2mcp/README.md`` pins): a whole run from the main menu to the game over; a duplicate
refused; waiting; bad input; and the built-in game's own intent check (every POST found its
fsynced intent on disk) over everything."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import anyio
import pytest

from supervisor.capture.facts import CapturedSession, observation_reader
from supervisor.mcp.sts2 import schemas as sts2_schemas
from tests.harness import REPO
from tests.mcp.agent import GameReply, connect, journal
from tests.mcp.sts2_player import candidates

pytestmark = pytest.mark.timeout(150)

MOD_TOOLS = {t.name for t in sts2_schemas.SP}
# the mod server's tools with their parameters, read off mcp/server.py at the pinned commit
MOD_SIGNATURES = {
    "get_game_state": {"format": "markdown"},
    "menu_select": {"option": None, "seed": None},
    "search_wiki": {"query": None, "item_type": "all", "limit": 10},
    "combat_play_card": {"card_index": None, "target": None},
    "use_potion": {"slot": None, "target": None},
    "crystal_sphere_click_cell": {"x": None, "y": None},
    "rewards_claim": {"reward_index": None},
    "map_choose_node": {"node_index": None},
    "switch_profile": {"profile_id": None},
    "combat_end_turn": {},
    "crystal_sphere_set_tool": {"tool": None},
}


class Player:
    """Calls tools through the SDK; keeps every call made."""

    def __init__(self, agent):
        self.agent, self.calls = agent, []

    async def call(self, name: str, args: dict | None = None) -> GameReply:
        self.calls.append(name)
        return GameReply(await self.agent.session.call_tool(name, args or {}))


async def advance(player: Player, state: dict, until: tuple[str, ...], calls: int):
    """Play (``sts2_player.candidates``, the first not yet refused on this very state) until the
    state's type is one of ``until``; (state, session dir, screens seen)."""
    where, seen, failed = None, [], set()
    for _ in range(calls):
        kind = state["state_type"]
        seen.append(kind if kind != "menu" else f"menu:{state.get('menu_screen')}")
        if kind in until:
            break
        key = json.dumps(state, sort_keys=True)
        options = [c for c in candidates(state) if (key, json.dumps(c)) not in failed]
        assert options, f"nothing to do on {kind}: {json.dumps(state)[:400]}"
        name, args = options[0]
        reply = await player.call(name, {**args, "reason": f"test player on {kind}"})
        where = where or session_dir(reply)
        if reply.is_error or json.loads(reply.text).get("status") != "ok":
            failed.add((key, json.dumps(options[0])))
        waited = await player.call("wait_until_actionable", {"timeout_seconds": 10})
        assert not waited.is_error, waited.text
        state = waited.json()
    return state, where, seen


def session_dir(reply: GameReply) -> Path:
    return Path(reply.evidence["session_dir"])


def game_stats(rows: list[dict]) -> dict:
    found = [r for r in rows if r["event"] == "builtin_game_stats"]
    assert found, "the built-in game did not report its intent check (no builtin_game_stats row)"
    return found[-1]["stats"]


def test_a_whole_run_from_the_main_menu_to_game_over_with_the_mod_tool_names(tmp_path):
    async def play() -> tuple[Path, list[str], list[str]]:
        async with connect(
            tmp_path, None, extra=("--game", "builtin", "--knob", "acts=1", "--poll-interval", "0.02")
        ) as agent:
            listed = {t.name: t for t in (await agent.session.list_tools()).tools}
            assert set(listed) >= MOD_TOOLS and len(MOD_TOOLS) == 35
            for name, params in MOD_SIGNATURES.items():
                props = listed[name].input_schema["properties"]
                assert set(params) <= set(props), name
                for p, default in params.items():
                    if default is not None:
                        assert props[p]["default"] == default, (name, p)
            assert sum(1 for n in listed if n.startswith("mp_")) == 29
            player = Player(agent)
            state = (await player.call("get_game_state", {"format": "json"})).json()
            assert state["state_type"] == "menu" and state["menu_screen"] == "main"
            state, where, seen = await advance(player, state, ("game_over",), 600)
            assert state["state_type"] == "game_over", f"no game over in 600 calls: {seen[-20:]}"
            over = await player.call("menu_select", {"option": "main_menu"})
            assert json.loads(over.text)["status"] == "ok"
            return where, player.calls, seen

    where, calls, seen = anyio.run(play)
    assert set(calls) <= MOD_TOOLS | {"wait_until_actionable"}
    assert "menu:character_select" in seen and "map" in seen and ("monster" in seen or "elite" in seen)
    rows = journal(where)  # the server closed with the client: the session is finalized
    assert rows[-1]["event"] == "session_end"
    stats = game_stats(rows)
    attempts = [r for r in rows if r["event"] == "action_attempt"]
    assert stats["posts"] == len(attempts) > 20, (stats, len(attempts))
    assert stats["posts_with_intent"] == stats["posts"] and not stats["intent_violations"], stats
    proposals = {r["proposal_id"]: r for r in rows if r["event"] == "proposal"}
    acted = [proposals[a["proposal_id"]] for a in attempts]
    assert all(p["source"] == "mcp-agent" and p["agent_tool"] in MOD_TOOLS for p in acted)
    assert all(
        p["agent_reason"].startswith("test player on ")
        for p in acted
        if p["agent_tool"] != "menu_select" or p.get("state_type") != "game_over"
    )
    assert any(p.get("run_outcome") for p in proposals.values())
    facts = CapturedSession(observation_reader(str(where.parent.parent)))
    for row in rows:
        facts.add(row)
    assert facts.facts()["runs"] == 1, facts.facts()
    # the viewer shows the agent's session like any other: its tool calls are proposals by mcp-agent
    out = tmp_path / "bundle"
    subprocess.run(
        [sys.executable, "-m", "supervisor", "view", "--bundle", str(out), str(where.parent.parent)],
        check=True,
        cwd=REPO,
        capture_output=True,
        timeout=60,
    )
    page = next(out.glob(f"data/*{where.name}_2f_page_2f_0.js")).read_text(encoding="utf-8")
    steps = json.loads(page[page.index(",{") + 1 : page.rindex(")")])["steps"]
    shown = [p for step in steps for p in step["proposals"]]
    assert {p["source"] for p in shown} == {"mcp-agent"}
    assert {"get_game_state", "menu_select"} <= {p["extra"]["agent_tool"] for p in shown}


def test_a_duplicate_is_refused_waiting_returns_the_right_state_and_bad_input_sends_nothing(tmp_path):
    """With the game's effects delayed by two reads, the same accepted action on the unchanged
    state is refused (not sent), and ``wait_until_actionable`` returns the next screen."""

    async def play() -> Path:
        async with connect(
            tmp_path, None, extra=("--game", "builtin", "--knob", "effect_delay_reads=3", "--poll-interval", "0.05")
        ) as agent:
            p = Player(agent)
            switched = await p.call("switch_profile", {"profile_id": 2, "reason": "a fresh profile"})
            answer = json.loads(switched.text)  # the mod server's own answer (its _wait_for_profile)
            assert (answer["status"], answer["message"], answer["current_profile_id"]) == (
                "ok",
                "Switched to profile 2",
                2,
            ), answer
            first = await p.call("menu_select", {"option": "singleplayer"})
            assert not first.is_error and json.loads(first.text) == {"status": "ok", "message": "Selected singleplayer"}
            again = await p.call("menu_select", {"option": "singleplayer", "reason": "once more"})
            assert again.is_error, again.text
            for words in (
                "duplicate-refused",
                "not sent",
                "menu_select",
                '"option": "singleplayer"',
                f"(attempt {first.evidence['attempt_id']})",
                "released by any read that differs",
                "wait_for_change",
            ):
                assert words in again.text, (words, again.text)
            start = time.monotonic()
            waited = await p.call("wait_until_actionable", {"timeout_seconds": 8})
            assert time.monotonic() - start < 8 and waited.evidence["actionable"] is True
            assert waited.json()["menu_screen"] == "singleplayer" and waited.evidence["reads"] >= 1
            timed = await p.call("wait_for_change", {"timeout_seconds": 0.3})
            assert timed.evidence["changed"] is False and timed.json()["menu_screen"] == "singleplayer"
            # bad input: refused by name, nothing sent
            for name, args, words in (
                ("map_choose_node", {"node_index": "0"}, "node_index must be an integer, got '0'"),
                ("map_choose_node", {}, "node_index is required"),
                ("combat_play_card", {"card_index": -1}, "card_index must be an integer >= 0"),
                ("menu_select", {"option": "standard", "sneaky": 1}, "unknown argument 'sneaky'"),
                ("get_game_state", {"format": "xml"}, "format must be one of 'markdown', 'json'"),
                ("switch_profile", {"profile_id": 4}, "profile_id must be 1, 2 or 3"),
                ("wait_until_actionable", {"timeout_seconds": -1}, "timeout_seconds must be a number"),
                ("mp_combat_end_turn", {}, "mp-refused"),
                ("no_such_tool", {}, "unknown-tool"),
            ):
                reply = await p.call(name, args)
                assert reply.is_error and words in reply.text, (name, reply.text)
            # an index the screen does not list: refused on the state the policy decides on, journalled
            state, _, _ = await advance(p, waited.json(), ("map", "event"), 40)
            assert state["state_type"] in ("map", "event"), json.dumps(state)[:600]
            name, param = (
                ("map_choose_node", "node_index")
                if state["state_type"] == "map"
                else ("event_choose_option", "option_index")
            )
            listed = state["map"]["next_options"] if state["state_type"] == "map" else state["event"]["options"]
            out = await p.call(name, {param: 99})
            assert (
                out.is_error
                and "invalid-argument" in out.text
                and f"{param} 99 is not on this" in out.text
                and ", ".join(str(o["index"]) for o in listed) in out.text
                and "nothing was sent" in out.text
            ), out.text
            markdown = await p.call("get_game_state")
            assert markdown.text.startswith("# ") and markdown.evidence["read"]["http_status"] == 200
            compendium = await p.call("get_compendium")
            assert json.loads(compendium.text)["profile_id"] == 2
            return session_dir(first)

    where = anyio.run(play)
    rows = journal(where)
    suppressed = [r for r in rows if r["event"] == "proposal" and r.get("guard")]
    assert len(suppressed) == 1 and suppressed[0]["agent_reason"] == "once more"
    status = {r["proposal_id"]: r["status"] for r in rows if r["event"] == "proposal_status"}
    assert status[suppressed[0]["proposal_id"]] == "suppressed"
    # a call that waits for one read has it at once (read_now); the waiting tools, and switch_profile
    # while it waits for the profile screen, read at the poll pace
    waits = [r for r in rows if r["event"] == "proposal" and status[r["proposal_id"]] == "wait"]
    now = {r.get("agent_tool") for r in waits if r.get("read_now")}
    paced = {r.get("agent_tool") for r in waits if not r.get("read_now")}
    assert {"get_game_state", "menu_select", "switch_profile"} <= now, now
    assert paced - {"switch_profile"} == {"wait_until_actionable", "wait_for_change"}, paced
    attempts = [r for r in rows if r["event"] == "action_attempt"]
    # the mod server's switch_profile: the first POST opens the profile screen, the second (sent
    # once the state shows it) switches; each with its own intent
    assert [(a["action"], a["parameters"]) for a in attempts][:4] == [
        ("profiles:switch", {"profile_id": 2}),
        ("profiles:switch", {"profile_id": 2}),
        ("menu_select", {"option": "singleplayer"}),
        ("menu_select", {"option": "standard"}),
    ]
    results = {r["attempt_id"]: r for r in rows if r["event"] == "action_result"}
    assert results[attempts[0]["attempt_id"]]["response"]["message"].startswith("Opened profile screen")
    between = [
        r
        for r in rows
        if attempts[0]["sequence"] < r["sequence"] < attempts[1]["sequence"] and r["event"] == "observation"
    ]
    assert any(r.get("state_type") == "menu" for r in between)
    refused = [r for r in rows if r["event"] == "proposal" and r.get("refused")]
    assert len(refused) == 1 and status[refused[0]["proposal_id"]] == "suppressed"
    stats = game_stats(rows)
    assert stats["posts"] == len(attempts) and stats["posts_with_intent"] == stats["posts"], stats
    reads = [r for r in rows if r["event"] == "agent_read"]
    assert [r["tool"] for r in reads if r["tool"] != "switch_profile"] == ["get_game_state", "get_compendium"]
    assert any(r["tool"] == "switch_profile" and r["path"] == "/api/v1/profiles" for r in reads)
    assert all(len(r["body"].encode()) == r["bytes"] for r in reads)


def test_joining_a_run_in_progress_is_said_once_and_rows_carry_the_run_identity(tmp_path):
    """The game is already inside a run when the agent connects (knob start_in_run): the first
    proposal says ``session_join`` (in_run, with the screen, act and floor), and proposals carry
    the run id the observer read from the compendium, as the built-in policy's do."""

    async def play() -> Path:
        async with connect(
            tmp_path, None, extra=("--game", "builtin", "--knob", "start_in_run=1", "--poll-interval", "0.05")
        ) as agent:
            p = Player(agent)
            first = await p.call("get_game_state", {"format": "json"})
            state = first.json()
            while state.get("menu_screen") in ("tutorial", "tutorial_prompt", "popup"):  # a fresh profile's
                await p.call("menu_select", {"option": candidates(state)[0][1]["option"]})
                state = (await p.call("wait_until_actionable", {"timeout_seconds": 10})).json()
            assert "run" in state, state
            for _ in range(3):
                await p.call("wait_for_change", {"timeout_seconds": 0.2})
            compendium = json.loads((await p.call("get_compendium")).text)
            assert compendium["current_run"]["run_id"]
            return session_dir(first), compendium["current_run"]["run_id"], state

    where, run_id, state = anyio.run(play)
    proposals = [r for r in journal(where) if r["event"] == "proposal"]
    joins = [r["session_join"] for r in proposals if r.get("session_join")]
    assert joins == [
        {
            "how": "in_run",
            "screen": state["state_type"],
            "act": state["run"]["act"],
            "floor": state["run"]["floor"],
            "run_id": joins[0]["run_id"],
        }
    ], joins
    assert proposals[-1]["run_id"] == run_id
