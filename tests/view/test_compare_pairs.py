"""The compare page pairs sessions by seed, two runs side by side, and every page by its URL,
in the live viewer and in a bundle opened from disk.

The fleet is the one ``test_fleet_and_bundle`` builds (built once: the demo profile crossing
the ``sts2`` and ``example_first_choice`` policies over ``game.seed`` 1 and 2). Every figure a
test looks for on a page is computed here from the fleet's ``results.jsonl`` or from the
sessions' journals, with no gamerig code: McNemar's discordant pairs, the mean paired difference
and its Student t interval, the exact signed-rank p (by enumerating the signs), Fisher's exact
p (by enumerating the tables), and the first decision where two runs differ (by walking both
journals).
"""

from __future__ import annotations

import itertools
import json
import math
import os
import subprocess
import sys
import urllib.parse

import pytest
from selenium.webdriver.common.by import By

from tests.fleet.model_fleet import MODELS, model_fleet
from tests.harness import REPO, built_once

from .helpers import Viewer, journal_rows, shot
from .test_browser import text, wait
from .test_fleet_and_bundle import _run_fleet

A, B = "sts2", "actors.policy.example_first_choice"
T975 = {1: 12.706204736, 2: 4.30265273, 3: 3.182446305, 4: 2.776445105, 5: 2.570581836}


@pytest.fixture(scope="module")
def fleet_root(tmp_path_factory) -> str:
    return built_once(tmp_path_factory, "view-fleet", _run_fleet)["root"]  # read only


@pytest.fixture(scope="module")
def viewer(fleet_root):
    v = Viewer(fleet_root)
    yield v
    v.close()


