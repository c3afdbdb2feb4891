"""The coverage classifier names every vendor/sts2mcp state sample after itself, so a variant
never reached by a campaign points at its sample (supervisor/capture/coverage.py)."""

from __future__ import annotations

import copy
import json
import os

import pytest

from supervisor.capture.coverage import classify, expected_variants, scan

SAMPLES = os.path.join(
    os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "vendor", "sts2mcp"
)


def load(name: str) -> dict:
    with open(os.path.join(SAMPLES, name + ".json"), encoding="utf-8") as fh:
        return json.load(fh)


def test_state_samples_are_found_and_replies_left_out():
    names = expected_variants(SAMPLES)
    assert "menu__main" in names and "monster__combat_ended" in names
    assert not [n for n in names if n.startswith(("reply__", "compendium"))]


@pytest.mark.parametrize("name", expected_variants(SAMPLES))
def test_every_state_sample_is_classified_as_its_own_name(name):
    assert classify(load(name)) == name


def test_variants_follow_the_fields_the_mod_sets():
    main = load("menu__main_saved_run")
    main["options"] = [o for o in main["options"] if o not in ("continue", "abandon_run")]
    assert classify(main) == "menu__main"
    fight = load("elite")
    del fight["battle"]
    assert classify(fight) == "elite__combat_ended"
    shop = copy.deepcopy(load("shop"))
    shop["shop"]["error"] = "Shop inventory is not ready yet"
    assert classify(shop) == "shop__not_ready"
    assert classify({"state_type": 3}) == "invalid" and classify([]) == "invalid"


def test_an_unreadable_observation_file_is_counted_not_fatal(tmp_path):
    session = tmp_path / "sessions" / "20260101T000000Z-0123456789abcdef0123456789abcdef"
    (session / "observations").mkdir(parents=True)
    (session / "observations" / "000001.json").write_text("[" * 100000)  # past the recursion limit
    (session / "observations" / "000002.json").write_text(json.dumps(load("map")))
    rows = [{"event": "observation", "path": f"sessions/{session.name}/observations/00000{n}.json"} for n in (1, 2)]
    (session / "events.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    cov = scan(str(tmp_path))
    assert cov.totals()["unreadable"] == 1 and dict(cov.variants) == {"map": 1}
