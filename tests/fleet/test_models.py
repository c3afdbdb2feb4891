"""A fleet crossing two models and two characters: results rows name the model and the
character, their tokens and costs are the sums of the journal's own usage rows and of what the
model server answered, ``fleet report`` aggregates them per cell and per model, and the fleet
file's ``prices`` are checked before anything starts.

The fleet (``model_fleet``) is built once per test run: two stand-in "models", one priced by
the fleet file (``standin-a``) and one not (``standin-b``: its cost is unknown, never 0).
"""

from __future__ import annotations

import json
import math
import os

import pytest
import yaml

from supervisor.capture.facts import CapturedSession, observation_reader
from supervisor.fleet import matrix, spec
from supervisor.fleet.errors import FleetFileError
from supervisor.fleet.report import group_rows
from supervisor.fleet.results import FIELDS, session_row
from tests.harness import REPO

from .helpers import supervisor, write_fleet
from .model_fleet import (
    CHARACTERS,
    MODELS,
    PRICE_A,
    character_picked,
    journal_rows,
    journal_spend,
    model_fleet,
    results,
)


@pytest.fixture(scope="module")
def fleet(tmp_path_factory) -> dict:
    return model_fleet(tmp_path_factory)  # read only


def _spend(root: str, rows: list[dict]) -> dict:
    out = {"calls": 0, "tokens": 0, "cached": 0, "cost": 0.0, "priced": 0, "unknown": 0}
    for r in rows:
        for k, v in journal_spend(os.path.join(root, r["session_dir"])).items():
            out[k] += v
    return out


MODEL_DEMO = os.path.join(REPO, "run", "profiles", "model-demo.yaml")


def _usd(x: float) -> str:  # the report's rule: cents from a dollar, four decimals under, six under $0.0001
    return f"${x:,.2f}" if x >= 1 else (f"${x:.6f}" if 0 < x < 0.0001 else f"${x:.4f}")


def runs_and_wins(root: str, session_dir: str) -> tuple[int, int]:
    """Each stretch of game-over reads is a run; a win leaves the player HP above 0."""
    runs = wins = 0
    before = None
    capture = os.path.dirname(os.path.dirname(os.path.join(root, session_dir)))
    for row in journal_rows(os.path.join(root, session_dir)):
        if row["event"] != "observation":
            continue
        if row["state_type"] == "game_over" and before != "game_over":
            with open(os.path.join(capture, row["path"]), encoding="utf-8") as fh:
                wins += json.load(fh)["player"]["hp"] > 0
            runs += 1
        before = row["state_type"]
    return runs, wins


def test_rows_name_the_model_and_the_character_played(fleet):
    rows = results(fleet["root"])
    assert {(r["model.model"], r["policy.settings.character"]) for r in rows} == {
        (m, c) for m in MODELS for c in CHARACTERS
    }
    for r in rows:
        session = os.path.join(fleet["root"], r["session_dir"])
        start = next(x for x in journal_rows(session) if x["event"] == "session_start")
        assert r["model"] == start["profile"]["model"]["model"] == r["model.model"], r
        picked = character_picked(fleet["root"], session)
        assert picked is not None and picked.lower() == r["policy.settings.character"], (picked, r["cell"])
        assert r["character"] == picked, r
        assert set(r) >= set(FIELDS) and all(not isinstance(v, (dict, list)) for v in r.values()), r


def test_a_pick_without_the_built_in_policy_s_mark_is_read_on_the_screen(fleet):
    """A policy that does not mark its pick (``character_pick``) is read the same way: the
    accepted ``menu_select`` on the character-select screen the journal's observation shows.
    The journal's rows are given without the mark; the profile's key is taken away too."""
    for r in results(fleet["root"]):
        session = os.path.join(fleet["root"], r["session_dir"])
        facts = CapturedSession(read_state=observation_reader(os.path.dirname(os.path.dirname(session))))
        for row in journal_rows(session):
            row.pop("character_pick", None)
            if row["event"] == "session_start":
                row["profile"]["policy"]["settings"].pop("character")
            facts.add(row)
        assert facts.facts()["character"] == character_picked(fleet["root"], session) == r["character"], r["cell"]
        unread = CapturedSession()  # no way to read the screen, no mark, no profile key: not known
        for row in journal_rows(session):
            row.pop("character_pick", None)
            if row["event"] == "session_start":
                row["profile"]["policy"]["settings"].pop("character")
            unread.add(row)
        assert unread.facts()["character"] is None


