"""Crash isolation under an agent playing through ``supervisor mcp --game builtin``: each actor
killed (SIGKILL) while a tool call is in flight gives the agent an answer or a clear error, never
a duplicate POST, and the next call works; a killed MCP server leaves no actor behind, and the
next server removes its private directory."""

from __future__ import annotations

import json
import os
import signal
import tempfile
import time
from pathlib import Path

import anyio
import psutil
import pytest

from tests.mcp.agent import GameReply, connect, journal
from tests.mcp.sts2_player import candidates
from tests.mcp.test_game import game_stats

pytestmark = pytest.mark.timeout(150)
CODE = ("outcome-unknown", "no-session", "timeout", "not-recorded", "duplicate-refused")


def actor_pid(rows: list[dict], actor: str) -> int:
    return [r for r in rows if r["event"] == "actor_start" and r.get("actor") == actor][-1]["pid"]


async def wait_rows(where: Path, condition, what: str, seconds: float = 20) -> list[dict]:
    deadline = time.monotonic() + seconds
    while True:
        rows = journal(where)
        if condition(rows):
            return rows
        assert time.monotonic() < deadline, f"no {what} within {seconds}s"
        await anyio.sleep(0.05)


def test_each_actor_killed_mid_call_gives_an_answer_or_a_clear_error_and_never_a_second_post(tmp_path):
    async def play() -> tuple[Path, list[tuple[str, str]]]:
        async with connect(tmp_path, None, extra=("--game", "builtin", "--poll-interval", "0.05")) as agent:

            async def call(name, args=None) -> GameReply:
                return GameReply(await agent.session.call_tool(name, args or {}))

            first = await call("get_game_state", {"format": "json"})
            where = Path(first.evidence["session_dir"])
            state, answers = first.json(), []
            for actor in ("recorder", "observer", "actuator", "policy"):
                name, args = candidates(state)[0]
                pid = actor_pid(journal(where), actor)
                out: list[GameReply] = []

                async def act():
                    out.append(await call(name, args))

                async with anyio.create_task_group() as tg:
                    tg.start_soon(act)
                    await anyio.sleep(0.05)  # the call is in flight: its fresh read, proposal or POST
                    os.kill(pid, signal.SIGKILL)
                reply = out[0]
                if reply.is_error:
                    assert reply.text.split(":", 1)[0] in CODE, (actor, reply.text)
                answers.append((actor, reply.text[:200]))
                await wait_rows(
                    where,
                    lambda rows: any(
                        r["event"] == "actor_start" and r.get("actor") == actor and r["pid"] != pid for r in rows
                    ),
                    f"restarted {actor}",
                )
                waited = await call("wait_until_actionable", {"timeout_seconds": 20})
                assert not waited.is_error, (actor, waited.text)
                state = waited.json()
                name, args = candidates(state)[0]
                after = await call(name, args)  # the next call works
                assert not after.is_error, (actor, after.text)
                state = (await call("wait_until_actionable", {"timeout_seconds": 20})).json()
            return where, answers

    where, answers = anyio.run(play)
    rows = journal(where)
    exits = {r["actor"] for r in rows if r["event"] == "actor_exit" and r.get("signal") == "SIGKILL"}
    assert exits >= {"recorder", "observer", "actuator", "policy"}, exits
    stats = game_stats(rows)
    assert stats["posts_with_intent"] == stats["posts"] and not stats["intent_violations"], stats
    attempts = [r["attempt_id"] for r in rows if r["event"] == "action_attempt"]
    results = [r["attempt_id"] for r in rows if r["event"] == "action_result"]
    assert len(set(attempts)) == len(attempts) and len(set(results)) == len(results)
    assert stats["posts"] <= len(attempts), (stats, len(attempts))


def test_a_killed_server_leaves_no_actor_and_its_private_directory_goes_at_the_next_start(tmp_path):
    seen: dict = {}

    async def first_server() -> None:
        async with connect(tmp_path, None, extra=("--game", "builtin")) as agent:
            reply = GameReply(await agent.session.call_tool("get_game_state", {"format": "json"}))
            where = Path(reply.evidence["session_dir"])
            server = next(
                p for p in psutil.Process().children(recursive=True) if "mcp" in p.cmdline() and "--game" in p.cmdline()
            )
            private = [
                d
                for d in Path(tempfile.gettempdir()).glob("gamerig-mcp-*")
                if (d / "owner.pid").is_file() and (d / "owner.pid").read_text() == str(server.pid)
            ]
            assert len(private) == 1
            actors = [r["pid"] for r in journal(where) if r["event"] == "actor_start"]
            supervisor = [p.pid for p in server.children() if "start" in p.cmdline()]
            seen.update(private=private[0], pids=actors + supervisor, where=where)
            server.kill()

    try:
        anyio.run(first_server)
    except Exception:  # the client sees its server die on the way out; what it saw before is kept
        if not seen:
            raise
    private, pids, where = seen["private"], seen["pids"], seen["where"]
    deadline = time.monotonic() + 30
    while any(psutil.pid_exists(p) and psutil.Process(p).status() != psutil.STATUS_ZOMBIE for p in pids):
        assert time.monotonic() < deadline, [p for p in pids if psutil.pid_exists(p)]
        time.sleep(0.1)
    assert private.exists()  # nothing cleaned it yet: the server was killed
    rows = journal(where)
    assert rows[-1]["event"] == "session_end" and "mcp_server_gone" in json.dumps(rows[-3:])

    async def second_server() -> None:
        async with connect(tmp_path, None, extra=("--game", "builtin")) as agent:
            reply = GameReply(await agent.session.call_tool("list_profiles", {}))
            assert not reply.is_error, reply.text

    anyio.run(second_server)
    assert not private.exists()
