"""The quick variant of the conformance campaign (``bench/conformance.py``; the full campaign
and its last figures are in docs/game.md, "Conformance campaign").

Two whole-pipeline sessions at once (real ``supervisor start`` processes: recorder, observer,
policy, actuator, the built-in game over real HTTP) with the hostile knobs on, one act per run,
one starting on the main menu and one on a main menu with a saved run, each ending when its run
ends. (A session joining a run in progress is tests/policy/test_play_sessions.py's.) The
command itself judges each session from its evidence (capture verify, the game's counters,
the exit reason); this test runs that documented command and checks its report.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from tests.harness import REPO

pytestmark = pytest.mark.timeout(300)

# Screens every run of every start mode passes through, and the actions they need.
CORE_VARIANTS = {
    "menu__main",
    "menu__main_saved_run",
    "menu__singleplayer",
    "menu__character_select",
    "menu__tutorial_prompt",
    "unknown__no_run_state",
    "event__ancient_dialogue",
    "map__start",
    "map",
    "monster",
    "monster__combat_ended",
    "rewards",
    "card_reward",
    "boss",
    "game_over",
}
CORE_ACTIONS = {
    "menu_select",
    "advance_dialogue",
    "choose_event_option",
    "choose_map_node",
    "play_card",
    "end_turn",
    "claim_reward",
    "proceed",
}


def test_quick_campaign_plays_whole_runs_with_no_violation(tmp_path):
    cmd = [
        sys.executable,
        os.path.join(REPO, "bench", "conformance.py"),
        "--seeds",
        "2",
        "--max-steps",
        "2500",
        "--jobs",
        "2",
        "--timeout",
        "240",
        "--stop-on-run-end",
        "--set",
        "game.knobs.acts=1",
        "--set",
        "game.knobs.replace_run_after_actions=0",
        "--no-expect",
        "--json",
        "--keep",
        str(tmp_path),
    ]
    proc = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True, timeout=290)
    report = json.loads(proc.stdout)
    sessions = report["sessions"]
    assert [s["mode"] for s in sessions] == ["main_menu", "saved_run"]
    for s in sessions:
        assert s["violations"] == [], (s["seed"], s["violations"])
        assert s["reason"] == "run_ended" and s["runs_ended"] == 1
        assert s["duplicates"] == 0 and s["intent_violations"] == 0
        assert s["posts"] == s["attempts"] > 0
    assert proc.returncode == 0, proc.stderr[-2000:]
    seen = set(report["coverage"]["variants"])
    assert seen >= CORE_VARIANTS, f"never reached: {sorted(CORE_VARIANTS - seen)}"
    sent = {a for a, c in report["coverage"]["actions"].items() if c.get("accepted")}
    assert sent >= CORE_ACTIONS, f"never accepted: {sorted(CORE_ACTIONS - sent)}"
    assert report["coverage"]["totals"]["stalls"] == 0
