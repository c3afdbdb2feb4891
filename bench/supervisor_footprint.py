"""Supervisor footprint: ``python bench/supervisor_footprint.py [--tree DIR] [--runs N] [--sessions N]``.

The ``supervisor start`` process lives as long as its session, so what it imports it keeps.
This prints, for the source tree ``--tree`` (default: this repository; to measure an earlier
commit, ``git archive <commit> | tar -x -C DIR`` and pass DIR):

* **imports** — ``--runs`` fresh interpreters each timing ``import supervisor.commands.start``
  (``time.perf_counter`` around the import; median and range), their ``ru_maxrss`` after it,
  how many modules it loaded, and which heavy third-party packages among ``HEAVY`` came in;
* **sessions** — ``--sessions`` demo sessions (``supervisor start run/profiles/demo.yaml``,
  a fresh capture root each), sampled with psutil every 0.05 s: the supervisor process's
  peak RSS and the peak summed RSS of the session's process tree.

The interpreter is this one (run it with ``.venv/bin/python``); the tree is the working
directory of every child, so its packages are the ones imported.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

import psutil

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
HEAVY = ("numpy", "PIL", "httpx", "rich", "click", "pyboy", "mcp", "ray")
PROBE = f"""
import json, resource, sys, time
t = time.perf_counter()
import supervisor.commands.start
took = time.perf_counter() - t
print(json.dumps({{"s": took, "maxrss_kb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss,
                  "modules": len(sys.modules),
                  "heavy": [m for m in {HEAVY!r} if m in sys.modules]}}))
"""


def import_runs(tree: str, runs: int) -> list[dict]:
    out = []
    for _ in range(runs):
        p = subprocess.run(
            [sys.executable, "-c", PROBE], cwd=tree, capture_output=True, text=True, timeout=60, check=True
        )
        out.append(json.loads(p.stdout))
    return out


def session_peaks(tree: str) -> tuple[float, float]:
    """(supervisor peak RSS, session tree peak RSS) in MB over one demo session."""
    root = tempfile.mkdtemp(prefix="gamerig-footprint-")
    try:
        p = subprocess.Popen(
            [sys.executable, "-m", "supervisor", "start", "run/profiles/demo.yaml", "--set", f"capture.root={root}"],
            cwd=tree,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        sup, sup_max, tree_max = psutil.Process(p.pid), 0, 0
        while p.poll() is None:
            try:
                rss = sup.memory_info().rss
                kids = sum(c.memory_info().rss for c in sup.children(recursive=True))
            except psutil.Error:
                break
            sup_max, tree_max = max(sup_max, rss), max(tree_max, rss + kids)
            time.sleep(0.05)
        if p.wait(timeout=120) != 0:
            raise SystemExit(f"the demo session exited {p.returncode}")
        return sup_max / 2**20, tree_max / 2**20
    finally:
        shutil.rmtree(root, ignore_errors=True)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tree", default=REPO, help="source tree to measure (default: this one)")
    ap.add_argument("--runs", type=int, default=10, help="fresh interpreters timing the import")
    ap.add_argument("--sessions", type=int, default=3, help="demo sessions sampled (0: none)")
    args = ap.parse_args()
    tree = os.path.abspath(args.tree)
    runs = import_runs(tree, args.runs)
    ms = sorted(r["s"] * 1000 for r in runs)
    rss = sorted(r["maxrss_kb"] / 1024 for r in runs)
    print(f"tree {tree}")
    print(
        f"import supervisor.commands.start ({args.runs} runs): median {statistics.median(ms):.0f} ms "
        f"({ms[0]:.0f}-{ms[-1]:.0f}); maxrss median {statistics.median(rss):.1f} MB; "
        f"{runs[0]['modules']} modules; heavy packages loaded: {', '.join(runs[0]['heavy']) or 'none'}"
    )
    peaks = [session_peaks(tree) for _ in range(args.sessions)]
    if peaks:
        sup = sorted(p[0] for p in peaks)
        total = sorted(p[1] for p in peaks)
        print(
            f"demo session ({args.sessions} runs): supervisor peak RSS median "
            f"{statistics.median(sup):.1f} MB ({sup[0]:.1f}-{sup[-1]:.1f}); session tree peak RSS "
            f"median {statistics.median(total):.1f} MB ({total[0]:.1f}-{total[-1]:.1f})"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
