"""Starting a new session from a checkpoint file of an earlier one (``game.start_checkpoint``)."""

from __future__ import annotations

import hashlib

import pytest

from actors.emulator.cartridge.layout import DEMO_REGIONS
from actors.emulator.recording.errors import CheckpointIncompatible
from actors.emulator.recording.reader import RecordingReader
from actors.emulator.session.core import EmulatorSession, RecordingOptions
from actors.policy.pyboy import DEMO_STEP_FRAMES, demo_next_buttons


def _played_checkpoint(rom: bytes, parent, steps: int = 12):
    """Play the demo cart a while, save a checkpoint; (its file, the memory there, its frame)."""
    with EmulatorSession(rom, memory_regions=DEMO_REGIONS, recording=RecordingOptions(parent=parent)) as earlier:
        earlier.step([], 120)
        for _ in range(steps):
            earlier.step(demo_next_buttons(earlier.observe().memory), DEMO_STEP_FRAMES)
        earlier.step([], 1)
        info = earlier.checkpoint("half way")
        memory = earlier.observe().memory
        earlier.stop("passed", "a checkpoint for the next session")
    return earlier.recording_path / info.path, memory, info


def test_a_new_session_starts_where_the_checkpoint_was(demo_rom, parent):
    path, memory, info = _played_checkpoint(demo_rom, parent)
    assert (memory["player_x"], memory["player_y"]) != (b"\x05", b"\x0e"), "the player has moved"
    with EmulatorSession(demo_rom, memory_regions=DEMO_REGIONS, recording=RecordingOptions(parent=parent)) as s:
        branch = s.start_from_checkpoint(path)
        obs = s.observe()
        assert (obs.frame, s.action_index) == (info.frame, info.action_index)
        assert obs.memory == memory, "the game state is the checkpoint's, not a fresh boot"
        events = RecordingReader(s.recording_path).scan.events
        (event,) = [e for e in events if e["kind"] == "branch"]
        assert event["reason"] == "start-checkpoint" and branch.reason == "start-checkpoint"
        assert event["checkpointFile"] == str(path.resolve())
        assert event["fileSha256"] == hashlib.sha256(path.read_bytes()).hexdigest()
        assert event["sourceCheckpointId"] == info.checkpoint_id
        (saved,) = [e for e in events if e["kind"] == "checkpoint"]
        assert saved["label"] == "start checkpoint", "kept in this recording so a crash resume returns to it"
        s.step(demo_next_buttons(obs.memory), DEMO_STEP_FRAMES)
        assert s.frame == info.frame + DEMO_STEP_FRAMES


def test_a_checkpoint_of_another_cartridge_is_refused(demo_rom, battery_rom, parent):
    path, _memory, _info = _played_checkpoint(demo_rom, parent, steps=2)
    with EmulatorSession(battery_rom, recording=RecordingOptions(parent=parent)) as other:
        with pytest.raises(CheckpointIncompatible, match="romSha256"):
            other.start_from_checkpoint(path)
