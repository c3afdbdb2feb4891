"""Scores and paired comparison: each Slay the Spire 2 session's score is what its observation
files show (counted here by a second implementation that reads the files), and ``fleet report
--compare`` pairs two arms by seed, with the paired tests computed again here from the rows;
where runs cannot be paired it says why and gives the unpaired tests."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from fractions import Fraction

import pytest

from supervisor.fleet import compare
from tests.harness import REPO

from .model_fleet import MODELS, journal_rows, model_fleet, results


@pytest.fixture(scope="module")
def fleet(tmp_path_factory) -> dict:
    return model_fleet(tmp_path_factory)  # read only


def score_from_files(root: str, session_dir: str) -> dict:
    """A session's last run's progress, read from its observation files: the highest floor,
    elite and boss screens followed by rewards or the map, the last HP shown."""
    capture = os.path.dirname(os.path.dirname(os.path.join(root, session_dir)))
    floor = hp = None
    fight, elites, bosses = None, 0, 0
    for row in journal_rows(os.path.join(root, session_dir)):
        if row["event"] != "observation":
            continue
        with open(os.path.join(capture, row["path"]), encoding="utf-8") as fh:
            state = json.load(fh)
        if state.get("state_type") == "menu":
            continue
        run, player = state.get("run") or {}, state.get("player") or {}
        if isinstance(run.get("floor"), int):
            floor = run["floor"] if floor is None else max(floor, run["floor"])
        hp = player.get("hp", hp)
        kind = state["state_type"]
        if kind in ("elite", "boss"):
            fight = kind
        elif kind == "monster":
            fight = None
        elif kind in ("rewards", "card_reward", "map", "event", "rest_site", "shop", "treasure") and fight:
            elites, bosses = elites + (fight == "elite"), bosses + (fight == "boss")
            fight = None
    return {
        "floor": floor,
        "elites": elites,
        "bosses": bosses,
        "hp_end": hp,
        "progress_score": 0.5 * min(floor, 50) / 50 + 0.5 * min(bosses, 3) / 3,
    }


def test_each_sessions_score_is_what_its_observation_files_show(fleet):
    rows = results(fleet["root"])
    assert rows and all(r["seeded_by"] == "game.seed" for r in rows)
    for r in rows:
        want = score_from_files(fleet["root"], r["session_dir"])
        got = {k: r[k] for k in want}
        assert got["progress_score"] == pytest.approx(want.pop("progress_score"), abs=1e-6)
        assert {k: got[k] for k in want} == want, r["session_dir"]
        assert r["scored_runs"] in ("ended", "unfinished") and 0 <= r["progress_score"] <= 1


def _mcnemar(b: int, c: int) -> float:  # a second implementation: both tails as fractions
    n = b + c
    ways = sum(math.comb(n, i) for i in range(n + 1) if i <= min(b, c) or i >= max(b, c))
    return float(min(Fraction(1), Fraction(ways, 2**n)))


def test_report_compare_pairs_the_two_models_by_seed_and_character(fleet):
    out = subprocess.run(
        [sys.executable, "-m", "supervisor", "fleet", "report", fleet["root"], "--compare", "model.model", "--json"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert out.returncode == 0, out.stderr
    got = json.loads(out.stdout)["compare"]
    rows = results(fleet["root"])
    assert (got["a"], got["b"], got["paired"], got["why_unpaired"]) == (MODELS[0], MODELS[1], True, None)
    by = {(r["model.model"], r["policy.settings.character"]): r for r in rows}
    pairs = [(by[(MODELS[0], ch)], by[(MODELS[1], ch)]) for _, ch in by if _ == MODELS[0]]
    assert got["pairs"] == len(pairs) == 2
    b = sum(1 for x, y in pairs if x["wins"] and not y["wins"])
    c = sum(1 for x, y in pairs if y["wins"] and not x["wins"])
    wins = got["paired_tests"]["wins"]
    assert (wins["a_only"], wins["b_only"]) == (b, c)
    assert wins["p"] == (None if b + c == 0 else pytest.approx(_mcnemar(b, c)))
    score = next(m for m in got["paired_tests"]["metrics"] if m["column"] == "progress_score")
    diffs = [x["progress_score"] - y["progress_score"] for x, y in pairs]
    assert score["mean_difference"] == pytest.approx(sum(diffs) / 2)
    text = subprocess.run(
        [sys.executable, "-m", "supervisor", "fleet", "report", fleet["root"], "--compare", "model.model"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert "paired by seed: 2 pairs" in text.stdout and "exact McNemar test" in text.stdout


def row(arm: str, seed, wins: int, score: float, seeded_by="game.seed", repeat: int = 0) -> dict:
    return {
        "index": 0,
        "policy.module": arm,
        "game.seed": seed,
        "repeat": repeat,
        "runs": 1,
        "wins": wins,
        "progress_score": score,
        "floor": int(score * 100),
        "seeded_by": seeded_by,
        "session_id": f"{arm}-{seed}",
    }


def test_arms_that_cannot_be_paired_say_why_and_get_the_unpaired_tests():
    keys = ["policy.module", "game.seed"]
    seeded = [row("a", s, s % 2, 0.1 * s) for s in range(1, 7)] + [row("b", s, 0, 0.05 * s) for s in range(1, 7)]
    got = compare.compare(seeded, "policy.module", "a", "b", keys)
    assert got["paired"] and got["pairs"] == 6
    diffs = [0.05 * s for s in range(1, 7)]  # every pair favours a: the exact signed-rank p is 2 / 2^6
    score = got["paired_tests"]["metrics"][0]
    assert score["p"] == pytest.approx(2 / 64) and score["method"] == "exact"
    assert score["mean_difference"] == pytest.approx(sum(diffs) / 6)

    real_game = seeded[:6] + [row("b", s, 0, 0.05 * s, seeded_by=None) for s in range(1, 7)]
    got = compare.compare(real_game, "policy.module", "a", "b", keys)
    assert not got["paired"] and "did not start from a known seed" in got["why_unpaired"]
    assert got["paired_tests"] is None and got["unpaired_tests"]["wins"]["test"] == "Fisher's exact test"
    assert got["unpaired_tests"]["metrics"][0]["test"] == "Welch's t-test"

    unequal = seeded[:6] + [row("b", s, 0, 0.05 * s) for s in range(3, 9)]
    got = compare.compare(unequal, "policy.module", "a", "b", keys)
    assert not got["paired"] and got["why_unpaired"].startswith("unequal seeds: 4 session(s) have no partner")

    with pytest.raises(compare.CompareError, match="policy.module=c: no session"):
        compare.compare(seeded, "policy.module", "a", "c", keys)
    no_runs = seeded[:6] + [
        {**row("b", s, 0, 0.0), "runs": 0, "progress_score": None, "floor": None} for s in range(1, 7)
    ]
    with pytest.raises(compare.CompareError, match="no run to compare"):
        compare.compare(no_runs, "policy.module", "a", "b", keys)


def test_report_compare_refuses_a_key_that_is_not_a_matrix_key(fleet):
    out = subprocess.run(
        [sys.executable, "-m", "supervisor", "fleet", "report", fleet["root"], "--compare", "game.seed"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert out.returncode == 2 and "'game.seed' is not a matrix key of this fleet" in out.stderr
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "supervisor",
            "fleet",
            "report",
            fleet["root"],
            "--compare",
            "model.model=standin-a,nobody",
        ],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert out.returncode == 2 and "model.model=nobody: no session" in out.stderr


def test_arms_that_differ_by_their_seed_never_pair():
    """Comparing game.seed=1 with game.seed=2 must not pair the sessions by their other keys:
    those pairs played different seeds."""
    rows = [{**row(p, s, 0, 0.1 * s), "policy.module": p} for p in ("a", "b") for s in (1, 2)]
    got = compare.compare(rows, "game.seed", "1", "2", ["policy.module", "game.seed"])
    assert not got["paired"] and got["why_unpaired"].startswith("the arms differ by their seed (game.seed)")
    assert got["unpaired_tests"]["wins"]["test"] == "Fisher's exact test"