def test_tokens_and_cost_are_the_journal_sums_and_unknown_is_never_zero(fleet):
    rows = results(fleet["root"])
    for r in rows:
        spent = journal_spend(os.path.join(fleet["root"], r["session_dir"]))
        assert spent["calls"] > 0, f"{r['cell']}: no model call; the test would not test anything"
        assert (r["model_calls"], r["model_tokens"], r["model_cached_tokens"], r["model_cost_unknown_calls"]) == (
            spent["calls"],
            spent["tokens"],
            spent["cached"],
            spent["unknown"],
        ), (r, spent)
        assert r["model_fallbacks"] == sum(
            1
            for x in journal_rows(os.path.join(fleet["root"], r["session_dir"]))
            if x["event"] == "proposal" and x.get("source") == "heuristic_fallback"
        )
        if r["model"] == "standin-a":
            assert spent["unknown"] == 0 and r["model_cost_usd"] == pytest.approx(spent["cost"], rel=1e-9, abs=1e-12)
            assert r["model_cost_usd"] > 0
        else:
            assert spent["priced"] == 0 and r["model_cost_usd"] is None, r


def test_capture_coverage_gives_each_session_its_tokens_and_cost(fleet):
    rows = results(fleet["root"])
    dirs = [os.path.join(fleet["root"], r["session_dir"]) for r in rows]
    r = supervisor("capture", "coverage", *dirs, "--json")
    assert r.returncode == 0, r.stderr
    sessions = {s["session"]: s for s in json.loads(r.stdout)["sessions"]}
    for d in dirs:
        spent, shown = journal_spend(d), sessions[os.path.basename(d)]
        assert (shown["model_tokens"], shown["model_cost_unknown_calls"]) == (spent["tokens"], spent["unknown"])
        assert shown["model_cost_usd"] == (pytest.approx(spent["cost"], rel=1e-9) if spent["priced"] else None)
    text = supervisor("capture", "coverage", dirs[0]).stdout
    assert f"{journal_spend(dirs[0])['tokens']:,} tokens; cost $" in text, text


def test_what_the_server_answered_is_what_the_results_count(fleet):
    """The stand-in's own replies, per model: their tokens are the results' tokens, and the
    priced model's cost is its replies' usage at the fleet file's prices."""
    with open(fleet["served"], encoding="utf-8") as fh:
        served = json.load(fh)
    rows = results(fleet["root"])
    for model in MODELS:
        usage = [s["usage"] for s in served if s["model"] == model]
        mine = [r for r in rows if r["model"] == model]
        assert usage and sum(u["total_tokens"] for u in usage) == sum(r["model_tokens"] for r in mine), model
        assert len(usage) == sum(r["model_calls"] for r in mine), model
    cost = sum(
        (u["prompt_tokens"] * PRICE_A["input_per_mtok"] + u["completion_tokens"] * PRICE_A["output_per_mtok"]) / 1e6
        for s in served
        if s["model"] == "standin-a"
        for u in [s["usage"]]
    )
    assert sum(r["model_cost_usd"] for r in rows if r["model"] == "standin-a") == pytest.approx(cost, rel=1e-9)


