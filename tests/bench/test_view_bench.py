"""``bench/view.py``'s quick variant, as its users run it: a small session and a small fleet
open, every step is followed and read, and the figures it prints are present; ``--check``
has the capture verifier find no damage in the session it built (the journal it writes is a
whole, intact chain)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from tests.harness import REPO

pytestmark = pytest.mark.timeout(180)


def test_the_quick_variant_prints_open_times_and_memory():
    r = subprocess.run(
        [sys.executable, "bench/view.py", "--steps", "600", "--fleet", "2", "--json", "--check"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=170,
    )
    assert r.returncode == 0, r.stderr[-3000:]
    out = json.loads(r.stdout)
    s = out["session_600"]
    assert s["steps"] == 600 and s["open_steps_at"] > 0 and s["series_points"] > 0
    assert 0 < s["open_s"] < s["indexed_s"] and s["rss_peak_mb"] >= s["rss_end_mb"] > 0
    fleet = out["fleet_2"]
    assert fleet["sessions"] == 2 and fleet["steps"] > 0 and out["baseline_rss_mb"] > 0
