"""``bench/emulator.py``: the rows docs/performance.md quotes for the cost of rendering every 4th
frame and for one step at a time (``--depth 1``), run as its users run them, and its two
helpers checked against what they claim (real PyBoy, a real supervised session)."""

from __future__ import annotations

import importlib.util
import json
import os
import re
import subprocess
import sys

import pytest

from tests.harness import REPO

pytestmark = pytest.mark.timeout(180)


def bench(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "bench/emulator.py", *args], cwd=REPO, capture_output=True, text=True, timeout=170
    )


@pytest.fixture(scope="module")
def emulator_bench():
    spec = importlib.util.spec_from_file_location("bench_emulator", os.path.join(REPO, "bench", "emulator.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_render_row_and_a_one_step_at_a_time_pipeline_print_their_figures():
    proc = bench("--frames", "600", "--repeats", "1", "--rows", "render4,pipe-off", "--depth", "1")
    assert proc.returncode == 0, proc.stderr[-2000:]
    lines = proc.stdout.splitlines()
    assert "pipeline_depth 1" in lines[0]
    [render] = [ln for ln in lines if ln.startswith("raw PyBoy rendering every 4th frame")]
    assert re.search(r"\)\s+[\d,]+\s+[\d,]+\s+[\d.]+%", render), render
    [row] = [ln for ln in lines if ln.startswith("supervised pipeline, recording off")]
    fps = float(re.search(r"off\s+([\d,]+)", row).group(1).replace(",", ""))
    [piped] = [ln for ln in lines if ln.startswith("  supervised pipeline, recording off")]
    ms, startup = re.search(r"([\d.]+) ms \(.*start-up ([\d.]+) s", piped).groups()
    # one round: the mean step is the frames/s of the same window, turned around
    assert float(ms) == pytest.approx(1000 * 60 / fps, rel=0.01), (row, piped)
    assert 0.1 < float(startup) < 60, piped
    assert not [ln for ln in lines if ln.startswith("session core")], "only the rows asked for"


def test_the_render_row_ticks_four_frames_at_a_time_rendering_each_last(emulator_bench, monkeypatch):
    ticks = []

    class CountingPyBoy(emulator_bench.PyBoy):  # the real emulator, its tick calls noted
        def tick(self, count=1, render=True, sound=True):
            ticks.append((count, render, sound))
            return super().tick(count, render, sound)

    monkeypatch.setattr(emulator_bench, "PyBoy", CountingPyBoy)
    rom, plan = emulator_bench.build_rom(), emulator_bench.inputs(3)
    emulator_bench.raw(rom, plan, render_every=4)
    assert ticks[1:] == [(4, True, False)] * 45  # after the warm-up tick: 15 a step
    ticks.clear()
    emulator_bench.raw(rom, plan)
    assert ticks[1:] == [(60, True, False)] * 3


def test_depth_reaches_the_policy_and_the_step_time_is_the_journals(emulator_bench, tmp_path):
    fps, _, ms, startup = emulator_bench.pipeline(600, False, tmp_path, depth=1)
    [base] = [p for p in tmp_path.iterdir() if p.name.startswith("p-")]
    rows = emulator_bench.session_rows(base)
    proposals = [r for r in rows if r["event"] == "proposal"]
    assert proposals and not [r for r in proposals if r.get("pipeline_depth")], (
        "at depth 1 no proposal is decided ahead (pipelined ones carry pipeline_depth)"
    )
    first = next(r for r in rows if r["event"] == "observation")
    results = [r for r in rows if r["event"] == "action_result"]
    accepted = sum(r["outcome"] == "accepted" for r in results)
    window = emulator_bench._stamp(results[-1]["recorded_at"]) - emulator_bench._stamp(first["recorded_at"])
    assert ms == pytest.approx(window * 1000 / accepted) and fps == pytest.approx(accepted * 60 / window)
    assert 0 < startup < 60
    journal = next(base.glob("capture/sessions/*/events.jsonl"))
    assert json.loads(journal.read_text().splitlines()[0])["event"] == "session_start"


@pytest.mark.parametrize(
    "args, says",
    [
        (("--rows", "render4,bogus"), "--rows: unknown row(s) bogus"),
        (("--depth", "0"), "--depth must be 1..64"),
        (("--depth", "65"), "--depth must be 1..64"),
        (("--pipeline-step", "0"), "--pipeline-step must be at least 1 frame"),
        (("--rows", "pipe-off", "--no-pipeline"), "no row left to run"),
    ],
)
def test_bad_options_are_refused_naming_what_was_wrong(args, says):
    proc = bench(*args)
    assert proc.returncode == 2 and says in proc.stderr, proc.stderr[-500:]
