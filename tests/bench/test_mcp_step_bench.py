"""The quick variant of ``bench/mcp_step.py`` (the full run is a documented command,
docs/performance.md): a few calls through ``supervisor mcp --game sts2`` against the built-in game
and the same calls straight to it; the figures are numbers in their order, the calls really went
through the pipeline (the session's journal has their rows), and importing the module starts
nothing."""

from __future__ import annotations

import glob
import json
import math
import os
import subprocess
import sys

import pytest

from tests.harness import REPO

sys.path.insert(0, os.path.join(REPO, "bench"))  # bench/ is not a package
import mcp_step

pytestmark = pytest.mark.timeout(120)

READS, ACTIONS, FLOOR = 3, 4, 3


def sane(fig: dict, n: int) -> None:
    assert fig["n"] == n, fig
    assert 0 < fig["median_ms"] <= fig["p90_ms"] < 30_000, fig


def test_a_few_calls_through_supervisor_mcp_and_straight_to_the_game(tmp_path):
    fig = mcp_step.measure(READS, ACTIONS, idle_s=0.5, n_floor=FLOOR, workdir=str(tmp_path))
    for path in ("mcp", "relay"):
        sane(fig[path]["read"], READS)
        sane(fig[path]["read_json"], ACTIONS)
        sane(fig[path]["action"], ACTIONS)
    sane(fig["mcp"]["refused"], FLOOR)
    idle = fig["idle_cpu"]
    assert idle["processes"] >= 5 and math.isfinite(idle["percent_of_a_core"]) and idle["cpu_s"] >= 0, idle
    assert {"-m supervisor mcp", "-m actors.observer", "-m actors.recorder"} <= set(idle["by_process"]), idle
    assert fig["first_call_ms"] > 0 and set(fig["met"]) == {"read", "action"}
    text = mcp_step.report(fig)
    assert "get_game_state (markdown)" in text and "idle CPU over 0.5 s" in text
    # every call was a pipeline step: its rows are in the session's journal
    [journal] = glob.glob(str(tmp_path / "workspace" / "artifacts" / "sts2" / "sessions" / "*" / "events.jsonl"))
    with open(journal, encoding="utf-8") as fh:
        rows = [json.loads(line) for line in fh]
    tools = [r.get("agent_tool") for r in rows if r["event"] == "proposal"]
    assert tools.count("get_game_state") == 1 + READS + ACTIONS, tools  # the first call starts the session
    attempts = [r for r in rows if r["event"] == "action_attempt"]
    assert len(attempts) == ACTIONS and len([r for r in rows if r["event"] == "action_result"]) == ACTIONS
    assert len([r for r in rows if r["event"] == "agent_read"]) == READS  # the markdown renderings


def test_importing_the_bench_starts_nothing():
    code = (
        "import sys, psutil; sys.path.insert(0, 'bench'); import mcp_step; "
        "assert callable(mcp_step.measure); print(len(psutil.Process().children()))"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=60)
    assert out.returncode == 0 and out.stdout.strip() == "0", out.stderr[-2000:]
