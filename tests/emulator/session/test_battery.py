"""Battery saves: a save loaded at the start is the cartridge's RAM (not just a file that
exists), it is journalled with its SHA-256, kept in the recording, and counted in bytesUsed."""

from __future__ import annotations

import hashlib
import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from actors.emulator.recording.errors import InvalidOption
from actors.emulator.recording.reader import RecordingReader, directory_bytes
from actors.emulator.session.battery import BatterySave
from actors.emulator.session.core import EmulatorSession, RecordingOptions
from actors.emulator.session.resume import resume_from_latest_checkpoint


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def test_a_loaded_battery_save_is_the_cartridges_ram_and_is_journalled(battery_rom, battery_pattern, parent):
    save = BatterySave(battery_pattern, "/saves/demo.ram")
    session = EmulatorSession(battery_rom, recording=RecordingOptions(parent=parent), battery=save)
    assert session.rom.battery
    assert session.battery_ram() == battery_pattern, "the save was loaded into the cartridge RAM"
    session.step([], 120)
    assert session.battery_ram() == battery_pattern
    session.stop("passed", "battery kept")
    session.close()
    path = session.recording_path
    header = RecordingReader(path).header
    assert header["batteryLoaded"] == {"source": "/saves/demo.ram", "sha256": _sha(battery_pattern), "bytes": 8192}
    assert header["batteryStart"]["sha256"] == _sha(battery_pattern)
    assert (path / "battery" / "start.ram").read_bytes() == battery_pattern
    assert (path / "battery" / "battery.ram").read_bytes() == battery_pattern, "carried to the next session"
    stop = next(e for e in RecordingReader(path).scan.events if e["kind"] == "stop")
    assert stop["battery"] == {"sha256": _sha(battery_pattern), "bytes": 8192}


def test_without_a_save_the_ram_starts_empty_and_nothing_is_claimed_loaded(battery_rom, parent):
    with EmulatorSession(battery_rom, recording=RecordingOptions(parent=parent)) as session:
        assert session.battery_ram() == bytes(8192)
        header = RecordingReader(session.recording_path).header
        assert header["batteryLoaded"] is None and header["batteryStart"]["sha256"] == _sha(bytes(8192))


def test_battery_bytes_are_counted_in_bytes_used(battery_rom, battery_pattern, parent):
    session = EmulatorSession(
        battery_rom, recording=RecordingOptions(parent=parent), battery=BatterySave(battery_pattern, "pattern")
    )
    session.step([], 60)
    live = session.status()["recording"]["bytesUsed"]
    assert live >= 2 * 8192, "start.ram and battery.ram are counted from the start"
    session.stop(None, "done")
    stopped = session.status()["recording"]["bytesUsed"]
    session.close()
    path = session.recording_path
    manifest = json.loads((path / "recording.json").read_text())
    on_disk = directory_bytes(path)
    # nothing on disk is missing from the manifest's count (it may count a few bytes more:
    # its own last change of size, and files that exist only while the recording is open)
    assert on_disk - manifest["bytesUsed"] < 64, (manifest["bytesUsed"], stopped, on_disk)
    assert abs(manifest["bytesUsed"] - stopped) < 64
    assert RecordingReader(path).status()["bytesUsed"] == on_disk


def test_a_battery_save_of_the_wrong_size_is_refused_before_anything_is_created(battery_rom, demo_rom, parent):
    with pytest.raises(InvalidOption, match="8,192 bytes"):
        EmulatorSession(battery_rom, recording=RecordingOptions(parent=parent), battery=BatterySave(b"x" * 100, "s"))
    with pytest.raises(InvalidOption, match="no battery"):
        EmulatorSession(demo_rom, recording=RecordingOptions(parent=parent), battery=BatterySave(b"x" * 100, "s"))
    assert list(parent.iterdir()) == []


def test_a_crash_resume_without_a_checkpoint_boots_with_the_battery_it_started_with(
    battery_rom, battery_pattern, tmp_path
):
    rom_path, save, path = tmp_path / "battery.gb", tmp_path / "demo.ram", tmp_path / "attempt"
    rom_path.write_bytes(battery_rom)
    save.write_bytes(battery_pattern)
    worker = subprocess.Popen(
        [
            sys.executable,
            str(Path(__file__).with_name("restore_worker.py")),
            str(rom_path),
            str(path),
            json.dumps([[[], 30]]),
            str(save),
        ],
        cwd=Path(__file__).resolve().parents[3],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        assert worker.stdout.readline().startswith("READY "), "the worker recorded its steps"
    finally:
        os.kill(worker.pid, signal.SIGKILL)
        worker.wait(timeout=30)
        worker.stdin.close()
        worker.stdout.close()
    save.write_bytes(bytes(8192))  # the source file changing later must not matter
    session = resume_from_latest_checkpoint(path, battery_rom)
    try:
        assert session.resume_info["branch"]["checkpointId"] is None and session.frame == 0, "booted again"
        assert session.battery_ram() == battery_pattern, "with the battery RAM the recording started with"
    finally:
        session.close()
