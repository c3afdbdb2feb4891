"""A real fleet on the fleet page, a comparison, and the static bundle opened from disk.

The test counts runs and wins from the sessions' own evidence, the game-over screens among
their observation files (the player's HP on the first read of each such screen), and
computes the Wilson interval with its formula here, independently of the viewer and of
``supervisor fleet report``.
"""

from __future__ import annotations

import json
import math
import os
import pathlib
import subprocess
import sys

import pytest
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import Select

from tests.fleet.helpers import finish, start_fleet, write_fleet
from tests.harness import REPO, built_once

from .helpers import Viewer, journal_rows, shot, tree_state
from .test_browser import text, wait

CELLS = {"policy.module": ["sts2", "actors.policy.example_first_choice"], "game.seed": [1, 2]}


def _run_fleet(directory: str) -> dict:
    """The smallest fleet the tests here and in test_compare_pairs need: two policies over two
    seeds (two pairs by seed), seed 1's run ended under both policies (by step 182 on the
    built-in game), seed 2's cut at the step cap. Waits re-read after 10 ms, not 50 (the
    example policy waits through most of seed 2's steps)."""
    tmp = pathlib.Path(directory)
    fleet = write_fleet(tmp, set={"session.max_steps": 190, "game.poll_interval_s": 0.01}, matrix=CELLS)
    root = str(tmp / "root")
    code, out = finish(start_fleet(fleet, root, "--concurrency", "2"), timeout=200)
    assert code == 0, out
    return {"root": root}


@pytest.fixture(scope="module")
def fleet_root(tmp_path_factory) -> str:
    return built_once(tmp_path_factory, "view-fleet", _run_fleet)["root"]  # read only


def runs_from_screens(session_dir: str) -> tuple[int, int]:
    """(runs, wins): each stretch of game-over reads is one run; a win leaves HP above 0."""
    capture = os.path.dirname(os.path.dirname(session_dir))
    runs = wins = 0
    before = None
    for row in journal_rows(session_dir):
        if row["event"] != "observation":
            continue
        if row["state_type"] == "game_over" and before != "game_over":
            with open(os.path.join(capture, row["path"]), encoding="utf-8") as fh:
                state = json.load(fh)
            runs += 1
            wins += state["player"]["hp"] > 0
        before = row["state_type"]
    return runs, wins


def wilson(k: int, n: int) -> tuple[float, float]:
    z = 1.959963984540054
    p = k / n
    mid = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z / (1 + z * z / n) * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return mid - half, mid + half


def expected_cells(root: str) -> dict[str, tuple[int, int]]:
    with open(os.path.join(root, "results.jsonl"), encoding="utf-8") as fh:
        results = [json.loads(line) for line in fh]
    out: dict[str, tuple[int, int]] = {}
    for r in results:
        runs, wins = runs_from_screens(os.path.join(root, r["session_dir"]))
        a, b = out.get(r["cell"], (0, 0))
        out[r["cell"]] = (a + runs, b + wins)
    return out


def pct(x: float) -> str:
    return f"{100 * x:.0f}%"


def test_the_fleet_page_shows_the_aggregates_counted_from_the_game_over_screens(fleet_root, driver):
    expected = expected_cells(fleet_root)
    assert sum(r for r, _w in expected.values()) > 0, "no run ended: the test would not test anything"
    v = Viewer(fleet_root)
    before = tree_state(fleet_root)
    try:
        driver.get(v.url + "#/fleets")
        wait(driver, lambda d: d.find_elements(By.CSS_SELECTOR, "#fleets a"), "the fleet listed")
        driver.find_element(By.CSS_SELECTOR, "#fleets a").click()
        wait(driver, lambda d: len(d.find_elements(By.CSS_SELECTOR, "#cells tbody tr")) == 4, "four cells")
        wait(driver, lambda d: "reading floors" not in d.find_element(By.ID, "main").text, "floors read")
        for row in driver.find_elements(By.CSS_SELECTOR, "#cells tbody tr"):
            cell = row.find_element(By.CSS_SELECTOR, "td").text
            runs, wins = expected[cell]
            rate = row.find_element(By.CSS_SELECTOR, ".win-rate").text
            ci = row.find_element(By.CSS_SELECTOR, ".win-ci").text
            if runs == 0:
                assert (rate, ci) == ("–", "–"), cell
            else:
                lo, hi = wilson(wins, runs)
                assert rate == pct(wins / runs) and ci == f"{pct(lo)}–{pct(hi)}", (cell, runs, wins, rate, ci)
        assert len(driver.find_elements(By.CSS_SELECTOR, "#matrix .cellbox a")) == 4
        assert driver.find_elements(By.CSS_SELECTOR, "#policies tbody tr")
        shot(driver, "fleet")
        Select(driver.find_element(By.ID, "grp-col")).select_by_value("policy.module")
        Select(driver.find_element(By.ID, "grp-a")).select_by_value("sts2")
        Select(driver.find_element(By.ID, "grp-b")).select_by_value("actors.policy.example_first_choice")
        driver.find_element(By.ID, "grp-go").click()
        wait(driver, lambda d: d.find_elements(By.CSS_SELECTOR, "#compare tbody tr"), "the comparison")
        sentences = [e.text for e in driver.find_elements(By.CSS_SELECTOR, "#compare .sentence")]
        runs = {
            p: sum(r for c, (r, _w) in expected.items() if c.endswith("policy.module=" + p))
            for p in CELLS["policy.module"]
        }
        a, b = runs["sts2"], runs["actors.policy.example_first_choice"]
        n = f"n = {a}" if a == b else f"n = {a} and {b}"
        assert sentences[0].startswith("win rate: ") and (n in sentences[0] or "not enough data" in sentences[0]), (
            sentences
        )
        assert "n = 2" in sentences[1] and "n = 2" in sentences[2], sentences  # two sessions a policy
        shot(driver, "compare")
    finally:
        v.close()
    assert tree_state(fleet_root) == before, "the viewer wrote into the fleet root"


