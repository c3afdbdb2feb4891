"""A quick variant of ``bench/emulator.py``: the rows docs/performance.md quotes for the cost of
rendering every 4th frame and for one step at a time (``--depth 1``), run as its users run them."""
from __future__ import annotations

import re
import subprocess
import sys

import pytest

from tests.harness import REPO

pytestmark = pytest.mark.timeout(180)


def bench(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "bench/emulator.py", *args], cwd=REPO, capture_output=True,
                          text=True, timeout=170)


def test_the_render_row_and_a_one_step_at_a_time_pipeline_print_their_figures():
    proc = bench("--frames", "600", "--repeats", "1", "--rows", "render4,pipe-off", "--depth", "1")
    assert proc.returncode == 0, proc.stderr[-2000:]
    out = proc.stdout
    assert "pipeline_depth 1" in out.splitlines()[0]
    [render] = [ln for ln in out.splitlines() if ln.startswith("raw PyBoy rendering every 4th frame")]
    fps, raw_fps, ratio = re.search(r"\)\s+([\d,]+)\s+([\d,]+)\s+([\d.]+)%", render).groups()
    fps, raw_fps = float(fps.replace(",", "")), float(raw_fps.replace(",", ""))
    assert float(ratio) == pytest.approx(100 * fps / raw_fps, abs=0.15), render
    [piped] = [ln for ln in out.splitlines() if ln.startswith("  supervised pipeline, recording off")]
    ms, startup = re.search(r"([\d.]+) ms \(.*start-up ([\d.]+) s", piped).groups()
    # ten steps of 60 frames, one at a time: each is a round through six processes
    assert 0.5 < float(ms) < 1000 and 0.1 < float(startup) < 60, piped
    assert not [ln for ln in out.splitlines() if ln.startswith("session core")], "only the rows asked for"


@pytest.mark.parametrize("args, says", [
    (("--rows", "render4,bogus"), "--rows: unknown row(s) bogus"),
    (("--depth", "0"), "--depth must be at least 1, not 0"),
    (("--rows", "pipe-off", "--no-pipeline"), "no row left to run"),
])
def test_bad_options_are_refused_naming_what_was_wrong(args, says):
    proc = bench(*args)
    assert proc.returncode == 2 and says in proc.stderr, proc.stderr[-500:]
