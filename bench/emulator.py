"""Emulator benchmark: ``python bench/emulator.py [--frames N] [--repeats R]``.

Prints native frames per second on the demo cartridge for

1. raw PyBoy in one process (``tick(60)`` per step, the same button changes),
2. the session core with recording off (60 frames per step),
3. the session core recording at the default sampling (every 4th frame retained),

4. the same frames driven through the real supervised pipeline (``supervisor start
   run/profiles/pyboy-demo.yaml`` with the ``pyboy_explore`` policy at 60 frames per step,
   pipelined as that policy is by default: every step still has its own proposal, its own
   fsynced intent before it is sent, and its own result), with the emulator's recording off,
5. the same with recording at the default sampling,
6. and 7. rows 4 and 5 with the emulator on a CPU of its own (``supervisor.dedicated_cpu:
   emulator``; the other five processes share the remaining CPUs),

each as a ratio to raw measured in the same run (best of ``--repeats`` interleaved rounds,
since these machines are noisy). Both wall-clock and process-CPU rates are shown: on a
loaded machine the CPU column is the fairer comparison. The pipeline rows are wall-clock
only (their work is spread over six processes) and measure the steady state: native frames
of accepted steps divided by the time from the first observation to the last action result
in the session journal (process start-up excluded; it is printed separately).
"""

from __future__ import annotations

import argparse
import datetime as dt
import glob
import io
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from actors.emulator.cartridge import build_rom  # noqa: E402
from actors.emulator.policy import ExplorationInputs  # noqa: E402
from actors.emulator.session import EmulatorSession, RecordingOptions  # noqa: E402

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    from pyboy import PyBoy  # noqa: E402

STEP = 60
REPO = Path(__file__).resolve().parent.parent
PROFILE = REPO / "run" / "profiles" / "pyboy-demo.yaml"


def inputs(steps: int) -> list[frozenset[str]]:
    explorer = ExplorationInputs(7, frame_choices=(STEP,))
    return [next(explorer)[0] for _ in range(steps)]


def raw(rom: bytes, plan: list[frozenset[str]]) -> tuple[float, float]:
    pyboy = PyBoy(io.BytesIO(rom), window="null", sound_emulated=False)
    pyboy.tick(STEP)
    held: frozenset[str] = frozenset()
    started, cpu = time.perf_counter(), time.process_time()
    for wanted in plan:
        for name in held - wanted:
            pyboy.button_release(name)
        for name in wanted - held:
            pyboy.button_press(name)
        held = wanted
        pyboy.tick(STEP, True, False)
    rates = _rates(len(plan) * STEP, started, cpu)
    pyboy.stop(save=False)
    return rates


def _rates(frames: int, started: float, cpu: float) -> tuple[float, float]:
    """(frames per wall second, frames per CPU second of this process)."""
    return frames / (time.perf_counter() - started), frames / max(time.process_time() - cpu, 1e-9)


def session(rom: bytes, plan: list[frozenset[str]], record: bool, tmp: Path) -> tuple[float, float]:
    options = RecordingOptions(parent=tmp) if record else None
    with EmulatorSession(rom, recording=options) as emu:
        emu.step([], STEP)
        started, cpu = time.perf_counter(), time.process_time()
        for wanted in plan:
            emu.step(wanted, STEP)
        return _rates(len(plan) * STEP, started, cpu)


