"""After a restore or a crash resume, the frames are the frames of the original route.

PyBoy keeps the window's line counter outside its save states; a state loaded into a new
PyBoy drew the window one line off in the first frame after the load (see
``Machine.settle_renderer``). These tests compare the pixels of every frame after a
checkpoint on the original route with those of the restored route, on a cartridge that uses
the window (the demo cartridge with its window switched on; rex-runner draws its score bar
with the window)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

from actors.emulator.cartridge.layout import DEMO_REGIONS
from actors.emulator.recording.limits import RecordingLimits
from actors.emulator.session.core import EmulatorSession, RecordingOptions
from actors.emulator.session.resume import resume_from_latest_checkpoint
from actors.policy.pyboy import DEMO_STEP_FRAMES, demo_next_buttons

REPO = Path(__file__).resolve().parents[3]
EVERY_FRAME = RecordingLimits(sample_every_frames=1)
LCDC_WINDOW = 0x20
#: after the checkpoint: hold right for a while (the player walks), release, wait
PLAN = [(["right"], 24), ([], 6), (["down"], 20), ([], 5)]


def _frames(session: EmulatorSession, plan) -> list[tuple[int, str]]:
    """(frame, rgbaSha256) of every native frame of ``plan``, requested as samples."""
    out = []
    for buttons, frames in plan:
        out += [(s.frame, s.rgba_sha256) for s in session.step(buttons, frames, samples=frames).samples]
    return out


def _mismatches(original, restored) -> list[int]:
    assert [f for f, _ in original] == [f for f, _ in restored], "the same frame numbers"
    return [f for (f, a), (_, b) in zip(original, restored) if a != b]


def _walk_to_checkpoint(session: EmulatorSession):
    session.step([], 120)
    for _ in range(6):
        session.step(demo_next_buttons(session.observe().memory), DEMO_STEP_FRAMES)
    session.step([], 1)
    return session.checkpoint("before the plan")


def test_restored_frames_are_the_original_routes_frames_on_a_window_cartridge(window_rom, parent):
    regions = {**DEMO_REGIONS, "lcdc": (0xFF40, 1)}
    with EmulatorSession(
        window_rom, memory_regions=regions, recording=RecordingOptions(parent=parent, limits=EVERY_FRAME)
    ) as session:
        saved = _walk_to_checkpoint(session)
        assert session.observe().memory["lcdc"][0] & LCDC_WINDOW, "the window is on in this cartridge"
        original = _frames(session, PLAN)
        assert len({h for _, h in original}) > 3, "the picture changes during the plan"
        session.restore(saved.checkpoint_id)
        restored = _frames(session, PLAN)
        assert _mismatches(original, restored) == [], "restored frames differ from the original route"
        session.restore(saved.checkpoint_id)  # a restore whose first step is a batch of frames
        assert session.step(*PLAN[0]).frame == original[PLAN[0][1] - 1][0]
        assert session.observe().rgba_sha256 == original[PLAN[0][1] - 1][1]


def test_first_frames_after_a_crash_resume_are_the_original_routes(window_rom, tmp_path):
    rom_path, path = tmp_path / "window.gb", tmp_path / "attempt"
    rom_path.write_bytes(window_rom)
    worker = subprocess.Popen(
        [
            sys.executable,
            str(Path(__file__).with_name("restore_worker.py")),
            str(rom_path),
            str(path),
            json.dumps(PLAN),
        ],
        cwd=REPO,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        line = worker.stdout.readline()  # blocks until the worker has played the plan
        assert line.startswith("READY "), f"worker failed: {line!r}"
        original = [tuple(pair) for pair in json.loads(line[len("READY ") :])]
    finally:
        os.kill(worker.pid, signal.SIGKILL)
        worker.wait(timeout=30)
        worker.stdin.close()
        worker.stdout.close()
    session = resume_from_latest_checkpoint(path, window_rom, memory_regions=DEMO_REGIONS)
    try:
        assert session.resume_info["branch"]["reason"] == "resume"
        resumed = _frames(session, PLAN)
    finally:
        session.close()
    assert _mismatches(original, resumed) == [], "resumed frames differ from the original route"


def test_rex_runner_frames_after_a_restore_match_the_original_route(rex_rom, parent):
    with EmulatorSession(rex_rom, cgb=False, recording=RecordingOptions(parent=parent, limits=EVERY_FRAME)) as s:
        s.step([], 600)
        s.step(["a"], 2)
        s.step([], 200)  # playing: the runner moves, the score bar is the window
        saved = s.checkpoint("running")
        plan = [([], 30), (["a"], 4), ([], 30)]
        original = _frames(s, plan)
        s.restore(saved.checkpoint_id)
        assert _mismatches(original, _frames(s, plan)) == [], "restored frames differ from the original route"