def test_fleet_report_gives_each_cell_and_each_model_its_tokens_and_cost(fleet):
    root = fleet["root"]
    rows = results(root)
    r = supervisor("fleet", "report", root, "--json")
    assert r.returncode == 0, r.stderr
    report = json.loads(r.stdout)
    assert report["model_key"] == "model" and [m["model"] for m in report["models"]] == MODELS
    groups = [(c["cell"], [x for x in rows if x["cell"] == c["cell"]], c) for c in report["cells"]]
    groups += [(m["model"], [x for x in rows if x["model"] == m["model"]], m) for m in report["models"]]
    ended = 0
    for name, mine, agg in groups:
        spent = _spend(root, mine)
        counted = [runs_and_wins(root, s["session_dir"]) for s in mine]
        runs, wins = sum(c[0] for c in counted), sum(c[1] for c in counted)
        assert (agg["runs"], agg["wins"]) == (runs, wins), (name, agg)
        ended += runs
        assert (agg["model_tokens"], agg["model_calls"], agg["model_cost_unknown_calls"]) == (
            spent["tokens"],
            spent["calls"],
            spent["unknown"],
        ), name
        if spent["unknown"]:
            assert agg["model_cost_usd"] is None and agg["cost_text"] == "unknown", name
            assert agg["cost_per_run_text"] == ("unknown" if runs else "—")
            assert agg["cost_per_win_text"] == ("unknown" if wins else "—")
        else:
            assert agg["model_cost_usd"] == pytest.approx(spent["cost"], rel=1e-9) and agg["cost_text"] == _usd(
                spent["cost"]
            )
            if runs:
                assert agg["cost_per_run"] == pytest.approx(spent["cost"] / runs, rel=1e-6)
                assert agg["cost_per_run_text"] == _usd(spent["cost"] / runs), name
            else:
                assert agg["cost_per_run"] is None and agg["cost_per_run_text"] == "—"
            if wins:
                assert agg["cost_per_win_text"] == _usd(spent["cost"] / wins), name
            else:
                assert agg["cost_per_win"] is None and agg["cost_per_win_text"] == "—", name
    assert ended >= 1, "no run ended: cost per run would not be tested"
    total = _spend(root, rows)
    t = report["totals"]
    assert t["model_cost_state"] == "partial" and t["model_cost_usd"] == pytest.approx(total["cost"], rel=1e-9)
    text = supervisor("fleet", "report", root).stdout
    a = next(m for m in report["models"] if m["model"] == "standin-a")
    line = next(x for x in text.splitlines() if x.startswith("standin-a "))
    assert f"{a['model_tokens']:,}" in line and _usd(a["model_cost_usd"]) in line, line
    assert next(x for x in text.splitlines() if x.startswith("standin-b ")).split()[-3] == "unknown"
    assert f"cost ≥ {_usd(total['cost'])}" in text and f"{total['unknown']} of {total['calls']} calls" in text, text


def test_cost_per_win_divides_by_wins_and_a_partial_cost_is_a_lower_bound():
    """``group_rows`` on rows as results.jsonl holds them (inputs, not outputs): 3 wins of 4
    runs at $0.09 known, and a cell with one call of unknown cost among priced ones."""
    base = {
        "outcome": "ok",
        "steps": 10,
        "runs_inferred": 0,
        "duration_s": 1.0,
        "model_tokens": 100,
        "model_cached_tokens": 0,
        "model_fallbacks": 0,
        "session_id": None,
    }
    rows = [
        {
            **base,
            "index": 0,
            "cell": "x",
            "model": "m",
            "runs": 3,
            "wins": 2,
            "model_calls": 4,
            "model_cost_usd": 0.06,
            "model_cost_unknown_calls": 0,
        },
        {
            **base,
            "index": 1,
            "cell": "x",
            "model": "m",
            "runs": 1,
            "wins": 1,
            "model_calls": 2,
            "model_cost_usd": 0.03,
            "model_cost_unknown_calls": 0,
        },
        {
            **base,
            "index": 2,
            "cell": "y",
            "model": "m",
            "runs": 2,
            "wins": 1,
            "model_calls": 3,
            "model_cost_usd": 0.02,
            "model_cost_unknown_calls": 1,
        },
    ]
    x, y = group_rows(rows, "cell")
    assert (x["cost_text"], x["cost_per_run"], x["cost_per_win"], x["cost_per_win_text"]) == (
        "$0.0900",
        pytest.approx(0.0225),
        pytest.approx(0.03),
        "$0.0300",
    )
    assert (y["model_cost_state"], y["cost_text"], y["cost_per_win_text"]) == ("partial", "≥ $0.0200", "≥ $0.0200")
    assert not math.isnan(x["cost_per_run"])


