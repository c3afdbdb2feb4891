"""Session core: observe, step diffs, sampling, recording spans and deterministic replay."""

from __future__ import annotations

import pytest

from actors.emulator.cartridge.layout import DEMO_REGIONS
from actors.emulator.recording.errors import InvalidButton, InvalidOption, RecordingStopped, SessionClosed
from actors.emulator.recording.frames import decode_rgba, rgba_sha256
from actors.emulator.session.core import EmulatorSession, RecordingOptions
from actors.emulator.session.sampling import sample_points
from actors.policy.pyboy import ExplorationInputs


def test_sample_points_are_even_and_include_the_endpoint():
    points, requested = sample_points(100, 60, 3, None)
    assert points == [120, 140, 160] and requested == {120, 140, 160}
    points, requested = sample_points(0, 7, 7, None)
    assert points == list(range(1, 8))
    points, requested = sample_points(2, 10, 1, 4)
    assert requested == {12} and points == [4, 8, 12]
    assert sample_points(0, 5, 0, None) == ([], set())


def test_observe_reports_frame_png_memory_held_and_rom(demo_rom):
    with EmulatorSession(demo_rom, memory_regions=DEMO_REGIONS) as session:
        session.step(["right"], 2)
        obs = session.observe()
        assert obs.frame == 2 and obs.held == ("right",)
        assert rgba_sha256(decode_rgba(obs.png)) == obs.rgba_sha256
        assert set(obs.memory) == set(DEMO_REGIONS) and obs.memory["magic"] == b"\x00"
        assert obs.rom.sha256 and obs.rom.title == "GAMERIG DEMO" and obs.cgb is False


def test_step_diffs_the_full_held_set(demo_rom):
    with EmulatorSession(demo_rom) as session:
        first = session.step({"a", "right"}, 1)
        assert first.pressed == ("a", "right") and first.released == ()
        second = session.step({"right", "up"}, 1)
        assert second.pressed == ("up",) and second.released == ("a",)
        assert second.held == ("up", "right")
        third = session.step([], 1)
        assert third.released == ("up", "right") and session.held == frozenset()
        with pytest.raises(InvalidButton):
            session.step({"turbo"}, 1)
        with pytest.raises(InvalidOption):
            session.step([], 0)
        with pytest.raises(InvalidOption):
            session.step([], 4, samples=5)


def test_requested_samples_carry_pngs_and_the_span_is_exact(recorded):
    before = recorded.status()["recording"]["prefixPin"]
    result = recorded.step({"up"}, 60, samples=3)
    assert [s.frame for s in result.samples] == [140, 160, 180]
    assert all(rgba_sha256(decode_rgba(s.png)) == s.rgba_sha256 for s in result.samples)
    span = result.span
    assert (span.from_action_index, span.to_action_index) == (1, 2)
    assert (span.from_frame, span.to_frame) == (120, 180)
    assert span.from_prefix_pin == before and span.prefix_pin == recorded.status()["recording"]["prefixPin"]
    assert span.branch_id == "branch-0001" and span.session_id == recorded.session_id
    assert span.recording_path == str(recorded.recording_path.resolve())


def _play(rom: bytes, parent, seed: int, steps: int) -> EmulatorSession:
    session = EmulatorSession(rom, recording=RecordingOptions(parent=parent))
    explorer = ExplorationInputs(seed, frame_choices=(3, 8, 20))
    for _ in range(steps):
        buttons, frames = next(explorer)
        session.step(buttons, frames, samples=1)
    return session


def test_replaying_exported_inputs_gives_identical_frame_hashes(demo_rom, parent):
    original = _play(demo_rom, parent, seed=11, steps=40)
    export = original.export(0, 4096)
    recorded_hashes = [(e["frame"], e["rgbaSha256"]) for e in original.export(0, 32)["evidence"]]
    original.stop("passed", "replay source")
    original.close()
    actions = export["actions"]
    assert len(actions) == 40 and export["nextActionOffset"] is None
    replay = EmulatorSession(demo_rom, recording=RecordingOptions(parent=parent))
    for action in actions:
        replay.step(action["buttons"], action["frames"], samples=1)
    replay_hashes = [(e["frame"], e["rgbaSha256"]) for e in replay.export(0, 32)["evidence"]]
    replay.close()
    assert replay_hashes == recorded_hashes


def test_closed_session_and_stopped_recording_refuse_work(demo_rom, parent):
    session = EmulatorSession(demo_rom, recording=RecordingOptions(parent=parent))
    session.step([], 1)
    session.stop("needs-review", "look at frame 1")
    with pytest.raises(RecordingStopped):
        session.step([], 1)
    session.close()
    with pytest.raises(SessionClosed):
        session.observe()
