"""Every recording limit's default, maximum and minimum, the minimum byte budget and the per-parent
admission rules."""

from __future__ import annotations

import json
import time

import pytest

from actors.emulator.recording.errors import AdmissionRefused, InvalidOption, LimitExceeded
from actors.emulator.recording.limits import GIB, KIB, MIB, RecordingLimits
from actors.emulator.recording.reader import RecordingReader
from actors.emulator.session.core import EmulatorSession, RecordingOptions

TABLE = {  # option: (default, maximum, minimum)
    "maxBytes": (64 * MIB, 512 * MIB, 64 * KIB),
    "maxFrames": (36_000, 216_000, 1),
    "maxWallTimeMs": (900_000, 3_600_000, 1),
    "recentFrameCount": (12, 64, 1),
    "sampleEveryFrames": (4, 3_600, 1),
}


def test_defaults_match_the_table():
    assert RecordingLimits().to_json() == {name: spec[0] for name, spec in TABLE.items()}


@pytest.mark.parametrize("option", sorted(TABLE))
def test_maximum_and_minimum_are_enforced(option):
    _default, maximum, minimum = TABLE[option]
    assert RecordingLimits.from_options({option: maximum}).to_json()[option] == maximum
    assert RecordingLimits.from_options({option: minimum}).to_json()[option] == minimum
    for bad in (maximum + 1, minimum - 1, "4", True):
        with pytest.raises(InvalidOption) as refused:
            RecordingLimits.from_options({option: bad})
        assert refused.value.option == option


def test_unknown_option_is_refused():
    with pytest.raises(InvalidOption):
        RecordingLimits.from_options({"maxClips": 3})


def _session(rom, parent, **limits):
    return EmulatorSession(rom, recording=RecordingOptions(parent=parent, limits=RecordingLimits.from_options(limits)))


def test_max_frames_counts_work_across_branches(demo_rom, parent):
    with _session(demo_rom, parent, maxFrames=100) as session:
        session.step([], 50)
        info = session.checkpoint()
        session.step([], 30)
        session.restore(info.checkpoint_id)  # back to frame 50, but 80 frames of work done
        with pytest.raises(LimitExceeded) as refused:
            session.step([], 21)
        assert refused.value.limit == "maxFrames" and refused.value.used == 80
        session.step([], 20)
        assert session.status()["recording"]["framesExecuted"] == 100


def test_minimum_byte_budget_is_enforced_without_overrun(demo_rom, parent):
    with _session(demo_rom, parent, maxBytes=64 * KIB, sampleEveryFrames=1) as session:
        with pytest.raises(LimitExceeded) as refused:
            for _ in range(200):
                session.step(["right"], 4)
                session.step([], 4)
        assert refused.value.limit == "maxBytes"
        path = session.recording_path
        session.stop("failed", "budget")
    assert RecordingReader(path).status()["bytesUsed"] <= 64 * KIB


def test_checkpoints_and_frames_are_charged_to_the_budget(demo_rom, parent):
    with _session(demo_rom, parent, maxBytes=64 * KIB) as session:
        session.step([], 1)
        before = session.status()["recording"]["bytesUsed"]
        info = session.checkpoint()
        assert session.status()["recording"]["bytesUsed"] >= before + info.nbytes


def test_wall_time_limit_counts_execution_not_idle_time(demo_rom, parent):
    with _session(demo_rom, parent, maxWallTimeMs=1) as session:
        session.step([], 600)  # surely longer than 1 ms of work
        with pytest.raises(LimitExceeded) as refused:
            session.step([], 1)
        assert refused.value.limit == "maxWallTimeMs"
    with _session(demo_rom, parent) as session:
        session.step([], 10)
        idle_started = time.monotonic()
        time.sleep(0.3)  # idle between calls is not execution
        session.step([], 10)
        idle = (time.monotonic() - idle_started) * 1000
        assert session.status()["recording"]["executionWallTimeMs"] < idle - 250


def test_recent_frame_count_bounds_the_recent_ring(demo_rom, parent):
    with _session(demo_rom, parent, recentFrameCount=3) as session:
        session.step([], 40)
        recent = session.status()["recording"]["recentFrames"]
        assert [r["frame"] for r in recent] == [32, 36, 40]


def test_sample_every_frames_sets_the_retained_cadence(demo_rom, parent):
    with _session(demo_rom, parent, sampleEveryFrames=25) as session:
        session.step([], 100)
        frames = [e["frame"] for e in session.export(0, 64)["evidence"]]
        assert frames == [25, 50, 75, 100]


def _fake_recording(parent, name, max_bytes):
    path = parent / name
    path.mkdir()
    (path / "recording.json").write_text(json.dumps({"limits": {"maxBytes": max_bytes}}))


def test_parent_refuses_the_65th_directory(demo_rom, parent):
    for i in range(63):
        _fake_recording(parent, f"r{i:02d}", 64 * KIB)
    with _session(demo_rom, parent, maxBytes=64 * KIB):
        pass  # the 64th is admitted
    with pytest.raises(AdmissionRefused) as refused:
        _session(demo_rom, parent, maxBytes=64 * KIB)
    assert refused.value.rule == "recording directories" and refused.value.current == 64


def test_parent_refuses_reservations_beyond_one_gib(demo_rom, parent):
    _fake_recording(parent, "a", 512 * MIB)
    _fake_recording(parent, "b", 448 * MIB)
    with _session(demo_rom, parent, maxBytes=64 * MIB):
        pass  # exactly 1 GiB reserved is admitted
    with pytest.raises(AdmissionRefused) as refused:
        _session(demo_rom, parent, maxBytes=64 * KIB)
    assert refused.value.rule == "reserved bytes" and refused.value.current == GIB
