"""Checkpoints: the neutral-frame rule, identity refusals, tampering, and branches on restore."""

from __future__ import annotations

import json

import pytest

from actors.emulator.recording.errors import (
    CheckpointDamaged,
    CheckpointIncompatible,
    CheckpointNotFound,
    CheckpointNotNeutral,
    CheckpointStale,
    CheckpointTampered,
)
from actors.emulator.recording.identity import build_identity
from actors.emulator.recording.reader import RecordingReader
from actors.emulator.recording.rom import header_checksum
from actors.emulator.session import checkpoints as ck
from actors.emulator.session.core import EmulatorSession, RecordingOptions


def _saved(session, label="here"):
    session.step([], 1)
    return session.checkpoint(label)


def test_save_needs_one_neutral_frame_with_nothing_held(recorded):
    recorded.step({"right"}, 4)
    with pytest.raises(CheckpointNotNeutral):
        recorded.checkpoint()
    recorded.step(set(), 1)
    info = recorded.checkpoint("released")
    assert info.frame == 125 and info.action_index == 3 and (recorded.recording_path / info.path).is_file()


def test_restore_starts_a_new_branch_and_preserves_the_original_route(recorded):
    info = _saved(recorded)
    saved_hash = recorded.observe().rgba_sha256
    recorded.step({"right"}, 4)
    recorded.step([], 30)
    branch = recorded.restore(info.checkpoint_id)
    assert branch.branch_id == "branch-0002" and branch.parent_branch_id == "branch-0001"
    assert (recorded.frame, recorded.action_index) == (info.frame, info.action_index)
    assert recorded.observe().rgba_sha256 == saved_hash
    after = recorded.step({"up"}, 4)
    assert after.span.branch_id == "branch-0002" and after.span.to_action_index == info.action_index + 1
    actions = recorded.export(0, 100)["actions"]
    assert [(a["branchId"], a["actionIndex"]) for a in actions] == [
        ("branch-0001", 1),
        ("branch-0001", 2),
        ("branch-0001", 3),
        ("branch-0001", 4),
        ("branch-0002", 3),
    ]


def test_restored_play_is_deterministic(recorded):
    info = _saved(recorded)
    first = recorded.step({"right"}, 40, samples=4)
    recorded.restore(info.checkpoint_id)
    second = recorded.step({"right"}, 40, samples=4)
    assert [s.rgba_sha256 for s in first.samples] == [s.rgba_sha256 for s in second.samples]


def _other_rom(rom: bytes) -> bytes:
    changed = bytearray(rom)
    changed[0x134] = ord("X")
    changed[0x14D] = header_checksum(changed)
    return bytes(changed)


def test_other_rom_is_refused(recorded, demo_rom, parent):
    info = _saved(recorded)
    with EmulatorSession(_other_rom(demo_rom), recording=RecordingOptions(parent=parent)) as other:
        with pytest.raises(CheckpointIncompatible) as refused:
            other.restore(recorded.recording_path / info.path)
    assert refused.value.field == "romSha256"


def test_other_cgb_mode_is_refused(recorded, demo_rom, parent):
    info = _saved(recorded)
    with EmulatorSession(demo_rom, cgb=True, recording=RecordingOptions(parent=parent)) as other:
        with pytest.raises(CheckpointIncompatible) as refused:
            other.restore(recorded.recording_path / info.path)
    assert refused.value.field == "cgb" and refused.value.found is False


def test_damaged_file_is_refused(recorded):
    info = _saved(recorded)
    path = recorded.recording_path / info.path
    data = bytearray(path.read_bytes())
    data[-10] ^= 0xFF
    path.write_bytes(bytes(data))
    with pytest.raises(CheckpointDamaged):
        recorded.restore(info.checkpoint_id)
    path.write_bytes(b"not a checkpoint")
    with pytest.raises(CheckpointDamaged, match="bad magic"):
        recorded.restore(info.checkpoint_id)


def test_consistent_but_rewritten_file_is_refused_by_the_journal_hash(recorded):
    info = _saved(recorded)
    path = recorded.recording_path / info.path
    header, state = ck.decode(path.read_bytes(), path)
    header["frame"] = 1  # self-consistent forgery: only the journal notices
    path.write_bytes(ck.encode(header, state))
    with pytest.raises(CheckpointTampered):
        recorded.restore(info.checkpoint_id)


def test_stale_versions_are_refused(recorded, tmp_path):
    info = _saved(recorded)
    header, state = ck.decode((recorded.recording_path / info.path).read_bytes(), "x")
    for field, value in (("pyboyVersion", "0.0.1"), ("protocolVersion", 0), ("implementationHash", "0" * 64)):
        forged = {**header, "identity": {**header["identity"], field: value}}
        path = tmp_path / f"{field}.ckpt"
        path.write_bytes(ck.encode(forged, state))
        with pytest.raises(CheckpointStale) as refused:
            recorded.restore(path)
        assert refused.value.field == field


def test_a_state_that_does_not_reload_identically_is_refused(recorded, tmp_path):
    info = _saved(recorded)
    header, state = ck.decode((recorded.recording_path / info.path).read_bytes(), "x")
    path = tmp_path / "truncated.ckpt"
    path.write_bytes(ck.encode(header, state[: len(state) // 2]))
    with pytest.raises(CheckpointDamaged):
        recorded.restore(path)
    path.write_bytes(ck.encode(header, state + bytes(16)))  # loads, but saves back differently
    with pytest.raises(CheckpointDamaged, match="byte-identical"):
        recorded.restore(path)
    assert recorded.branch_id == "branch-0001", "a refused restore must not start a branch"


def test_unknown_id_and_identity_fields(recorded, demo_rom):
    with pytest.raises(CheckpointNotFound):
        recorded.restore("cp-9999")
    info = _saved(recorded)
    header, _ = ck.decode((recorded.recording_path / info.path).read_bytes(), "x")
    assert header["identity"] == build_identity(recorded.rom.sha256, False)
    events = [json.loads(line) for line in (recorded.recording_path / "events.jsonl").read_text().splitlines()]
    assert events[-1]["kind"] == "checkpoint" and events[-1]["fileSha256"] == info.file_sha256


def test_automatic_checkpoints_follow_the_interval_and_wait_for_neutral(demo_rom, parent):
    with EmulatorSession(demo_rom, recording=RecordingOptions(parent=parent), checkpoint_every_frames=100) as session:
        assert session.step([], 60).checkpoint is None
        assert session.step({"a"}, 60).checkpoint is None  # due, but a button is held
        auto = session.step([], 10).checkpoint
        assert auto is not None and auto.automatic and auto.frame == 130
        assert session.step([], 60).checkpoint is None
        assert session.step([], 40).checkpoint.frame == 230
        assert RecordingReader(session.recording_path).status()["checkpointCount"] == 2