def test_a_bundle_opens_from_disk_with_the_same_pages(fleet_root, demo_capture, driver, tmp_path):
    out = str(tmp_path / "bundle")
    r = subprocess.run(
        [sys.executable, "-m", "supervisor", "view", "--bundle", out, demo_capture, fleet_root],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert r.returncode == 0 and r.stdout.startswith("bundle: "), r.stdout + r.stderr
    assert os.path.isfile(os.path.join(out, "index.html"))
    driver.get("file://" + out + "/index.html")
    sessions = sorted(os.listdir(os.path.join(demo_capture, "sessions")))
    wait(driver, lambda d: len(d.find_elements(By.CSS_SELECTOR, "#sessions tbody tr")) == 2 + 4, "six sessions")
    shown = {a.text for a in driver.find_elements(By.CSS_SELECTOR, "#sessions a.session-link")}
    assert set(sessions) <= shown
    session = os.path.join(demo_capture, "sessions", sessions[-1])
    steps = sum(1 for r in journal_rows(session) if r["event"] == "observation")
    driver.find_element(By.LINK_TEXT, sessions[-1]).click()
    wait(driver, lambda d: d.find_elements(By.ID, "step-count") and text(d, "#step-count") == str(steps), "steps")
    driver.find_element(By.CSS_SELECTOR, "#timeline a.step-link").click()
    wait(driver, lambda d: d.find_elements(By.ID, "observation"), "a step from the bundle")
    assert "matches the journal row" in text(driver, "#hash-status")
    shot(driver, "bundle")


def test_a_bundle_is_refused_inside_a_capture(demo_capture):
    r = subprocess.run(
        [sys.executable, "-m", "supervisor", "view", "--bundle", os.path.join(demo_capture, "b"), demo_capture],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert r.returncode == 2 and "never writes into a capture" in r.stderr
    assert not os.path.exists(os.path.join(demo_capture, "b"))


def test_results_count_runs_and_wins_from_the_game_over_screens_for_every_policy(fleet_root):
    """``results.jsonl`` (what ``fleet report`` sums) against the screens: the built-in STS2
    policy and the example policy (which records no ``run_outcome``) are counted alike."""
    with open(os.path.join(fleet_root, "results.jsonl"), encoding="utf-8") as fh:
        results = [json.loads(line) for line in fh]
    ended = 0
    for r in results:
        runs, wins = runs_from_screens(os.path.join(fleet_root, r["session_dir"]))
        assert (r["runs"], r["wins"], r["runs_inferred"]) == (runs, wins, runs), r
        ended += runs
    policies = {r["policy.module"] for r in results if r["runs"]}
    assert ended >= 2 and policies == set(CELLS["policy.module"]), results
    report = subprocess.run(
        [sys.executable, "-m", "supervisor", "fleet", "report", fleet_root, "--json"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=60,
    )
    cells = json.loads(report.stdout)["cells"]
    assert sum(c["runs"] for c in cells) == ended


def test_fleet_report_without_a_root_takes_the_newest_fleet(fleet_root, tmp_path):
    def report(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run(
            [
                sys.executable,
                "-m",
                "supervisor",
                "fleet",
                "report",
                *args,
                "--runtime-dir",
                str(tmp_path / "no-runtime"),
            ],
            cwd=REPO,
            capture_output=True,
            text=True,
            timeout=60,
        )

    r = report("--fleets", os.path.dirname(fleet_root))
    assert r.returncode == 0 and r.stderr.strip() == f"newest fleet: {fleet_root}", r.stderr
    assert "4 sessions: 4 ok" in r.stdout
    (tmp_path / "none").mkdir()
    r = report("--fleets", str(tmp_path / "none"))
    assert r.returncode == 2 and "no fleet root here" in r.stderr


def test_two_fleets_compare_with_their_counts_and_tests(fleet_root, tmp_path):
    import shutil

    copy = tmp_path / "copy-of-the-fleet"
    shutil.copytree(fleet_root, copy)
    v = Viewer(fleet_root, str(copy))
    try:
        fleets = v.json("api/fleets")["fleets"]
        assert len(fleets) == 2
        a, b = (f["key"] for f in fleets)
        out = v.json(f"api/compare/fleets/{a}/{b}")
        runs = sum(r for r, _w in expected_cells(fleet_root).values())
        assert out["a"]["runs"] == out["b"]["runs"] == runs and out["a"]["sessions"] == 4
        win = out["metrics"][0]
        assert win["test"] == "Fisher's exact test" and win["p"] == 1.0 and win["difference"] in (0, None)
        assert win["sentence"] == f"win rate: not distinguishable at n = {runs} (p = 1)"
        # the same seeds and matrix values in both fleets: each session pairs with its copy
        arms = out["arms"]
        assert arms["paired"] and arms["pairs"] == 4 and arms["why_unpaired"] is None
        assert all(p["a"]["session_id"] == p["b"]["session_id"] for p in arms["pair_list"])
        assert v.get("api/compare/fleets/nope/" + a)[0] == 404
    finally:
        v.close()