@pytest.fixture(scope="module")
def bundle(fleet_root, tmp_path_factory) -> str:
    """The fleet's bundle, written once for every worker (read only); no step is opened from
    it here (test_fleet_and_bundle does), so it keeps none."""

    def write(directory: str) -> dict:
        out = os.path.join(directory, "bundle")
        r = subprocess.run(
            [sys.executable, "-m", "supervisor", "view", "--bundle", out, "--bundle-max-steps", "0", fleet_root],
            cwd=REPO,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert r.returncode == 0, r.stdout + r.stderr
        return {"out": out}

    return "file://" + built_once(tmp_path_factory, "view-fleet-bundle", write)["out"] + "/index.html"


def results(root: str) -> list[dict]:
    with open(os.path.join(root, "results.jsonl"), encoding="utf-8") as fh:
        return sorted((json.loads(line) for line in fh), key=lambda r: r["index"])


def q(s: str) -> str:
    return urllib.parse.quote(str(s), safe="")


def fleet_key(viewer) -> str:
    return viewer.json("api/fleets")["fleets"][0]["key"]


def session_key(viewer, session_id: str) -> str:
    return next(s["key"] for s in viewer.json("api/sessions")["sessions"] if s["id"] == session_id)


def pairs_by_seed(rows: list[dict]) -> list[tuple[dict, dict]]:
    """(A's session, B's session) on each seed both policies played."""
    by = {(r["policy.module"], r["game.seed"], r["repeat"]): r for r in rows}
    return [(by[(A, s, rep)], by[(B, s, rep)]) for (p, s, rep) in sorted(by, key=str) if p == A and (B, s, rep) in by]


def signed_rank_p(diffs: list[float]) -> float | None:
    """Two-sided exact Wilcoxon signed-rank p by enumerating every sign assignment."""
    d = [x for x in diffs if x != 0]
    if not d:
        return None
    order = sorted(abs(x) for x in d)
    rank = {v: (order.index(v) + 1 + len(order) - order[::-1].index(v)) / 2 for v in set(order)}
    ranks = [rank[abs(x)] for x in d]
    centre = sum(ranks) / 2
    seen = abs(sum(r for r, x in zip(ranks, d) if x > 0) - centre)
    hits = sum(
        1
        for signs in itertools.product((0, 1), repeat=len(d))
        if abs(sum(r for r, s in zip(ranks, signs) if s) - centre) >= seen - 1e-9
    )
    return min(1.0, hits / 2 ** len(d))


def fisher_p(k1: int, n1: int, k2: int, n2: int) -> float:
    """Two-sided Fisher's exact p by enumerating the tables with the same margins."""
    k, n = k1 + k2, n1 + n2

    def prob(a: int) -> float:
        return math.comb(n1, a) * math.comb(n2, k - a) / math.comb(n, k)

    seen = prob(k1)
    return min(1.0, sum(prob(a) for a in range(max(0, k - n2), min(k, n1) + 1) if prob(a) <= seen * (1 + 1e-7)))


def prec2(p: float | None) -> str:
    """A p value as the page writes it (JavaScript's toPrecision(2))."""
    if p is None:
        return "–"
    return f"{p:.{max(0, 1 - math.floor(math.log10(p)))}f}"


def signed(x: float) -> str:
    return ("+" if x > 0 else "") + f"{x:.3f}"


# -- the compare page --------------------------------------------------------------------------


def check_paired(driver, rows: list[dict]) -> None:
    pairs = pairs_by_seed(rows)
    assert len(pairs) == 2, "the fleet should hold two seeds for each policy"
    b = sum(1 for x, y in pairs if x["wins"] and not y["wins"])
    c = sum(1 for x, y in pairs if y["wins"] and not x["wins"])
    diffs = [x["progress_score"] - y["progress_score"] for x, y in pairs]
    mean = sum(diffs) / len(diffs)
    sd = math.sqrt(sum((d - mean) ** 2 for d in diffs) / (len(diffs) - 1))
    half = T975[len(diffs) - 1] * sd / math.sqrt(len(diffs))
    wait(driver, lambda d: d.find_elements(By.CSS_SELECTOR, "#pairs tbody tr"), "the pairs")
    assert text(driver, "#pair-count") == str(len(pairs))
    assert (text(driver, ".mcnemar-b"), text(driver, ".mcnemar-c")) == (str(b), str(c))
    assert text(driver, '.mean-diff[data-column="progress_score"]') == signed(mean)
    assert (
        text(driver, '.diff-ci[data-column="progress_score"]')
        == f"{signed(mean - half)} … {signed(mean + half)} (Student t interval)"
    )
    row = driver.find_elements(By.CSS_SELECTOR, "#paired tbody tr")[1]
    assert row.find_elements(By.TAG_NAME, "td")[5].text == prec2(signed_rank_p(diffs))
    links = driver.find_elements(By.CSS_SELECTOR, "#pairs a.pair-link")
    assert len(links) == len(pairs)


def check_unpaired(driver, rows: list[dict]) -> None:
    wait(driver, lambda d: d.find_elements(By.ID, "why-unpaired"), "why the arms do not pair")
    assert "differ by their seed (game.seed)" in text(driver, "#why-unpaired")
    assert not driver.find_elements(By.ID, "paired")
    one = [r for r in rows if r["game.seed"] == 1]
    two = [r for r in rows if r["game.seed"] == 2]
    runs1, wins1 = sum(r["runs"] for r in one), sum(r["wins"] for r in one)
    runs2, wins2 = sum(r["runs"] for r in two), sum(r["wins"] for r in two)
    win = driver.find_elements(By.CSS_SELECTOR, "#compare tbody tr")[0].find_elements(By.TAG_NAME, "td")
    assert win[5].text == "Fisher's exact test"
    assert win[6].text == (prec2(fisher_p(wins1, runs1, wins2, runs2)) if runs1 and runs2 else "–")
    # each arm's progress score: mean and median of its sessions' scores
    means = [e.text for e in driver.find_elements(By.CSS_SELECTOR, "#arm-scores .arm-mean")]
    medians = [e.text for e in driver.find_elements(By.CSS_SELECTOR, "#arm-scores .arm-median")]
    for arm, mean, median in zip((one, two), means, medians):
        xs = sorted(r["progress_score"] for r in arm)
        mid = (xs[(len(xs) - 1) // 2] + xs[len(xs) // 2]) / 2
        assert (mean, median) == (f"{sum(xs) / len(xs):.3f}", f"{mid:.3f}"), (mean, median, xs)


def test_the_compare_page_pairs_runs_by_seed_or_says_why_not(fleet_root, viewer, bundle, driver):
    rows = results(fleet_root)
    key = fleet_key(viewer)
    paired = f"#/compare/group/{q(key)}/policy.module/{q(A)}/{q(B)}"
    unpaired = f"#/compare/group/{q(key)}/game.seed/1/2"
    for where, base in (("server", viewer.url), ("bundle", bundle)):
        driver.get(base + paired)
        check_paired(driver, rows)
        shot(driver, f"compare-paired-{where}")
        driver.get(base + unpaired)
        check_unpaired(driver, rows)
        shot(driver, f"compare-unpaired-{where}")


def test_an_arm_without_sessions_is_a_400_naming_it_and_the_page_says_so(viewer, bundle, driver):
    key = fleet_key(viewer)
    status, _ctype, body = viewer.get(f"api/compare/group/{q(key)}/policy.module/nope/{q(A)}")
    assert status == 400
    message = json.loads(body)["error"]
    assert message.startswith("policy.module=nope: no session of this fleet has that value"), message
    driver.get(viewer.url + f"#/compare/group/{q(key)}/policy.module/nope/{q(A)}")
    wait(driver, lambda d: d.find_elements(By.ID, "error"), "the error")
    assert text(driver, "#error") == message


# -- two runs side by side ---------------------------------------------------------------------


def run_decisions(session_dir: str) -> tuple[list[dict], dict[int, dict]]:
    """Run 1's executed decisions (from the observation its run_identity_changed row names to its
    first game over), and per floor the last HP, max HP and gold its observations showed."""
    rows = journal_rows(session_dir)
    obs = {r["observation_id"]: r for r in rows if r["event"] == "observation"}
    props = {r["proposal_id"]: r for r in rows if r["event"] == "proposal"}
    start = next(i for i, r in enumerate(rows) if r["event"] == "run_identity_changed")
    out, seen, floors = [], set(), {}
    for r in rows:
        if r["event"] == "observation" and r["state_type"] != "menu" and isinstance(r.get("progress"), dict):
            p = r["progress"]
            floors.setdefault(p["floor"], {}).update(hp=p["hp"], max_hp=p["max_hp"], gold=p["gold"])
        if r["event"] == "observation" and r["state_type"] == "game_over":
            break
    for r in rows[start:]:
        if r["event"] == "observation" and r["state_type"] == "game_over":
            break
        if r["event"] == "action_attempt" and r["proposal_id"] not in seen:
            seen.add(r["proposal_id"])
            o = obs[r["observation_id"]]
            p = props[r["proposal_id"]]
            out.append(
                {
                    "sha": o["sha256"],
                    "floor": (o.get("progress") or {}).get("floor"),
                    "screen": o["state_type"],
                    "action": r["action"],
                    "parameters": r["parameters"],
                    "reason": p.get("reason"),
                    "agent": p.get("agent"),
                    "answers": [e.get("answers") for e in p.get("model_evidence") or ()],
                }
            )
    return out, floors


def first_differing(da: list[dict], db: list[dict]) -> int:
    """The first position where the screens' hashes or the choices differ."""
    return next(
        i
        for i, (a, b) in enumerate(zip(da, db))
        if a["sha"] != b["sha"] or (a["action"], a["parameters"]) != (b["action"], b["parameters"])
    )


def test_two_runs_on_one_seed_side_by_side_show_their_first_difference(fleet_root, viewer, bundle, driver):
    x, y = pairs_by_seed(results(fleet_root))[0]
    da, floors_a = run_decisions(os.path.join(fleet_root, x["session_dir"]))
    db, floors_b = run_decisions(os.path.join(fleet_root, y["session_dir"]))
    k = first_differing(da, db)
    url = f"#/pair/{q(session_key(viewer, x['session_id']))}/{q(session_key(viewer, y['session_id']))}/1"
    for where, base in (("server", viewer.url), ("bundle", bundle)):
        driver.get(base + url)
        wait(driver, lambda d: d.find_elements(By.CSS_SELECTOR, "#floors tbody tr"), "the runs aligned by floor")
        assert text(driver, "#fd-n") == str(k + 1)
        assert text(driver, "#fd-floor") == str(da[k]["floor"])
        for side, d in (("#fd-a", da[k]), ("#fd-b", db[k])):
            assert text(driver, side + " .d-screen") == d["screen"]
            assert text(driver, side + " .d-action") == d["action"]
            assert json.loads(text(driver, side + " .d-params")) == d["parameters"]
            assert text(driver, side + " .d-reason") == d["reason"]
        assert (text(driver, "#decisions-a"), text(driver, "#decisions-b")) == (str(len(da)), str(len(db)))
        for row in driver.find_elements(By.CSS_SELECTOR, "#floors tbody tr"):
            floor = int(row.get_attribute("data-floor"))
            hp = row.find_elements(By.CSS_SELECTOR, ".f-hp")
            for cell, floors in zip(hp, (floors_a, floors_b)):
                if floor in floors:
                    assert cell.text == f"{floors[floor]['hp']}/{floors[floor]['max_hp']}", (floor, cell.text)
        shot(driver, f"pair-{where}")
    # the pair link on the compare page opens the same page
    driver.get(viewer.url + f"#/compare/group/{q(fleet_key(viewer))}/policy.module/{q(A)}/{q(B)}")
    wait(driver, lambda d: d.find_elements(By.CSS_SELECTOR, "#pairs a.pair-link"), "the pairs")
    driver.find_element(By.CSS_SELECTOR, "#pairs a.pair-link").click()
    wait(driver, lambda d: d.find_elements(By.ID, "fd-n"), "the side-by-side page")
    assert text(driver, "#fd-n") == str(k + 1)


def test_a_run_and_a_cell_reopen_by_their_urls_with_their_scores(fleet_root, viewer, bundle, driver):
    x = results(fleet_root)[0]
    _d, floors = run_decisions(os.path.join(fleet_root, x["session_dir"]))
    top = max(floors)
    key = session_key(viewer, x["session_id"])
    for base in (viewer.url, bundle):
        driver.get(base + f"#/session/{q(key)}/run/1")
        wait(driver, lambda d: d.find_elements(By.ID, "run-sel"), "run 1 marked")
        assert text(driver, "#run-sel .run-floor") == str(top)
        assert text(driver, "#run-sel .run-hp") == f"{floors[top]['hp']} / {floors[top]['max_hp']}"
        lost = [int(e.text) for e in driver.find_elements(By.CSS_SELECTOR, "#groups .hp-lost")]
        assert lost and all(n >= 0 for n in lost) and any(lost), lost  # HP lost is a positive number
        driver.get(base + f"#/fleet/{q(fleet_key(viewer))}/cell/{q(x['cell'])}")
        wait(driver, lambda d: d.find_elements(By.CSS_SELECTOR, "#cell-sessions tbody tr"), "the cell's sessions")
        assert text(driver, "#cell-agg .progress-mean") == f"{x['progress_score']:.3f}"
    shot(driver, "cell")


def test_capture_coverage_lists_each_sessions_runs_with_their_scores(fleet_root):
    x = next(r for r in results(fleet_root) if r["runs"])
    session = os.path.join(fleet_root, x["session_dir"])
    _d, floors = run_decisions(session)
    top = max(floors)
    r = subprocess.run(
        [sys.executable, "-m", "supervisor", "capture", "coverage", session, "--json"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=60,
    )
    runs = json.loads(r.stdout)["sessions"][0]["runs"]
    assert [(u["floor"], u["hp_end"], u["max_hp"]) for u in runs] == [(top, floors[top]["hp"], floors[top]["max_hp"])]
    r = subprocess.run(
        [sys.executable, "-m", "supervisor", "capture", "coverage", session],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert f"run 1 defeat: floor {top} " in r.stdout and f"HP {floors[top]['hp']}/{floors[top]['max_hp']}" in r.stdout


def test_two_models_first_difference_shows_their_answers_and_the_agent_records(tmp_path_factory, driver):
    """The model fleet (two stand-in models, each character on the same game.seed): the pair's
    first differing decision shows both models' answers and the agent's record as the
    proposals in the journals hold them."""
    root = model_fleet(tmp_path_factory)["root"]
    rows = results(root)
    by = {(r["model.model"], r["policy.settings.character"]): r for r in rows}
    x, y = next((by[(MODELS[0], c)], by[(MODELS[1], c)]) for (_m, c) in sorted(by))
    da, _fa = run_decisions(os.path.join(root, x["session_dir"]))
    db, _fb = run_decisions(os.path.join(root, y["session_dir"]))
    k = first_differing(da, db)
    v = Viewer(root)
    try:
        url = f"#/pair/{q(session_key(v, x['session_id']))}/{q(session_key(v, y['session_id']))}/1"
        driver.get(v.url + url)
        wait(driver, lambda d: d.find_elements(By.ID, "fd-n"), "the first difference")
        assert text(driver, "#fd-n") == str(k + 1)
        for side, d in (("#fd-a", da[k]), ("#fd-b", db[k])):
            shown = [json.loads(e.text) for e in driver.find_elements(By.CSS_SELECTOR, side + " .d-model")]
            assert [m["answers"] for m in shown] == d["answers"] and d["answers"], side
            assert json.loads(text(driver, side + " .d-agent")) == d["agent"]
            assert text(driver, side + " .d-reason") == d["reason"]
        shot(driver, "pair-models")
    finally:
        v.close()
