"""Quick variants of ``bench/step_ab.py`` (A/B of the step between a commit and this tree),
``bench/http_client.py`` (the game client against httpx, per request)
and ``bench/floor.py`` (the machine's ZeroMQ and fsync floors), run as their users run them."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest

from tests.harness import REPO

pytestmark = pytest.mark.timeout(180)


def run(*args: str, timeout: float = 170) -> str:
    proc = subprocess.run([sys.executable, *args], cwd=REPO, capture_output=True, text=True, timeout=timeout)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return proc.stdout


def test_floor_prints_the_round_trip_and_the_fsync_percentiles():
    out = run("bench/floor.py", "--n", "40")
    for name in ("ZeroMQ round trip", "fsync after a 300-byte append"):
        [found] = [ln for ln in out.splitlines() if ln.startswith(name)]
        p50, p90, p99 = (int(x) for x in re.findall(r"p\d\d (\d+) us", found))
        assert 0 < p50 <= p90 <= p99


def test_step_ab_runs_the_same_session_from_a_commit_and_from_this_tree():
    head = subprocess.run(["git", "-C", REPO, "rev-parse", "--short", "HEAD"], capture_output=True, text=True)
    if head.returncode != 0:
        pytest.skip(f"not a git checkout, so no commit to compare with: {head.stderr.strip()}")
    out = run("bench/step_ab.py", "--base", head.stdout.strip(), "--sessions", "1", "--steps", "15")
    for tree in (f"base {head.stdout.strip()}", "this tree"):
        [summary] = [ln for ln in out.splitlines() if ln.startswith(f"{tree}: median step per session")]
        assert float(re.search(r"median of sessions ([\d.]+) ms", summary).group(1)) > 0
    assert out.count("CPU per executed step") == 2 and "recorder" in out
    worktrees = subprocess.run(["git", "-C", REPO, "worktree", "list"], capture_output=True, text=True).stdout
    assert "step-ab-" not in worktrees, "the temporary checkout is removed"


def test_http_client_bench_times_both_clients_on_the_three_requests():
    out = run("bench/http_client.py", "--requests", "100")
    for name in ("GET state", "GET compendium", "POST (refused)"):
        [found] = [ln for ln in out.splitlines() if ln.startswith(name)]
        ours_cpu, ours_wall, old_cpu, old_wall, ratio = (float(x) for x in re.findall(r"[\d.]+", found[16:]))
        assert 0 < ours_cpu <= ours_wall and 0 < old_cpu <= old_wall, found
        assert ratio == pytest.approx(old_cpu / ours_cpu, rel=0.02), found
