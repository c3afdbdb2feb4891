"""What each knob of the shipped pyboy profile costs: ``python bench/emulator_knobs.py``.

Runs ``supervisor start run/profiles/pyboy-demo.yaml`` as a user would on their own cartridge
(default: ``../shared/roms/rex-runner.gb``, a fast one: PyBoy runs it at well over 10,000
frames/s; ``--rom builtin`` for the demo cartridge), with the profile as shipped and with one
knob changed at a time, and prints the steady-state emulated frames per second of each
against raw PyBoy on the same cartridge measured in the same run (the same seeded
``(buttons, frames)`` stream, ``tick(frames)`` per step, one process). Every row is paired
with raw runs just before and just after it (shared machines drift); the median of
``--repeats`` paired ratios is printed with their range.

A row's frames/s: native frames of accepted steps divided by the time from the first
observation to the last action result in the session journal (start-up excluded). Rows:

* ``shipped``    the profile as it is in the repository
* ``KEY=VALUE``  the shipped profile with that one ``--set``
* ``--set K=V;K2=V2`` on the command line adds a row of your own (repeatable).
"""

from __future__ import annotations

import argparse
import datetime as dt
import io
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from emulator import session_rows

import protocol.events as ev
from actors.emulator.session.config import load_rom
from actors.policy.pyboy import ExplorationInputs

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    from pyboy import PyBoy

REPO = Path(__file__).resolve().parent.parent
PROFILE = REPO / "run" / "profiles" / "pyboy-demo.yaml"
REX = REPO.parent / "shared" / "roms" / "rex-runner.gb"
SEED = 7
#: one knob at a time against the shipped profile, and the profile as it was shipped before
#: (checkpoint every 120 frames, a retained frame every 4, the explorer's 4..60 frames a step)
OLD_SHIPPED = (
    "emulator.checkpoint_every_frames=120;emulator.recording_limits.sampleEveryFrames=4;emulator.frames_per_step=null"
)
KNOBS = [
    OLD_SHIPPED,
    "emulator.record=false",
    "emulator.checkpoint_every_frames=null",
    "emulator.checkpoint_every_frames=600",
    "emulator.checkpoint_every_frames=120",
    "emulator.recording_limits.sampleEveryFrames=4",
    "emulator.recording_limits.sampleEveryFrames=600",
    "emulator.frames_per_step=null",
    "policy.settings.pipeline_depth=1",
]


def raw(rom: bytes, steps: int) -> float:
    """Raw PyBoy frames per wall second on the explorer's stream (boot excluded)."""
    explorer = ExplorationInputs(SEED)
    plan = [next(explorer) for _ in range(steps)]
    pyboy = PyBoy(io.BytesIO(rom), window="null", sound_emulated=False)
    pyboy.tick(120)
    held: frozenset[str] = frozenset()
    started = time.perf_counter()
    for wanted, frames in plan:
        for name in held - wanted:
            pyboy.button_release(name)
        for name in wanted - held:
            pyboy.button_press(name)
        held = wanted
        pyboy.tick(frames, True, False)
    rate = sum(f for _, f in plan) / (time.perf_counter() - started)
    pyboy.stop(save=False)
    return rate


def pipeline(rom_arg: str, steps: int, sets: list[str], tmp: Path) -> float:
    """Steady-state frames per wall second of the shipped profile with ``sets`` applied."""
    base = Path(tempfile.mkdtemp(prefix="k-", dir=tmp))
    settings = [
        f"capture.root={base / 'capture'}",
        f"supervisor.runtime_dir={base / 'rt'}",
        "supervisor.progress=off",
        f"game.rom={rom_arg}",
        f"game.seed={SEED}",
        *sets,
    ]
    cmd = [sys.executable, "-m", "supervisor", "start", str(PROFILE), "--max-steps", str(steps)]
    for kv in settings:
        cmd += ["--set", kv]
    done = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True, timeout=900)
    if done.returncode != 0:
        raise SystemExit(f"session {sets} failed ({done.returncode}):\n{done.stderr[-2000:]}")
    rows = session_rows(base)
    first = next(r for r in rows if r["event"] == ev.Observation.KIND)
    results = [r for r in rows if r["event"] == ev.ActionResult.KIND]
    frames = {r["attempt_id"]: r["parameters"]["frames"] for r in rows if r["event"] == ev.ActionAttempt.KIND}
    run = sum(frames[r["attempt_id"]] for r in results if r["outcome"] == "accepted")
    return run / (_stamp(results[-1]["recorded_at"]) - _stamp(first["recorded_at"]))


def _stamp(text: str) -> float:
    return dt.datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rom", default=str(REX), help="cartridge path, or 'builtin' (default: rex-runner)")
    parser.add_argument("--steps", type=int, default=800, help="steps per session (explorer: 4..60 frames each)")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument(
        "--set",
        dest="extra",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="another row: the shipped profile with these settings (KEY=VALUE;KEY=VALUE)",
    )
    parser.add_argument("--only", action="store_true", help="only the shipped row and --set rows")
    args = parser.parse_args(argv)
    if args.rom != "builtin" and not Path(args.rom).is_file():
        raise SystemExit(f"no cartridge at {args.rom} (pass --rom PATH or --rom builtin)")
    rom, _source = load_rom(args.rom)
    rows = [[]] + [kv.split(";") for kv in ([] if args.only else KNOBS) + args.extra]
    tmp = Path(tempfile.mkdtemp(prefix="gamerig-knobs-"))
    pairs: dict[str, list[tuple[float, float]]] = {"; ".join(r) or "shipped": [] for r in rows}
    try:
        for _ in range(args.repeats):
            for sets in rows:
                before = raw(rom, args.steps)
                row = pipeline(args.rom, args.steps, sets, tmp)
                after = raw(rom, args.steps)
                pairs["; ".join(sets) or "shipped"].append(((before + after) / 2, row))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    report(pairs, args)
    return 0


def report(pairs: dict[str, list[tuple[float, float]]], args) -> None:
    print(
        f"{Path(args.rom).name}, {args.steps} explorer steps per session, {args.repeats} rounds; "
        "each row paired with raw PyBoy runs just before and after it"
    )
    print(f"{'row':<50} {'frames/s':>9} {'raw':>8} {'ratio':>7} {'(range)':>11}")
    for label, runs in pairs.items():
        ratios = [row / raw_fps for raw_fps, row in runs]
        print(
            f"{label:<50} {statistics.median(r for _, r in runs):>9,.0f} "
            f"{statistics.median(b for b, _ in runs):>8,.0f} {statistics.median(ratios):>7.1%} "
            f"{f'{min(ratios):.0%}..{max(ratios):.0%}':>11}"
        )


if __name__ == "__main__":
    sys.exit(main())
