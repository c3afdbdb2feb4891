"""What a new user loading their own cartridge needs from the profile: start from a
checkpoint (``game.start_checkpoint``), carry a battery save into the next session
(``game.battery_save`` / ``game.battery_mode``), and ``supervisor validate`` refusing a
missing or broken ROM (exit 2, the path and what is wrong named)."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys

import pytest

from actors.emulator.cartridge import build_rom
from actors.emulator.recording.reader import RecordingReader
from tests.emulator.cartridges import BATTERY_PATTERN as PATTERN
from tests.emulator.cartridges import battery_rom, with_header
from tests.harness import REPO

from .conftest import PYBOY_DEMO, recording_dir, recording_events

pytestmark = pytest.mark.timeout(120)


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _battery_rom() -> bytes:
    return battery_rom(build_rom())


def test_a_session_starts_from_the_checkpoint_the_profile_names(pyboy_session):
    first = pyboy_session("emulator.checkpoint_every_frames=120", args=("--max-steps", "40"))
    assert first.wait(60) == 0, first.stderr[-3000:]
    checkpoints = recording_events(first, "checkpoint")
    assert checkpoints, "the first session saved checkpoints"
    newest = checkpoints[-1]
    newest_file = recording_dir(first) / newest["path"]
    second = pyboy_session(f"game.start_checkpoint={recording_dir(first)}", args=("--max-steps", "3"))
    assert second.wait(60) == 0, second.stderr[-3000:]
    (started,) = second.events("emulator_started")
    assert started["start_checkpoint"]["path"] == str(newest_file.resolve())
    assert started["start_checkpoint"]["fileSha256"] == _sha(newest_file.read_bytes())
    assert started["start_checkpoint"]["checkpointId"] == newest["checkpointId"]
    with open(os.path.join(second.capture, second.events("observation")[0]["path"]), encoding="utf-8") as fh:
        first_read = json.load(fh)
    assert first_read["frame"] == newest["frame"] > 0, "the game went on from the checkpoint, not from boot"
    (branch,) = recording_events(second, "branch")
    assert branch["reason"] == "start-checkpoint" and branch["fileSha256"] == newest["fileSha256"]


def test_a_battery_save_is_loaded_and_kept_for_the_next_session(pyboy_session, tmp_path):
    rom, save = tmp_path / "battery-demo.gb", tmp_path / "saves" / "demo.ram"
    rom.write_bytes(_battery_rom())
    save.parent.mkdir()
    save.write_bytes(PATTERN)
    s = pyboy_session(
        f"game.rom={rom}", f"game.battery_save={save}", "game.battery_mode=load-and-keep", args=("--max-steps", "5")
    )
    assert s.wait(60) == 0, s.stderr[-3000:]
    (started,) = s.events("emulator_started")
    assert started["battery_save"] == {
        "source": str(save.resolve()),
        "sha256": _sha(PATTERN),
        "bytes": 8192,
        "mode": "load-and-keep",
    }
    assert (recording_dir(s) / "battery" / "start.ram").read_bytes() == PATTERN, "the cartridge started with it"
    header = RecordingReader(recording_dir(s)).header
    assert header["batteryLoaded"]["sha256"] == _sha(PATTERN)
    (kept,) = s.events("emulator_battery_kept")
    assert kept["path"] == str(save.resolve()) and kept["sha256"] == _sha(PATTERN)
    assert save.read_bytes() == PATTERN


def test_load_and_keep_creates_the_save_in_the_first_session(pyboy_session, tmp_path):
    rom, save = tmp_path / "battery-demo.gb", tmp_path / "new.ram"
    rom.write_bytes(_battery_rom())
    s = pyboy_session(
        f"game.rom={rom}", f"game.battery_save={save}", "game.battery_mode=load-and-keep", args=("--max-steps", "3")
    )
    assert s.wait(60) == 0, s.stderr[-3000:]
    assert s.events("emulator_started")[0]["battery_save"]["absent"] is True
    assert save.read_bytes() == bytes(8192), "the cartridge's (empty) RAM, ready for the next session"


def _validate(*sets: str) -> subprocess.CompletedProcess:
    cmd = [sys.executable, "-m", "supervisor", "validate", PYBOY_DEMO]
    for kv in sets:
        cmd += ["--set", kv]
    return subprocess.run(cmd, cwd=REPO, capture_output=True, text=True, timeout=60)


def _broken(tmp_path, name: str, data: bytes) -> str:
    path = tmp_path / name
    path.write_bytes(data)
    return str(path)


def test_validate_refuses_a_missing_or_broken_rom(tmp_path):
    good = bytearray(build_rom())
    bad_checksum = bytes(good[:0x14D]) + bytes([good[0x14D] ^ 0xFF]) + bytes(good[0x14E:])
    unknown_type = with_header(bytes(good), h147=0x20)
    cases = {
        str(tmp_path / "absent.gb"): "missing",
        str(tmp_path): "is a directory",
        _broken(tmp_path, "tiny.gb", b"\x00" * 300): "too small: 300 bytes",
        _broken(tmp_path, "cut.gb", bytes(good) + b"\x00" * 100): "not a multiple of 16 KiB",
        _broken(tmp_path, "bad.gb", bad_checksum): "bad header checksum",
        _broken(tmp_path, "type.gb", bytes(unknown_type)): "cartridge type 0x20",
    }
    for path, problem in cases.items():
        done = _validate(f"game.rom={path}")
        assert done.returncode == 2, (path, done.stdout, done.stderr)
        assert "game.rom" in done.stderr and path in done.stderr and problem in done.stderr, done.stderr
        assert "ok" not in done.stdout
    ok = _validate(f"game.rom={_broken(tmp_path, 'good.gb', bytes(good))}")
    assert ok.returncode == 0 and ok.stdout.strip().endswith(": ok"), ok.stderr


def test_start_refuses_a_missing_rom_before_any_process_with_validates_message(tmp_path):
    capture = tmp_path / "capture"
    missing = str(tmp_path / "absent.gb")
    start = subprocess.run(
        [
            sys.executable,
            "-m",
            "supervisor",
            "start",
            PYBOY_DEMO,
            "--set",
            f"game.rom={missing}",
            "--set",
            f"capture.root={capture}",
            "--max-steps",
            "3",
        ],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=60,
    )
    validate = _validate(f"game.rom={missing}")
    assert start.returncode == 2 == validate.returncode, start.stderr
    assert start.stderr == validate.stderr and "game.rom" in start.stderr and missing in start.stderr
    assert "session " not in start.stderr and not capture.exists(), "refused before a session or process began"


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads files whatever their mode: no unreadable ROM to test")
def test_validate_refuses_an_unreadable_rom(tmp_path):
    path = _broken(tmp_path, "locked.gb", build_rom())
    os.chmod(path, 0)
    done = _validate(f"game.rom={path}")
    assert done.returncode == 2 and "unreadable" in done.stderr and path in done.stderr


def test_validate_refuses_a_wrong_start_checkpoint_or_battery_save(tmp_path, pyboy_session):
    not_ckpt = _broken(tmp_path, "x.ckpt", b"not a checkpoint")
    done = _validate(f"game.start_checkpoint={not_ckpt}")
    assert done.returncode == 2 and "game.start_checkpoint" in done.stderr and "bad magic" in done.stderr
    no_recording = tmp_path / "empty-dir"
    no_recording.mkdir()
    done = _validate(f"game.start_checkpoint={no_recording}")
    assert done.returncode == 2 and "not a recording" in done.stderr
    save = _broken(tmp_path, "demo.ram", PATTERN)
    done = _validate(f"game.battery_save={save}")  # the demo cartridge has no battery
    assert done.returncode == 2 and "game.battery_save" in done.stderr and "has no battery" in done.stderr
    rom = _broken(tmp_path, "battery.gb", _battery_rom())
    done = _validate(f"game.rom={rom}", f"game.battery_save={_broken(tmp_path, 'short.ram', b'x' * 10)}")
    assert done.returncode == 2 and "8,192 bytes" in done.stderr
    done = _validate(f"game.rom={rom}", f"game.battery_save={tmp_path / 'absent.ram'}")
    assert done.returncode == 2 and "game.battery_save" in done.stderr
    assert (
        _validate(
            f"game.rom={rom}", f"game.battery_save={tmp_path / 'absent.ram'}", "game.battery_mode=load-and-keep"
        ).returncode
        == 0
    ), "created by the first session"
