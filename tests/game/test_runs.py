"""Whole runs: the scripted bot finishes two-act runs, a one-act run ends at its boss, a
passive bot loses, every in-run screen variant is reached over a few seeds, determinism
per seed, and the standalone command line."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from actors.game.knobs import Knobs
from actors.game.model import Card
from actors.game.screens.rooms import build_room

from .bot import Memory, decide, play
from .conftest import SP, arrange, get, http_client, new_run, ok

REPO = Path(__file__).resolve().parents[2]

# every in-run screen and variant of the vendor samples the built-in game can show
# (menus, popups and tutorials: test_menu.py / test_popups.py)
REQUIRED_VARIANTS = {
    "map",
    "map__start",
    "monster",
    "monster__combat_ended",
    "elite",
    "elite__combat_ended",
    "boss",
    "boss__combat_ended",
    "hand_select",
    "hand_select__selected",
    "card_select__transform",
    "card_select__upgrade",
    "card_select__select",
    "card_select__simple_select",
    "card_select__choose",
    "bundle_select",
    "relic_select",
    "crystal_sphere",
    "crystal_sphere__done",
    "rewards",
    "card_reward",
    "shop",
    "shop__not_ready",
    "rest_site",
    "rest_site__used",
    "treasure",
    "treasure__loading",
    "treasure__opening",
    "treasure__claimed",
    "event",
    "event__ancient_dialogue",
    "fake_merchant",
    "fake_merchant__not_ready",
    "fake_merchant__fight_started",
    "overlay",
    "game_over",
}


@pytest.mark.timeout(60)
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_bot_finishes_a_two_act_run(make_server, seed):
    """Knob ``acts`` (default 2): the act-1 boss leads to rewards and act 2, whose boss
    ends the run."""
    srv = make_server(seed)
    with http_client(srv.url) as c:
        result = play(c, style="smart", max_actions=800)
    assert result.outcome in ("victory", "defeat"), result
    assert result.errors == []
    stats = srv.stats()
    assert stats["runs_started"] == 1
    assert stats["duplicate_guarded_actions"] == 0
    if result.outcome == "victory":
        assert result.acts == 2


@pytest.mark.timeout(60)
def test_one_act_run_ends_at_its_boss(make_server):
    srv = make_server(2, Knobs(acts=1))
    with http_client(srv.url) as c:
        result = play(c, style="smart", max_actions=600)
    assert result.outcome == "victory" and result.acts == 1, result
    assert "boss__combat_ended" in result.variants and "overlay" in result.variants


def test_acts_knob_needs_one_act():
    with pytest.raises(ValueError, match="'acts' must be >= 1, got 0"):
        Knobs.from_mapping({"acts": 0})
    assert Knobs().acts == 2


@pytest.mark.timeout(60)
def test_passive_bot_is_defeated(make_server):
    srv = make_server(3)
    with http_client(srv.url) as c:
        result = play(c, style="passive", max_actions=600)
    assert result.outcome == "defeat", result


@pytest.mark.timeout(120)
def test_screen_coverage_over_a_few_seeds(make_server):
    mem = Memory(style="explore")
    seen: set[str] = set()
    for seed in range(1, 9):
        srv = make_server(seed)
        with http_client(srv.url) as c:
            result = play(c, mem=mem, max_actions=800)
        assert result.outcome is not None and result.errors == [], (seed, result)
        seen |= result.variants
    print("\nscreen coverage over seeds 1..8:")
    for name in sorted(REQUIRED_VARIANTS | seen):
        print(f"  {'x' if name in seen else ' '} {name}")
    assert seen >= REQUIRED_VARIANTS, sorted(REQUIRED_VARIANTS - seen)


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
        [
            sys.executable,
            "-c",
            "import sys; from actors.game.cli import main; "
            "sys.exit(main(['--port', '0', '--seed', '3', '--waiting-reads', '1']))",
        ],
        stdout=subprocess.PIPE,
        text=True,
        cwd=REPO,
        env=env,
    )
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


@pytest.mark.timeout(30)
def test_act_one_boss_leads_to_rewards_then_act_two(make_server):
    """BuildGameState: the boss room ends (combat ended), its rewards, then act 2
    (``run.act`` 2, a new map with its own boss, the act's ancient first)."""
    srv = make_server(1)
    with http_client(srv.url) as c:
        new_run(c)

        def boss(game):
            build_room(game, "Boss")
            for e in game.run.combat.enemies:
                e.hp = 1
            game.run.combat.hand = [Card(900, "CLEAVE")]

        arrange(srv, boss)
        assert get(c)["state_type"] == "boss"
        state = ok(c, action="play_card", card_index=0)
        assert state["state_type"] == "boss" and "battle" not in state
        state = get(c)
        assert state["state_type"] == "rewards"
        state = ok(c, action="proceed")
        assert state["run"]["act"] == 2 and state["event"]["event_id"] == "TIDE_WARDEN"
        arrange(srv, lambda g: setattr(g.run, "map_open", True))
        m = get(c)["map"]
        assert m["boss"]["id"] == "WARDEN" and "current_position" not in m and m["visited"] == []