def pipeline(frames: int, record: bool, tmp: Path, step: int = STEP, dedicated: bool = False) -> tuple[float, float]:
    """(steady-state frames per wall second, whole-session wall seconds) through the pipeline."""
    base = Path(tempfile.mkdtemp(prefix="p-", dir=tmp))
    cmd = [sys.executable, "-m", "supervisor", "start", str(PROFILE), "--max-steps", str(max(1, frames // step)),
           *[a for kv in (f"capture.root={base / 'capture'}", f"supervisor.runtime_dir={base / 'rt'}",
                          "supervisor.progress=off", "policy.module=pyboy_explore", "game.seed=7",
                          f"emulator.frames_per_step={step}", f"emulator.record={str(record).lower()}",
                          "emulator.checkpoint_every_frames=null",
                          f"supervisor.dedicated_cpu={'emulator' if dedicated else 'null'}")
          for a in ("--set", kv)]]
    started = time.perf_counter()
    done = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True, timeout=600)
    total = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"pipeline session failed ({done.returncode}):\n{done.stderr[-2000:]}")
    (journal,) = glob.glob(os.path.join(base, "capture", "sessions", "*", "events.jsonl"))
    with open(journal, encoding="utf-8") as fh:
        rows = [json.loads(line) for line in fh]
    first = next(r for r in rows if r["event"] == "observation")
    results = [r for r in rows if r["event"] == "action_result"]
    frames = sum(step for r in results if r["outcome"] == "accepted")
    seconds = _stamp(results[-1]["recorded_at"]) - _stamp(first["recorded_at"])
    stats = [r for r in rows if r["event"] == "emulator_stats"]
    if stats and os.environ.get("BENCH_VERBOSE"):
        print(f"  (record={record} dedicated={dedicated}: {frames / seconds:,.0f} frames/s, "
              f"emulator busy {stats[-1]['busy_percent']}%)", file=sys.stderr)
    return frames / seconds, total


def _stamp(text: str) -> float:
    return dt.datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--frames", type=int, default=30_000, help="native frames per measurement")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--no-pipeline", action="store_true", help="skip the supervised-pipeline rows")
    parser.add_argument("--pipeline-step", type=int, default=STEP,
                        help="frames per step for the pipeline rows only (to see the per-step overhead amortize)")
    args = parser.parse_args(argv)
    rom, plan = build_rom(), inputs(max(1, args.frames // STEP))
    tmp = Path(tempfile.mkdtemp(prefix="gamerig-bench-"))
    runs = {"raw": lambda: raw(rom, plan), "off": lambda: session(rom, plan, False, tmp),
            "recording": lambda: session(rom, plan, True, tmp)}
    if not args.no_pipeline:
        frames, step = len(plan) * STEP, args.pipeline_step
        runs["pipe-off"] = lambda: pipeline(frames, False, tmp, step)
        runs["pipe-recording"] = lambda: pipeline(frames, True, tmp, step)
        runs["pipe-off-cpu"] = lambda: pipeline(frames, False, tmp, step, dedicated=True)
        runs["pipe-recording-cpu"] = lambda: pipeline(frames, True, tmp, step, dedicated=True)
    best = {key: (0.0, 0.0) for key in runs}
    try:
        for _ in range(args.repeats):
            for key, run in runs.items():
                wall, other = run()
                best[key] = (max(best[key][0], wall), other if key.startswith("pipe") else max(best[key][1], other))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    report(best, len(plan) * STEP, args.repeats, args.pipeline_step)
    return 0


def report(best: dict, frames: int, repeats: int, pipeline_step: int) -> None:
    print(f"demo cartridge, {frames} frames per run, {STEP} frames per step "
          f"({pipeline_step} in the pipeline rows), best of {repeats}")
    print(f"{'':<58} {'wall frames/s':>14} {'ratio':>7} {'CPU frames/s':>13} {'ratio':>7}")
    labels = {"raw": "raw PyBoy, one process", "off": "session core, recording off",
              "recording": "session core, default sampling (every 4th frame)",
              "pipe-off": "supervised pipeline, recording off",
              "pipe-recording": "supervised pipeline, default sampling (every 4th frame)",
              "pipe-off-cpu": "  the same, recording off, emulator on a CPU of its own",
              "pipe-recording-cpu": "  the same, default sampling, emulator on a CPU of its own"}
    (raw_wall, raw_cpu) = best["raw"]
    for key, label in labels.items():
        if key not in best:
            continue
        wall, cpu = best[key]
        if key.startswith("pipe"):
            print(f"{label:<58} {wall:>14,.0f} {wall / raw_wall:>7.1%} {'-':>13} {'-':>7}"
                  f"   (session wall {cpu:.1f} s incl. start-up)")
        else:
            print(f"{label:<58} {wall:>14,.0f} {wall / raw_wall:>7.1%} {cpu:>13,.0f} {cpu / raw_cpu:>7.1%}")


if __name__ == "__main__":
    sys.exit(main())
