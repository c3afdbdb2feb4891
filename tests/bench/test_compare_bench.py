"""``bench/compare.py``'s quick variant, as its users run it: two arms of 20 runs on 20 seeds
pair into 20 pairs, and the figures it prints are present, the viewer's answer among them."""

from __future__ import annotations

import json
import subprocess
import sys

from tests.harness import REPO


def test_the_quick_variant_pairs_every_seed_and_prints_its_times():
    r = subprocess.run(
        [sys.executable, "bench/compare.py", "--seeds", "20", "--rounds", "2", "--json"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert r.returncode == 0, r.stderr[-3000:]
    out = json.loads(r.stdout)
    assert out["paired"] and out["pairs"] == out["runs_per_arm"] == 20
    assert out["wilcoxon_method"] == "exact"  # 20 pairs: the exact signed-rank distribution
    assert out["baseline_unpaired_s"] > 0 and out["compare_s"] > 0 and 0 < out["answer_s"] < out["goal_s"]
