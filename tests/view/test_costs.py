"""What each model spent, on the page: a fleet crossing two models (one priced, one not) in a
real Chromium. The figures shown — per session in the list and on its page, per cell and per
model on the fleet page — are checked against the sums the test counts from the journals' own
usage rows (``tests.fleet.model_fleet.journal_spend``), and an unknown cost must read
``unknown``, never $0.
"""

from __future__ import annotations

import os

import pytest
from selenium.webdriver.common.by import By

from tests.fleet.model_fleet import journal_spend, model_fleet, results

from .helpers import Viewer, shot, tree_state
from .test_browser import wait


@pytest.fixture(scope="module")
def fleet_root(tmp_path_factory) -> str:
    return model_fleet(tmp_path_factory)["root"]  # read only


def usd(x: float) -> str:  # the page's rule: cents from a dollar, four decimals under, six under $0.0001
    return f"${x:,.2f}" if x >= 1 else (f"${x:.6f}" if 0 < x < 0.0001 else f"${x:.4f}")


def expected(root: str) -> dict[str, dict]:
    """session id, cell and model -> (tokens, cost text) summed from the journals."""
    out: dict[str, dict] = {}
    for r in results(root):
        spent = journal_spend(os.path.join(root, r["session_dir"]))
        for key in (r["session_id"], r["cell"], r["model"]):
            e = out.setdefault(key, {"tokens": 0, "cost": 0.0, "unknown": 0, "calls": 0})
            e["tokens"] += spent["tokens"]
            e["cost"] += spent["cost"]
            e["unknown"] += spent["unknown"]
            e["calls"] += spent["calls"]
    for e in out.values():
        assert e["calls"], "a session without model calls: the test would not test anything"
        e["text"] = "unknown" if e["unknown"] == e["calls"] else ("≥ " if e["unknown"] else "") + usd(e["cost"])
    return out


def table_figures(driver, table: str) -> dict[str, tuple[str, str, str]]:
    """The first column of each row -> (tokens, cost, the cost's data-usd), read in one go (a
    live page redraws itself)."""
    return driver.execute_script(
        """
        const out = {};
        for (const tr of document.querySelectorAll(arguments[0] + " tbody tr")) {
          const tokens = tr.querySelector(".tokens"), cost = tr.querySelector(".cost");
          out[tr.querySelector("td").innerText.trim()] = [tokens.innerText, cost.innerText, cost.dataset.usd ?? null];
        }
        return out;""",
        table,
    )


def test_the_fleet_page_shows_each_cell_and_model_its_tokens_and_cost_from_the_journals(fleet_root, driver):
    want = expected(fleet_root)
    assert any(e["unknown"] == 0 for e in want.values()) and any(e["unknown"] for e in want.values())
    v = Viewer(fleet_root)
    before = tree_state(fleet_root)
    try:
        (fleet,) = v.json("api/fleets")["fleets"]
        driver.get(v.url + "#/fleet/" + fleet["key"])
        wait(driver, lambda d: len(d.find_elements(By.CSS_SELECTOR, "#models tbody tr")) == 2, "a line per model")
        for table, n in (("#cells", 4), ("#models", 2)):
            shown = table_figures(driver, table)
            assert len(shown) == n, shown
            for name, (tokens, cost, data_usd) in shown.items():
                e = want[name]
                assert tokens == f"{e['tokens']:,}" and cost == e["text"], (table, name, shown[name], e)
                if e["text"] == "unknown":
                    assert data_usd is None, name  # no number stands in for an unknown cost
                else:
                    assert float(data_usd) == pytest.approx(e["cost"], rel=1e-9), name
        assert "standin-a: $0.15 in / $0.6 out / $0.075 cached" in driver.find_element(By.ID, "prices").text
        shot(driver, "fleet-models")
        driver.get(v.url + "#/")
        wait(driver, lambda d: len(d.find_elements(By.CSS_SELECTOR, "#sessions tbody tr")) == 4, "four sessions")
        listed = wait(
            driver,
            lambda d: driver.execute_script("""
            const out = {};
            for (const tr of document.querySelectorAll("#sessions tbody tr"))
              out[tr.dataset.key] = [tr.querySelector(".tokens").innerText, tr.querySelector(".cost").innerText];
            return out;"""),
            "the list's figures",
        )
        assert listed == {sid: [f"{want[sid]['tokens']:,}", want[sid]["text"]] for sid in listed} and len(listed) == 4
        for r in results(fleet_root)[:3:2]:  # a priced session and an unpriced one
            driver.get(v.url + "#/session/" + r["session_id"])
            wait(
                driver,
                lambda d: (
                    d.find_element(By.TAG_NAME, "h1").text.startswith(r["session_id"])
                    and d.find_elements(By.ID, "model-cost")
                ),
                "the session's page",
            )
            e = want[r["session_id"]]
            assert driver.find_element(By.ID, "model-tokens").text == f"{e['tokens']:,}"
            assert driver.find_element(By.ID, "model-cost").text == e["text"], r["model"]
            shot(driver, "session-cost-" + r["model"], full=False)
    finally:
        v.close()
    assert tree_state(fleet_root) == before, "the viewer wrote into the fleet root"