def test_a_session_that_never_ran_is_counted_under_its_planned_model(tmp_path):
    path = write_fleet(
        tmp_path, profile=MODEL_DEMO, matrix={"model.model": ["m1", "m2"], "policy.settings.character": ["wanderer"]}
    )
    plans = matrix.expand(spec.load(path))
    row = session_row("t", str(tmp_path), plans[1], [], "not_run")
    assert (row["model"], row["character"], row["model_calls"]) == ("m2", "wanderer", None)
    assert list(row) == list(FIELDS) + ["model.model", "policy.settings.character"]


# -- prices: in the fleet file ----------------------------------------------------------------


@pytest.mark.parametrize(
    "prices, extra, problem",
    [
        ({"m1": {"input_per_mtok": -1, "output_per_mtok": 2}}, {}, "prices.m1.input_per_mtok: must be >= 0, got -1"),
        ({"m1": {"input_per_mtok": 1}}, {}, "prices.m1.output_per_mtok: required"),
        (
            {"m1": {"input_per_mtok": 1, "output_per_mtok": 2, "model": "m2"}},
            {},
            "prices.m1.model: 'm2' differs from the entry's key 'm1'",
        ),
        ({"m1": [1, 2]}, {}, "prices.m1: expected a mapping"),
        ("cheap", {}, "prices: expected a mapping of model names to prices"),
        (
            {"m1": {"input_per_mtok": 1, "output_per_mtok": 2}},
            {"set": {"model.price": {"model": "m1", "input_per_mtok": 1, "output_per_mtok": 1}}},
            "prices.m1: set.model.price prices the same sessions",
        ),
    ],
)
def test_bad_prices_are_refused_naming_the_key(tmp_path, prices, extra, problem):
    path = write_fleet(tmp_path, profile=MODEL_DEMO, matrix={"model.model": ["m1", "m2"]}, prices=prices, **extra)
    with pytest.raises(FleetFileError) as err:
        matrix.expand(spec.load(path))
    assert str(err.value).startswith(f"{path}: {problem}"), str(err.value)


def test_a_price_for_a_model_no_session_uses_is_refused_and_nothing_starts(tmp_path):
    path = write_fleet(
        tmp_path,
        profile=MODEL_DEMO,
        matrix={"model.model": ["m1", "m2"]},
        prices={
            "m1": {"input_per_mtok": 1, "output_per_mtok": 2},
            "gpt-5": {"input_per_mtok": 1, "output_per_mtok": 2},
        },
    )
    r = supervisor(
        "fleet", "start", path, "--fleet-root", str(tmp_path / "root"), "--runtime-dir", str(tmp_path / "runtime")
    )
    assert r.returncode == 2, r.stdout + r.stderr
    assert (
        r.stderr == f"error: {path}: prices.gpt-5: no session of this fleet uses model 'gpt-5' "
        "(its sessions use 'm1', 'm2')\n"
    ), r.stderr
    assert not (tmp_path / "root").exists()


def test_prices_reach_each_session_of_their_model_only(tmp_path):
    path = write_fleet(
        tmp_path,
        profile=MODEL_DEMO,
        matrix={"model.model": ["m1", "m2"]},
        prices={"m1": {"input_per_mtok": 0.5, "output_per_mtok": 1}},
    )
    overrides = {
        p.model: [o for o in p.overrides if o.startswith("model.price=")] for p in matrix.expand(spec.load(path))
    }
    assert overrides["m2"] == []
    assert [yaml.safe_load(o.split("=", 1)[1]) for o in overrides["m1"]] == [
        {"model": "m1", "input_per_mtok": 0.5, "output_per_mtok": 1}
    ]


def test_the_shipped_model_fleet_loads(tmp_path):
    shipped = os.path.join(REPO, "run", "fleets", "agent-models.yaml")
    plans = matrix.expand(spec.load(shipped))
    assert {p.model for p in plans} == {"standin-a", "standin-b"} and len(plans) == 12
    assert all(any(o.startswith("model.price=") for o in p.overrides) for p in plans)
