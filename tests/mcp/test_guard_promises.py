"""The repeat guard of ``supervisor mcp --game builtin``, driven by the official MCP SDK's stdio
client against the real built-in game, whose accepted actions never show their effect here
(knob ``effect_delay_reads`` far beyond the test): the screen stays the same throughout.

On that unchanged screen the guard

* sends the same action with other arguments (a POST the game counts),
* refuses the same action with the same arguments (nothing sent), and
* releases it after its lapse: the lapse is read from the refusal's own journal row
  (``guard.lapses_after``: reads and seconds, the policy's ``no_effect_reads`` and
  ``no_effect_seconds``), and the test reads the game (``wait_for_change``) and asks again until
  the action goes out, under a deadline. The release must not come before the lapse either:
  the row that carries ``released_no_effect`` says how many reads and seconds it waited.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import anyio
import pytest

from tests.mcp.agent import GameReply, connect, journal

pytestmark = pytest.mark.timeout(150)

NEVER = "effect_delay_reads=1000000"  # accepted actions show no effect while the test runs
DEADLINE_S = 30.0  # beyond the lapse: the release must have come by then


def rows_so_far(where: Path) -> list[dict]:
    """The journal's complete rows while the session runs."""
    with open(where / "events.jsonl", "rb") as fh:
        return [json.loads(line) for line in fh if line.endswith(b"\n")]


def test_same_action_other_arguments_is_sent_the_same_is_refused_until_its_lapse(tmp_path):
    async def play() -> tuple[Path, list[tuple[str, bool]], float]:
        async with connect(
            tmp_path, None, extra=("--game", "builtin", "--knob", NEVER, "--poll-interval", "0.05")
        ) as agent:
            calls: list[tuple[str, bool]] = []

            async def call(name: str, args: dict) -> GameReply:
                reply = GameReply(await agent.session.call_tool(name, args))
                calls.append((args.get("option", name), reply.is_error))
                return reply

            first = await call("menu_select", {"option": "singleplayer"})
            assert not first.is_error and first.evidence["outcome"] == "accepted", first.text
            where = Path(first.evidence["session_dir"])
            again = await call("menu_select", {"option": "singleplayer"})
            assert again.is_error and "duplicate-refused" in again.text and "not sent" in again.text, again.text
            other = await call("menu_select", {"option": "settings"})
            assert not other.is_error and other.evidence["outcome"] == "accepted", other.text
            assert other.evidence["attempt_id"] != first.evidence["attempt_id"]
            accepted_at = time.monotonic()
            refused = await call("menu_select", {"option": "settings"})
            assert refused.is_error and "duplicate-refused" in refused.text, refused.text
            guard = [r for r in rows_so_far(where) if r["event"] == "proposal" and r.get("guard")][-1]["guard"]
            assert guard["pending_parameters"] == {"option": "settings"}
            assert guard["attempt_id"] == other.evidence["attempt_id"]
            lapse = guard["lapses_after"]
            assert lapse["reads"] >= 1 and lapse["seconds"] > 0, lapse
            # read the unchanged game and ask again, until the guard lets the action go
            while True:
                waited = await call("wait_for_change", {"timeout_seconds": 0.5})
                assert waited.evidence["changed"] is False, waited.text  # the screen never changed
                retry = await call("menu_select", {"option": "settings"})
                if not retry.is_error:
                    break
                assert "duplicate-refused" in retry.text, retry.text
                assert time.monotonic() - accepted_at < lapse["seconds"] + DEADLINE_S, (
                    f"the guard did not lapse within {DEADLINE_S} s after its {lapse}"
                )
            assert retry.evidence["outcome"] == "accepted", retry.text
            return where, calls, lapse

    where, calls, lapse = anyio.run(play)
    rows = journal(where)  # the server closed with the client: the session is finalized
    proposals = [r for r in rows if r["event"] == "proposal" and r.get("agent_tool") == "menu_select"]
    # one screen throughout: every menu_select was decided on the same state
    assert len({p["state_digest"] for p in proposals}) == 1, [p["state_digest"] for p in proposals]
    attempts = [(a["action"], a["parameters"]) for a in rows if a["event"] == "action_attempt"]
    assert attempts == [
        ("menu_select", {"option": "singleplayer"}),
        ("menu_select", {"option": "settings"}),
        ("menu_select", {"option": "settings"}),
    ], attempts
    stats = [r for r in rows if r["event"] == "builtin_game_stats"][-1]["stats"]
    assert stats["posts"] == 3 and stats["posts_with_intent"] == 3, stats  # what reached the game
    status = {r["proposal_id"]: r["status"] for r in rows if r["event"] == "proposal_status"}
    guarded = [p for p in proposals if p.get("guard")]
    assert [p["parameters"]["option"] for p in guarded][:2] == ["singleplayer", "settings"]
    assert all(status[p["proposal_id"]] == "suppressed" for p in guarded)
    released = [p for p in proposals if p.get("released_no_effect")]
    assert len(released) == 1 and released[0] is proposals[-1], [p.get("released_no_effect") for p in proposals]
    info = released[0]["released_no_effect"]
    assert info["action"] == "menu_select" and info["parameters"] == {"option": "settings"}, info
    assert info["reads"] >= lapse["reads"] and info["seconds"] >= lapse["seconds"], (info, lapse)
    assert sum(1 for c in calls if c == ("settings", True)) == len(guarded) - 1 >= 2  # refused while it waited
