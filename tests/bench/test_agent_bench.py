"""``bench/agent.py``'s quick variant, as its users run it: 40 model decisions of the agent
policy against the stand-in, then the heuristic for as many steps (one pair, no rounds). Its
parts must work and print sane figures; the speed goal itself is the bench's to print, not
this test's to assert. The figures are checked against the kept journal, counted by this test
from its own rows."""

from __future__ import annotations

import glob
import json
import os
import shutil
import statistics
import subprocess
import sys

import pytest

from tests.harness import REPO

pytestmark = pytest.mark.timeout(90)

DECISIONS = 40


def rows_of(path: str) -> list[dict]:
    with open(path, encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def test_the_quick_variant_prints_the_agent_s_time_beside_the_model_s_and_its_memory(tmp_path):
    out = tmp_path / "figures.json"
    r = subprocess.run(
        [
            sys.executable,
            "bench/agent.py",
            "--decisions",
            str(DECISIONS),
            "--rounds",
            "0",
            "--no-mcp",
            "--keep",
            "--json",
            str(out),
        ],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=85,
    )
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    fig = json.loads(out.read_text())
    try:
        check(fig, r.stdout)
    finally:
        shutil.rmtree(fig["workdir"], ignore_errors=True)


def check(fig: dict, stdout: str) -> None:
    for line in (
        "model: client-measured answer time",
        "pipeline's own: step - model",
        "Verdict: the agent adds",
        "The heuristic (policy.module: sts2",
        "policy ",
        "model_client ",
    ):
        assert line in stdout, (line, stdout[-3000:])

    # the agent's journal: the session ran past the decisions asked for and was stopped on request
    [journal] = glob.glob(os.path.join(fig["workdir"], "long-agent", "capture", "sessions", "*", "events.jsonl"))
    rows = rows_of(journal)
    assert rows[-1]["event"] == "session_end" and rows[-1]["reason"] == "stop_command", rows[-1]
    asked = [p for p in rows if p["event"] == "proposal" and (p.get("agent") or {}).get("attempts")][:DECISIONS]
    assert len(asked) == DECISIONS
    a = fig["agent"]
    assert a["decisions"] == DECISIONS and sum(a["outcomes"].values()) == DECISIONS
    # the model's time: the evidence's own wall_ms, summed per decision (the stand-in answers
    # every question legally, so each decision's calls are all answered)
    walls = [sum(e["usage"]["wall_ms"] for e in p["model_evidence"]) for p in asked]
    assert a["figures"]["model"]["n"] == DECISIONS
    assert a["figures"]["model"]["median"] == pytest.approx(statistics.median_low(walls), abs=1e-9)
    extra = [p["decide_ms"] - w for p, w in zip(asked, walls)]
    assert a["figures"]["policy_extra"]["median"] == pytest.approx(statistics.median_low(extra), abs=1e-9)
    f = a["figures"]
    assert 0 < f["http"]["median"] <= f["model"]["median"] <= f["decide"]["median"] < f["step"]["median"]
    assert f["own"]["n"] == a["executed"] >= DECISIONS - 2  # a stop may land before the last one's result
    assert f["row_bytes"]["median"] > 1000  # a decision's row carries its evidence
    assert a["standin_cpu_ms"] > 0 and a["other_steps"]["n"] > 0

    # the agent's own work, timed on the screens of the decisions measured
    for name, part in fig["parts"].items():
        assert part["n"] == DECISIONS and 0 < part["median"] <= part["p90"] < 100_000, (name, part)
    assert "per decision, the question and its hash counted twice" in stdout

    # the heuristic right after, as many steps as the agent took; the pair sets each decision
    # against the heuristic's median step on the same screen
    [base_journal] = glob.glob(
        os.path.join(fig["workdir"], "long-heuristic", "capture", "sessions", "*", "events.jsonl")
    )
    base_rows = rows_of(base_journal)
    assert not [p for p in base_rows if p["event"] == "proposal" and p.get("model_evidence")]
    assert fig["baseline"]["step"]["n"] >= a["steps"] - 5 > 0
    [pair] = fig["pairs"]
    assert pair["name"] == "long" and 0 < pair["matched"] <= a["executed"]
    assert pair["own_ms"] == f["own"]["median"]
    v = fig["verdict"]
    assert v["added_ms"] == pair["added_ms"] and v["met"] == (v["added_ms"] <= 5.0)

    # memory: every actor of the session and the stand-in sampled; a slope needs 1,000 decisions
    mem = fig["memory"]
    assert {"policy", "model_client", "recorder", "observer", "actuator", "game", "standin"} <= set(mem), mem
    for name in ("policy", "model_client"):
        assert 10 < mem[name]["last_mib"] <= mem[name]["peak_mib"] < 500, mem[name]
        assert mem[name]["slope_kib_per_1000"] is None and mem[name]["flat"] is None
    cpu = fig["cpu_ms_per_step"]["agent"]  # (the 30-step baseline ends between two samples)
    assert cpu["model_client"] > 0 and cpu["policy"] > 0
