"""Fleet scale: ``python bench/fleet.py [--steps N] [--counts 1,2,4,8] [--no-ray] [--json]``.

For two workloads, the built-in STS2 game (``run/profiles/demo.yaml``, aggregate steps/s)
and the demo cartridge in PyBoy explored at 60 frames a step (``run/profiles/pyboy-demo.yaml``
with ``pyboy_explore``, aggregate emulated frames/s), it runs real ``supervisor fleet start``
fleets of 1, 2, 4 and 8 sessions with as many at once, each followed at once by the same
sessions one after another (concurrency 1), so both see the same machine load. Every
session runs exactly ``--steps`` steps (``stop_on_run_end: false``), so the work is the same.
Aggregate rates are over the fleet's wall time (the fleet process's start to its end:
process start-up included). Memory per session is the peak summed RSS of a session's process
tree (supervisor and actors), sampled every 0.5 s while the fleet runs; ``load`` is the
1-minute load average when the fleet ended (anything else running on the machine shows there).

Then 2 sessions of each workload through a one-node Ray head the bench starts on loopback
(``supervisor.fleet.ray_head``), next to the same 2 sessions locally. The head's start-up
and the driver's connection are reported apart from the fleet's own wall time.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import threading
import time

import psutil
import yaml

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, REPO)

from supervisor.fleet import control  # noqa: E402
from supervisor.fleet.ray_head import LocalRayHead  # noqa: E402
from supervisor.fleet.results import read_fleet  # noqa: E402

WORKLOADS = {
    "builtin": {"profile": "run/profiles/demo.yaml", "rate": "steps", "set": {}},
    "pyboy": {
        "profile": "run/profiles/pyboy-demo.yaml",
        "rate": "frames",
        "set": {"policy.module": "pyboy_explore", "emulator.frames_per_step": 60},
    },
}


def fleet_file(base: str, workload: str, sessions: int, steps: int) -> str:
    w = WORKLOADS[workload]
    data = {
        "name": f"bench-{workload}-{sessions}",
        "profile": os.path.join(REPO, w["profile"]),
        "set": {"session.max_steps": steps, "session.stop_on_run_end": False, **w["set"]},
        "matrix": {"game.seed": list(range(1, sessions + 1))},
        "capture_root": os.path.join(base, "fleets"),
    }
    path = os.path.join(base, f"{workload}-{sessions}.yaml")
    with open(path, "w", encoding="utf-8") as fh:
        yaml.safe_dump(data, fh)
    return path


class MemorySampler(threading.Thread):
    """Peak summed RSS per running session tree of one fleet root."""

    def __init__(self, root: str):
        super().__init__(daemon=True)
        self.root, self.peaks, self.done = root, {}, threading.Event()

    def run(self) -> None:
        while not self.done.wait(0.5):
            for rec in control.live_supervisors(self.root) if os.path.isdir(self.root) else []:
                try:
                    proc = psutil.Process(int(rec["pid"]))
                    rss = sum(p.memory_info().rss for p in [proc, *proc.children(recursive=True)])
                except psutil.Error:
                    continue
                self.peaks[rec["session_id"]] = max(self.peaks.get(rec["session_id"], 0), rss)


def run_fleet(
    base: str, workload: str, sessions: int, concurrency: int, steps: int, ray: LocalRayHead | None = None
) -> dict:
    root = tempfile.mkdtemp(prefix=f"root-{workload}-{sessions}-{concurrency}-{'ray' if ray else 'local'}-", dir=base)
    cmd = [
        sys.executable,
        "-m",
        "supervisor",
        "fleet",
        "start",
        fleet_file(base, workload, sessions, steps),
        "--fleet-root",
        root,
        "--progress",
        "off",
        "--runtime-dir",
        os.path.join(base, "runtime"),
    ]
    cmd += ["--ray-address", ray.address] if ray else ["--concurrency", str(concurrency)]
    sampler = MemorySampler(root)
    sampler.start()
    began = time.monotonic()
    proc = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True, env=ray.env if ray else None)
    wall = time.monotonic() - began
    sampler.done.set()
    if proc.returncode != 0:
        raise SystemExit(f"fleet failed ({proc.returncode}):\n{proc.stderr[-3000:]}")
    t = read_fleet(root)["totals"]
    return {
        "workload": workload,
        "sessions": sessions,
        "concurrency": concurrency,
        "backend": "ray" if ray else "local",
        "fleet_s": t["elapsed_s"],
        "process_s": round(wall, 2),
        "steps": t["steps"],
        "frames": t["frames"],
        "rate": round((t["frames"] if WORKLOADS[workload]["rate"] == "frames" else t["steps"]) / t["elapsed_s"], 1),
        "mem_mib": round(sum(sampler.peaks.values()) / max(1, len(sampler.peaks)) / 2**20),
        "load": round(os.getloadavg()[0], 1),
    }


def measure(base: str, counts: list[int], steps: int, use_ray: bool, say) -> list[dict]:
    out = []
    for workload in WORKLOADS:
        unit = WORKLOADS[workload]["rate"]
        for n in counts:
            r = run_fleet(base, workload, n, n, steps)
            seq = r if n == 1 else run_fleet(base, workload, n, 1, steps)  # right after: same load
            r["sequential_rate"] = seq["rate"]
            say(
                f"{workload}: {n} at once: {r['rate']} {unit}/s (one after another: {seq['rate']}), "
                f"{r['mem_mib']} MiB per session, load {r['load']}"
            )
            out.append(r)
        if use_ray:
            began = time.monotonic()
            with LocalRayHead(num_cpus=len(os.sched_getaffinity(0))) as head:
                head_s = time.monotonic() - began
                r = run_fleet(base, workload, 2, 2, steps, head)
            r["sequential_rate"] = run_fleet(base, workload, 2, 1, steps)["rate"]
            r["head_start_s"] = round(head_s, 1)
            r["connect_s"] = round(r["process_s"] - r["fleet_s"], 1)
            say(
                f"{workload}: 2 on Ray: {r['rate']} {unit}/s (one after another: {r['sequential_rate']}; "
                f"head start {head_s:.1f}s, driver start-up and connection {r['connect_s']}s)"
            )
            out.append(r)
    return out


def table(results: list[dict]) -> str:
    head = (
        "| workload | sessions | backend | aggregate rate | one after another | speed-up | "
        "fleet wall s | MiB per session | load |\n|---|---|---|---|---|---|---|---|---|"
    )
    lines = [head]
    for r in results:
        unit = WORKLOADS[r["workload"]]["rate"] + "/s"
        seq = r.get("sequential_rate")
        seq_text, gain = (f"{seq} {unit}", f"{r['rate'] / seq:.2f}x") if seq else ("-", "-")
        lines.append(
            f"| {r['workload']} | {r['sessions']} | {r['backend']} | {r['rate']} {unit} | "
            f"{seq_text} | {gain} | {r['fleet_s']:.1f} | {r['mem_mib']} | {r['load']} |"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=300, help="steps per session (default 300)")
    ap.add_argument("--counts", default="1,2,4,8", help="sessions at once (default 1,2,4,8)")
    ap.add_argument("--no-ray", action="store_true", help="skip the Ray rows")
    ap.add_argument("--keep", help="keep the fleets under this directory")
    ap.add_argument("--json", action="store_true", help="print the results as JSON")
    args = ap.parse_args(argv)
    counts = [int(c) for c in args.counts.split(",")]
    base = args.keep or tempfile.mkdtemp(prefix="gamerig-bench-fleet-")
    os.makedirs(base, exist_ok=True)
    say = (lambda _m: None) if args.json else (lambda m: print(m, flush=True))
    say(f"{len(os.sched_getaffinity(0))} CPUs, {psutil.virtual_memory().total / 2**30:.0f} GiB; fleets under {base}")
    results = measure(base, counts, args.steps, not args.no_ray, say)
    print(json.dumps(results, indent=1) if args.json else "\n" + table(results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
