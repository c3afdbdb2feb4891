"""Runs and wins from journal rows (``supervisor.capture.facts``), as the fleet's results and
the viewer count them."""

from __future__ import annotations

from supervisor.capture.facts import CapturedSession


def obs(n: int, state_type: str) -> dict:
    return {
        "event": "observation",
        "step": n,
        "state_type": state_type,
        "observation_id": f"o-{n:06d}",
        "path": f"o{n}",
    }


def test_a_run_ends_on_its_game_over_screen_once_whatever_the_policy():
    screens = {
        "o3": {"player": {"hp": 0}, "run": {"floor": 6, "act": 1}},
        "o9": {"player": {"hp": 12}, "run": {"floor": 17, "act": 2}},
    }
    facts = CapturedSession(read_state=lambda row: screens.get(row["path"]))
    for row in [
        obs(1, "map"),
        obs(2, "monster"),
        obs(3, "game_over"),
        obs(4, "game_over"),
        {"event": "proposal", "run_outcome": {"outcome": "defeat", "inferred_from": "player.hp"}},
        obs(5, "menu"),
        obs(6, "game_over"),  # a popup's menu does not start a run
        obs(7, "map"),
        obs(8, "elite"),
        obs(9, "game_over"),
    ]:
        facts.add(row)
    got = facts.facts()
    assert (got["runs"], got["wins"], got["runs_inferred"]) == (2, 1, 2)
    assert [(r["outcome"], r["floor"], r["step"]) for r in facts.runs] == [("defeat", 6, 3), ("victory", 17, 9)]


def test_an_unreadable_screen_takes_the_policys_outcome_and_an_emulator_stop_counts():
    facts = CapturedSession(read_state=lambda row: None)
    facts.add(obs(1, "game_over"))
    facts.add({"event": "proposal", "run_outcome": {"outcome": "victory"}})
    assert [r["outcome"] for r in facts.runs] == ["victory"]
    emu = CapturedSession()
    emu.add(obs(1, "pyboy"))
    emu.add({"event": "proposal", "action": None, "run_outcome": "won"})
    assert emu.facts()["runs"] == 1 and emu.facts()["wins"] == 1 and emu.facts()["runs_inferred"] == 0
