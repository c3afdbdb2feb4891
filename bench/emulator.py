"""Emulator benchmark: ``python bench/emulator.py [--frames N] [--repeats R]``.

Prints native frames per second on the demo cartridge for

1. raw PyBoy in one process (``tick(60)`` per step, the same button changes),
2. the session core with recording off (60 frames per step),
3. the session core recording at the default sampling (every 4th frame retained),
4. raw PyBoy rendering every 4th frame (``15 × tick(4, render=True)`` per step instead of
   ``tick(60, render=True)``, which renders only the last frame): what recording at the
   default sampling pays in PyBoy — the 15 renders and the step run in 4-frame pieces, as
   the session core runs it to take its samples — before a single byte is hashed or written,
5. the same frames driven through the real supervised pipeline (``supervisor start
   run/profiles/pyboy-demo.yaml`` with the ``pyboy_explore`` policy at 60 frames per step,
   pipelined as that policy is by default: every step still has its own proposal, its own
   fsynced intent before it is sent, and its own result), with the emulator's recording off,
6. the same with recording at the default sampling,
7. and 8. rows 5 and 6 with the emulator on a CPU of its own (``supervisor.dedicated_cpu:
   emulator``; the other five processes share the remaining CPUs),

each as a ratio to raw measured in the same run. Shared machines drift a lot (raw PyBoy alone
has measured anywhere from 7,000 to 13,000 frames/s here within minutes), so every row is
paired with raw runs made just before and just after it, and the median of ``--repeats``
paired ratios is printed with their range. The core rows also show the ratio of process-CPU
rates; the pipeline rows the share of the emulator's time spent inside PyBoy's ``tick`` (from
its ``emulator_stats`` row), which the host's drift does not distort. The
pipeline rows are wall-clock only (their work is spread over six processes) and measure the
steady state: native frames of accepted steps divided by the time from the first
observation to the last action result in the session journal (process start-up excluded);
below the table, for each pipeline row, the mean milliseconds per accepted step in that
window (the window divided by the accepted steps) and the start-up (from starting
``supervisor`` to the first observation row), each the median over the rounds.

``--depth N`` sets the policy's ``pipeline_depth`` in the pipeline rows (``--depth 1``: one
step at a time, each step waiting for the observation after the previous result, as
``pyboy_demo`` plays); ``--rows`` picks rows (e.g. ``--rows pipe-off --depth 1``).
"""

from __future__ import annotations

import argparse
import datetime as dt
import glob
import io
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import protocol.events as ev
from actors.emulator.cartridge import build_rom
from actors.emulator.session.core import EmulatorSession, RecordingOptions
from actors.policy.pyboy import MAX_PIPELINE_DEPTH, ExplorationInputs
from protocol.journal import iter_lines

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    from pyboy import PyBoy

STEP = 60
REPO = Path(__file__).resolve().parent.parent
PROFILE = REPO / "run" / "profiles" / "pyboy-demo.yaml"


def inputs(steps: int) -> list[frozenset[str]]:
    explorer = ExplorationInputs(7, frame_choices=(STEP,))
    return [next(explorer)[0] for _ in range(steps)]


