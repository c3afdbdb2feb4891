"""Emulator benchmark: ``python bench/emulator.py [--frames N] [--repeats R]``.

Prints native frames per second on the demo cartridge for

1. raw PyBoy in one process (``tick(60)`` per step, the same button changes),
2. the session core with recording off (60 frames per step),
3. the session core recording at the default sampling (every 4th frame retained),

each as a ratio to raw measured in the same run (best of ``--repeats`` interleaved rounds,
since these machines are noisy). Both wall-clock and process-CPU rates are shown: on a
loaded machine the CPU column is the fairer comparison. The through-the-pipeline figure is added by the pipeline.
"""

from __future__ import annotations

import argparse
import io
import shutil
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


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--frames", type=int, default=12_000, help="native frames per measurement")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args(argv)
    rom, plan = build_rom(), inputs(max(1, args.frames // STEP))
    tmp = Path(tempfile.mkdtemp(prefix="gamerig-bench-"))
    best = {key: (0.0, 0.0) for key in ("raw", "off", "recording")}
    runs = {"raw": lambda: raw(rom, plan), "off": lambda: session(rom, plan, False, tmp),
            "recording": lambda: session(rom, plan, True, tmp)}
    try:
        for _ in range(args.repeats):
            for key, run in runs.items():
                wall, cpu = run()
                best[key] = (max(best[key][0], wall), max(best[key][1], cpu))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print(f"demo cartridge, {len(plan) * STEP} frames per run, {STEP} frames per step, best of {args.repeats}")
    print(f"{'':<50} {'wall frames/s':>14} {'ratio':>7} {'CPU frames/s':>13} {'ratio':>7}")
    labels = {"raw": "raw PyBoy, one process", "off": "session core, recording off",
              "recording": "session core, default sampling (every 4th frame)"}
    for key, label in labels.items():
        (wall, cpu), (raw_wall, raw_cpu) = best[key], best["raw"]
        print(f"{label:<50} {wall:>14,.0f} {wall / raw_wall:>7.1%} {cpu:>13,.0f} {cpu / raw_cpu:>7.1%}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
