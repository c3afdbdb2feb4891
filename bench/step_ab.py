"""A/B of the game step between two commits: ``python bench/step_ab.py --base REV [--sessions N]``.

Runs the same demo session (``run/profiles/demo.yaml``, ``--steps`` per session, the same
seed) alternately from a checkout of ``--base`` (a ``git worktree`` made for the run in a
temporary directory) and from this working tree, ``--sessions`` times each, and prints per
tree: the median executed step of each session (``bench/pipeline.py``'s definition: the
observation row to the next, its intent, POST and result between them), the stage medians,
and the CPU seconds each process of the session used per executed step (user + system,
sampled with psutil until it exits; process start-up included). Alternating the trees in
one run is what makes two trees comparable on a machine whose speed drifts.

    python bench/step_ab.py --base e098bdb --sessions 3 --steps 600
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

import psutil

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, REPO)
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import pipeline_sessions  # noqa: E402
from pipeline_steps import action_steps  # noqa: E402

STAGES = ("obs_prop", "prop_att", "att_res", "res_obs", "read_ms", "request_ms")


def worktree(rev: str, where: str) -> str:
    """A checkout of ``rev`` at ``where`` (removed by ``drop_worktree``)."""
    subprocess.run(
        ["git", "-C", REPO, "worktree", "add", "--detach", where, rev], check=True, capture_output=True, text=True
    )
    return where


def drop_worktree(where: str) -> None:
    subprocess.run(["git", "-C", REPO, "worktree", "remove", "--force", where], capture_output=True)


def cpu_of(proc: subprocess.Popen) -> dict[str, float]:
    """CPU seconds per process of the session tree rooted at ``proc``, until it exits."""
    root = psutil.Process(proc.pid)
    last: dict[int, tuple[str, float]] = {}
    while proc.poll() is None:
        try:
            for p in [root, *root.children(recursive=True)]:
                try:
                    t = p.cpu_times()
                    name = last[p.pid][0] if p.pid in last else pipeline_sessions.proc_name(p.cmdline())
                    last[p.pid] = (name, t.user + t.system)
                except psutil.Error:
                    pass
        except psutil.Error:
            pass
        time.sleep(0.05)
    out: dict[str, float] = {}
    for name, seconds in last.values():
        out[name] = out.get(name, 0.0) + seconds
    return out


def one(tree: str, steps: int, workdir: str) -> dict:
    pipeline_sessions.REPO = tree  # the session's supervisor and actors run from that tree
    s = pipeline_sessions.start_session(
        workdir, os.path.join(tree, "run", "profiles", "demo.yaml"), steps, env={"PYTHONPATH": tree}
    )
    cpu = cpu_of(s.proc)
    pipeline_sessions.finish_session(s, 120)
    executed = action_steps(s.rows)
    return {
        "median": statistics.median(x["total"] for x in executed),
        "steps": executed,
        "cpu_ms": {k: v * 1000 / len(executed) for k, v in cpu.items()},
    }


def report(name: str, runs: list[dict]) -> None:
    pooled = [x for r in runs for x in r["steps"]]
    medians = [r["median"] for r in runs]
    print(
        f"{name}: median step per session {', '.join(f'{m:.2f}' for m in medians)} ms; "
        f"median of sessions {statistics.median(medians):.2f} ms"
    )
    print(
        "  stages (median ms, pooled): "
        + "  ".join(f"{k} {statistics.median(x[k] for x in pooled):.2f}" for k in STAGES)
    )
    names = sorted({k for r in runs for k in r["cpu_ms"]})
    cpu = {k: statistics.median(r["cpu_ms"].get(k, 0.0) for r in runs) for k in names}
    print(
        f"  CPU per executed step (median of sessions, start-up included): total {sum(cpu.values()):.2f} ms; "
        + ", ".join(f"{k} {v:.2f}" for k, v in sorted(cpu.items(), key=lambda kv: -kv[1]))
    )


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--base", required=True, help="the commit to compare this working tree with")
    ap.add_argument("--sessions", type=int, default=3, help="sessions per tree, alternated")
    ap.add_argument("--steps", type=int, default=600, help="session.max_steps of each session")
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="step-ab-") as tmp:
        base = worktree(args.base, os.path.join(tmp, "base"))
        try:
            trees = {f"base {args.base}": base, "this tree": REPO}
            runs: dict[str, list[dict]] = {name: [] for name in trees}
            for n in range(args.sessions):
                for name, tree in trees.items():
                    r = one(tree, args.steps, os.path.join(tmp, f"{len(runs[name])}-{name.split()[0]}"))
                    runs[name].append(r)
                    print(f"  {name}, session {n + 1}: median step {r['median']:.2f} ms", flush=True)
        finally:
            pipeline_sessions.REPO = REPO
            drop_worktree(base)
        for name, rs in runs.items():
            report(name, rs)
    return 0


if __name__ == "__main__":
    sys.exit(main())