def raw(rom: bytes, plan: list[frozenset[str]], render_every: int = STEP) -> tuple[float, float]:
    """Raw PyBoy: ``tick(60)`` per step, rendering the step's last frame; with ``render_every``
    4, ``15 × tick(4)``, rendering every 4th frame."""
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
        for _ in range(STEP // render_every):
            pyboy.tick(render_every, True, False)
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


def pipeline(
    frames: int, record: bool, tmp: Path, step: int = STEP, dedicated: bool = False, depth: int | None = None
) -> tuple[float, float, float, float]:
    """(steady-state frames per wall second, the share of the emulator's wall time spent inside
    PyBoy's tick, milliseconds per accepted step, seconds from the start to the first
    observation row) through the pipeline, read from the session journal (``emulator_stats``)."""
    base = Path(tempfile.mkdtemp(prefix="p-", dir=tmp))
    cmd = [
        sys.executable,
        "-m",
        "supervisor",
        "start",
        str(PROFILE),
        "--max-steps",
        str(max(1, frames // step)),
        *[
            a
            for kv in (
                f"capture.root={base / 'capture'}",
                f"supervisor.runtime_dir={base / 'rt'}",
                "supervisor.progress=off",
                "policy.module=pyboy_explore",
                "game.seed=7",
                f"emulator.frames_per_step={step}",
                f"emulator.record={str(record).lower()}",
                "emulator.checkpoint_every_frames=null",
                "emulator.recording_limits.sampleEveryFrames=4",  # the library default, as the core rows
                f"supervisor.dedicated_cpu={'emulator' if dedicated else 'null'}",
                *([f"policy.settings.pipeline_depth={depth}"] if depth else []),
            )
            for a in ("--set", kv)
        ],
    ]
    launched = time.time()
    done = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True, timeout=600)
    if done.returncode != 0:
        raise SystemExit(f"pipeline session failed ({done.returncode}):\n{done.stderr[-2000:]}")
    rows = session_rows(base)
    first = next(r for r in rows if r["event"] == ev.Observation.KIND)
    results = [r for r in rows if r["event"] == ev.ActionResult.KIND]
    accepted = sum(1 for r in results if r["outcome"] == "accepted")
    frames = accepted * step
    seconds = _stamp(results[-1]["recorded_at"]) - _stamp(first["recorded_at"])
    startup = _stamp(first["recorded_at"]) - launched
    stats = [r for r in rows if r["event"] == ev.EmulatorStats.KIND]
    in_pyboy = stats[-1]["emulation_s"] / stats[-1]["wall_s"] if stats and stats[-1]["wall_s"] else float("nan")
    if stats and os.environ.get("BENCH_VERBOSE"):
        print(
            f"  (record={record} dedicated={dedicated}: {frames / seconds:,.0f} frames/s, "
            f"emulator busy {stats[-1]['busy_percent']}%, CPU {stats[-1].get('cpu_s')} s, "
            f"in PyBoy {stats[-1].get('emulation_s')} s of {stats[-1]['wall_s']} s)",
            file=sys.stderr,
        )
    return frames / seconds, in_pyboy, seconds * 1000 / max(accepted, 1), startup


def session_rows(base: Path) -> list[dict]:
    """Every row of the one session journal under ``base``'s capture root, read with the one
    journal reader (``protocol.journal.iter_lines``); a line that is not a whole row is an
    error (a finished session's journal has none)."""
    (journal,) = glob.glob(os.path.join(base, "capture", "sessions", "*", "events.jsonl"))
    rows = []
    for line in iter_lines(journal):
        if line.row is None:
            raise ValueError(f"{journal}: line {line.number} is not a whole journal row")
        rows.append(line.row)
    return rows


def _stamp(text: str) -> float:
    return dt.datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--frames", type=int, default=30_000, help="native frames per measurement")
    parser.add_argument("--repeats", type=int, default=5, help="rounds (each row paired with a raw run)")
    parser.add_argument("--no-pipeline", action="store_true", help="skip the supervised-pipeline rows")
    parser.add_argument(
        "--pipeline-step",
        type=int,
        default=STEP,
        help="frames per step for the pipeline rows only (to see the per-step overhead amortize)",
    )
    parser.add_argument(
        "--depth",
        type=int,
        default=None,
        help="the policy's pipeline_depth in the pipeline rows (1: one step at a time; default: the policy's own)",
    )
    parser.add_argument("--rows", default=None, help=f"comma-separated rows to run (default all): {', '.join(LABELS)}")
    args = parser.parse_args(argv)
    wanted = LABELS if args.rows is None else [r.strip() for r in args.rows.split(",") if r.strip()]
    unknown = [r for r in wanted if r not in LABELS]
    if unknown or not wanted:
        parser.error(f"--rows: unknown row(s) {', '.join(unknown) or '(none given)'}; choose from {', '.join(LABELS)}")
    if args.depth is not None and not 1 <= args.depth <= MAX_PIPELINE_DEPTH:
        parser.error(f"--depth must be 1..{MAX_PIPELINE_DEPTH} (pyboy_explore's pipeline_depth), not {args.depth}")
    if args.pipeline_step < 1:
        parser.error(f"--pipeline-step must be at least 1 frame, not {args.pipeline_step}")
    rom, plan = build_rom(), inputs(max(1, args.frames // STEP))
    tmp = Path(tempfile.mkdtemp(prefix="gamerig-bench-"))
    frames, step, depth = len(plan) * STEP, args.pipeline_step, args.depth
    every = {
        "off": lambda: session(rom, plan, False, tmp),
        "recording": lambda: session(rom, plan, True, tmp),
        "render4": lambda: raw(rom, plan, render_every=4),
        "pipe-off": lambda: pipeline(frames, False, tmp, step, depth=depth),
        "pipe-recording": lambda: pipeline(frames, True, tmp, step, depth=depth),
        "pipe-off-cpu": lambda: pipeline(frames, False, tmp, step, dedicated=True, depth=depth),
        "pipe-recording-cpu": lambda: pipeline(frames, True, tmp, step, dedicated=True, depth=depth),
    }
    runs = {k: every[k] for k in LABELS if k in wanted and not (args.no_pipeline and k.startswith("pipe"))}
    if not runs:
        parser.error("no row left to run (--no-pipeline removed every row --rows named)")
    base = lambda: raw(rom, plan)  # noqa: E731
    pairs: dict[str, list[tuple[tuple[float, float], tuple[float, float]]]] = {key: [] for key in runs}
    try:
        for _ in range(args.repeats):
            for key, run in runs.items():
                before, row, after = base(), run(), base()  # raw right before and right after
                pairs[key].append((((before[0] + after[0]) / 2, (before[1] + after[1]) / 2), row))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    piped = any(key.startswith("pipe") for key in runs)
    report(pairs, len(plan) * STEP, args.repeats, args.pipeline_step, depth if piped else None, piped)
    return 0


LABELS = {
    "off": "session core, recording off",
    "recording": "session core, default sampling (every 4th frame)",
    "render4": "raw PyBoy rendering every 4th frame (15 x tick(4))",
    "pipe-off": "supervised pipeline, recording off",
    "pipe-recording": "supervised pipeline, default sampling (every 4th frame)",
    "pipe-off-cpu": "  the same, recording off, emulator on a CPU of its own",
    "pipe-recording-cpu": "  the same, default sampling, emulator on a CPU of its own",
}


def report(
    pairs: dict, frames: int, repeats: int, pipeline_step: int, depth: int | None = None, piped: bool = True
) -> None:
    """Each row against the mean of the raw figures measured just before and just after it
    (host speed drifts a lot on shared machines): the median of the paired ratios, and their
    range. The last column is the process-CPU ratio for core rows; for pipeline rows, the
    share of the emulator's time (first request to last reply) spent inside PyBoy's tick."""
    piping = (
        f" ({pipeline_step} in the pipeline rows, pipeline_depth {depth or 'as the policy sets it'})" if piped else ""
    )
    print(
        f"demo cartridge, {frames} frames per run, {STEP} frames per step{piping}, "
        f"{repeats} rounds; every row is paired with raw runs just before and after it"
    )
    print(f"{'':<58} {'frames/s':>9} {'raw':>7} {'ratio':>7} {'(range)':>15} {'CPU ratio / in PyBoy':>21}")
    raws = [raw[0] for rows in pairs.values() for raw, _ in rows]
    print(
        f"{'raw PyBoy, one process (all raw runs)':<58} {statistics.median(raws):>9,.0f} "
        f"{'':>7} {'100.0%':>7} {f'{min(raws):,.0f}..{max(raws):,.0f}':>15}"
    )
    for key, label in LABELS.items():
        if key not in pairs:
            continue
        ratios = [row[0] / raw[0] for raw, row in pairs[key]]
        fps = statistics.median(row[0] for _, row in pairs[key])
        raw_fps = statistics.median(raw[0] for raw, _ in pairs[key])
        if key.startswith("pipe"):
            last = f"in PyBoy {statistics.median(r[1] for _, r in pairs[key]):.1%}"
        else:
            last = f"CPU {statistics.median(r[1] / b[1] for b, r in pairs[key]):.1%}"
        print(
            f"{label:<58} {fps:>9,.0f} {raw_fps:>7,.0f} {statistics.median(ratios):>7.1%} "
            f"{f'{min(ratios):.0%}..{max(ratios):.0%}':>15} {last:>21}"
        )
    piped = [key for key in LABELS if key in pairs and key.startswith("pipe")]
    if piped:
        print(
            "pipeline rows: mean ms per accepted step (the steady-state window / accepted steps) and "
            "start-up (supervisor start to the first observation row), median of the rounds (range)"
        )
        for key in piped:
            ms = [row[2] for _, row in pairs[key]]
            up = [row[3] for _, row in pairs[key]]
            print(
                f"  {LABELS[key].strip():<58} {statistics.median(ms):6.2f} ms ({min(ms):.2f}..{max(ms):.2f})"
                f"   start-up {statistics.median(up):.2f} s ({min(up):.2f}..{max(up):.2f})"
            )


if __name__ == "__main__":
    sys.exit(main())
