"""Whole runs: the scripted bot finishes seeds 1..5, screen coverage over a few seeds,
determinism per seed, and the standalone command line."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from .bot import Memory, decide, play
from .conftest import SP, http_client

REPO = Path(__file__).resolve().parents[2]

REQUIRED_SCREENS = {
    "menu:main", "menu:singleplayer", "menu:character_select", "menu:tutorial_prompt",
    "menu:tutorial", "menu:popup", "map", "monster", "elite", "boss",
    "hand_select:simple_select", "hand_select:upgrade_select", "card_select:transform",
    "card_select:upgrade", "card_select:select", "card_select:simple_select",
    "card_select:choose", "bundle_select", "relic_select", "crystal_sphere", "rewards",
    "card_reward", "shop", "rest_site", "treasure", "event", "event:dialogue",
    "fake_merchant", "game_over:victory", "game_over:defeat", "overlay", "unknown",
}


@pytest.mark.timeout(60)
@pytest.mark.parametrize("seed", [1, 2, 3, 4, 5])
def test_bot_finishes_a_run(make_server, seed):
    srv = make_server(seed)
    with http_client(srv.url) as c:
        result = play(c, style="smart", max_actions=400)
    assert result.outcome in ("victory", "defeat"), result
    assert result.actions < 400
    stats = srv.stats()
    assert stats["runs_started"] == 1
    assert stats["duplicate_guarded_actions"] == 0


@pytest.mark.timeout(90)
def test_screen_coverage_over_a_few_seeds(make_server):
    mem = Memory(style="explore")
    seen: set[str] = set()
    for seed in range(1, 8):
        srv = make_server(seed)
        with http_client(srv.url) as c:
            result = play(c, mem=mem, max_actions=400)
        assert result.outcome is not None, (seed, result)
        seen |= set(srv.stats()["screens_seen"])
    print("\nscreen coverage over seeds 1..7:")
    for name in sorted(REQUIRED_SCREENS | seen):
        print(f"  {'x' if name in seen else ' '} {name}")
    assert REQUIRED_SCREENS <= seen, sorted(REQUIRED_SCREENS - seen)


def trace(make_server, seed: int) -> list[dict]:
    srv = make_server(seed)
    states = []
    mem = Memory(style="smart")
    with http_client(srv.url) as c:
        for _ in range(150):
            state = c.get(SP).json()
            states.append(state)
            if state["state_type"] == "game_over":
                break
            body = decide(state, mem)
            if body is not None:
                c.post(SP, json=body)
    return states


@pytest.mark.timeout(60)
def test_same_seed_same_actions_same_states(make_server):
    first, second = trace(make_server, 4), trace(make_server, 4)
    assert first == second
    other = trace(make_server, 5)
    assert other != first


@pytest.mark.timeout(30)
def test_standalone_command_line_serves_until_sigterm():
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    env.pop("GAMERIG_CONTROL", None)
    proc = subprocess.Popen(
        [sys.executable, "-c", "import sys; from actors.game.cli import main; "
         "sys.exit(main(['--port', '0', '--seed', '3', '--waiting-reads', '1']))"],
        stdout=subprocess.PIPE, text=True, cwd=REPO, env=env)
    try:
        line = proc.stdout.readline()
        assert "gamerig built-in game on http://127.0.0.1:" in line, line
        url = line.split(" on ")[1].split()[0]
        with http_client(url) as c:
            assert c.get("/").json()["status"] == "ok"
            assert c.get("/__gamerig/stats").json()["seed"] == 3
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=10) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_command_line_rejects_bad_knob(capsys):
    from actors.game.cli import main
    with pytest.raises(SystemExit):
        main(["--waiting-reads", "x"])
    assert main(["--port", "0", "--enemy-turn-reads", "-1"]) == 2
    assert "must be >= 0" in capsys.readouterr().err
