"""``bench/view.py``'s quick variant, as its users run it: a small session and a small fleet
open, every step is followed and read, and the figures it prints are present. Its session
builder is checked against the verifier: the journal it writes is a whole, intact chain."""
from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys

import pytest

from supervisor.capture.session import verify_session
from tests.harness import REPO

pytestmark = pytest.mark.timeout(180)


def test_the_quick_variant_prints_open_times_and_memory():
    r = subprocess.run([sys.executable, "bench/view.py", "--steps", "600", "--fleet", "2", "--json"], cwd=REPO,
                       capture_output=True, text=True, timeout=170)
    assert r.returncode == 0, r.stderr[-3000:]
    out = json.loads(r.stdout)
    s = out["session_600"]
    assert s["steps"] == 600 and s["open_steps_at"] > 0 and s["series_points"] > 0
    assert 0 < s["open_s"] < s["indexed_s"] and s["rss_peak_mb"] >= s["rss_end_mb"] > 0
    fleet = out["fleet_2"]
    assert fleet["sessions"] == 2 and fleet["steps"] > 0 and out["baseline_rss_mb"] > 0


def test_the_built_session_is_an_intact_chain(tmp_path):
    spec = importlib.util.spec_from_file_location("bench_view", os.path.join(REPO, "bench", "view.py"))
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    src = bench.demo_session(str(tmp_path))
    out = bench.synth_session(src, str(tmp_path / "cap"), "20260101T000000Z-built", 450)
    findings = verify_session(out).report.findings
    codes = {f.code for f in findings if f.severity == "damaged"}
    assert not codes, [f.message for f in findings if f.severity == "damaged"][:5]
    rows = [json.loads(line) for line in open(os.path.join(out, "events.jsonl"), "rb")]
    assert sum(r["event"] == "observation" for r in rows) == 450
