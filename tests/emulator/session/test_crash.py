"""A fresh process continues a recording after its owner was killed with SIGKILL."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from actors.emulator.cartridge.layout import DEMO_REGIONS
from actors.emulator.recording.errors import RecordingBusy, RecordingStopped
from actors.emulator.recording.reader import RecordingReader
from actors.emulator.session.resume import resume_from_latest_checkpoint
from actors.policy.pyboy import DEMO_STEP_FRAMES, demo_next_buttons

REPO = Path(__file__).resolve().parents[3]


def _start_worker(path: Path, steps: int) -> tuple[subprocess.Popen, dict]:
    worker = subprocess.Popen(
        [sys.executable, str(Path(__file__).with_name("crash_worker.py")), str(path), str(steps)],
        cwd=REPO,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    line = worker.stdout.readline()  # blocks until the worker has recorded its steps
    assert line.startswith("READY "), f"worker failed: {line!r}"
    return worker, json.loads(line[len("READY ") :])


def _kill(worker: subprocess.Popen) -> None:
    os.kill(worker.pid, signal.SIGKILL)
    assert worker.wait(timeout=30) == -signal.SIGKILL
    worker.stdin.close()
    worker.stdout.close()


def test_resume_after_sigkill_continues_on_a_new_branch(demo_rom, tmp_path):
    path = tmp_path / "attempt"
    worker, before = _start_worker(path, steps=41)  # odd: ends on a press, after the last checkpoint
    try:
        with pytest.raises(RecordingBusy):
            resume_from_latest_checkpoint(path, demo_rom)  # the owner is alive: refused
        assert RecordingReader(path).status()["status"] == "live"
    finally:
        _kill(worker)
    assert RecordingReader(path).status()["status"] == "interrupted"
    with open(path / "events.jsonl", "ab") as fh:
        fh.write(b'{"hash":"torn mid-wri')  # what a kill during a write can leave

    session = resume_from_latest_checkpoint(path, demo_rom, memory_regions=DEMO_REGIONS)
    try:
        status = RecordingReader(path).status()
        lost = status["lostIntervals"][0]
        assert lost["branchId"] == before["branchId"] and lost["toFrame"] == before["frame"]
        assert lost["toActionIndex"] == before["actionIndex"] and lost["fromFrame"] < before["frame"]
        assert session.branch_id == "branch-0002" and session.frame == lost["fromFrame"]
        assert status["tornTail"] is False, "the torn line was terminated and acknowledged"
        for _ in range(400):
            memory = session.observe().memory
            if memory["won"] == b"\x01":
                break
            session.step(demo_next_buttons(memory), DEMO_STEP_FRAMES)
        assert memory["won"] == b"\x01"
        session.stop("passed", "won after a crash")
    finally:
        session.close()
    final = RecordingReader(path).status()
    assert final["status"] == "stopped" and final["branchCount"] == 2 and final["finalized"]
    with pytest.raises(RecordingStopped):
        resume_from_latest_checkpoint(path, demo_rom)
