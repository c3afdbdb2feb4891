"""A clip of a live recording, made by the emulator session that writes it (what the emulator
actor does for an agent's ``emulator_clip``): committed retained frames only, charged to the
writer's own byte budget; a clip that does not fit is refused and leaves nothing behind."""

from __future__ import annotations

import json

import pytest

from actors.emulator.cartridge import build_rom
from actors.emulator.cartridge.layout import DEMO_REGIONS
from actors.emulator.recording.errors import LimitExceeded, OutputRefused, RecordingBusy
from actors.emulator.recording.limits import RecordingLimits
from actors.emulator.recording.reader import directory_bytes, ledger_outside_bytes
from actors.emulator.session.core import EmulatorSession, RecordingOptions
from actors.emulator.tools import clips

pytestmark = pytest.mark.timeout(60)
CLIP = {"startFrame": 4, "endFrame": 120}


def live_clip(session, request: dict, workspace):
    """What the emulator actor does for an agent's clip of its live recording."""
    return clips.clip_live(session.live_recording(), request, workspace)


def session_in(workspace, **limits) -> EmulatorSession:
    parent = workspace / "artifacts" / "playtests"
    parent.mkdir(parents=True)
    options = RecordingOptions(parent=parent, limits=RecordingLimits.from_options(limits))
    session = EmulatorSession(build_rom(), memory_regions=DEMO_REGIONS, recording=options)
    session.step([], 120)
    return session


def test_the_writer_clips_its_live_recording_and_charges_its_own_budget(tmp_path):
    session = session_in(tmp_path)
    try:
        before = session.status()["recording"]["bytesUsed"]
        made = live_clip(session, {**CLIP, "outputPath": "artifacts/clips/boot.gif"}, tmp_path)
        gif = tmp_path / "artifacts" / "clips" / "boot.gif"
        assert gif.read_bytes()[:6] == b"GIF89a" and made["bytes"] == gif.stat().st_size
        assert made["sourceImages"] == 30 and made["ledger"]["bytesUsedBefore"] == before  # frames 4, 8 .. 120
        recording = session.recording_path
        line = (recording / "quota-ledger.jsonl").read_text().splitlines()
        assert [json.loads(x)["name"] for x in line] == ["artifacts/clips/boot.gif"]
        assert session.status()["recording"]["bytesUsed"] == before + made["bytes"] + len(line[0]) + 1
        with pytest.raises(RecordingBusy):  # from disk, beside the writer: refused
            clips.clip({**CLIP, "recordingPath": str(recording), "outputPath": "artifacts/clips/x.gif"}, tmp_path)
        with pytest.raises(OutputRefused, match="already exists"):
            live_clip(session, {**CLIP, "outputPath": "artifacts/clips/boot.gif"}, tmp_path)
        with pytest.raises(OutputRefused, match="only the recording directory"):
            live_clip(session, {**CLIP, "outputPath": str(tmp_path.parent / "out.gif")}, tmp_path)
        inside = live_clip(session, {**CLIP, "outputPath": str(recording / "clips" / "in.gif")}, tmp_path)
        assert inside["outputRoot"] == "recording" and (recording / "clips" / "in.gif").is_file()
        assert (
            directory_bytes(recording) + ledger_outside_bytes(recording) == session.status()["recording"]["bytesUsed"]
        )  # the writer's count is what is on disk
        session.step(["right"], 8)  # the session plays on after a clip
        assert session.status()["recording"]["status"] == "live"
    finally:
        session.close()


def test_a_clip_past_the_writers_byte_budget_is_refused_and_writes_nothing(tmp_path):
    session = session_in(tmp_path, maxBytes=64 * 1024)
    try:
        for frames in (30, 1):  # fill the budget with play until even a one-frame step is refused
            with pytest.raises(LimitExceeded):
                for n in range(400):
                    session.step(["right"] if n % 2 else [], frames)
        used = session.status()["recording"]["bytesUsed"]
        with pytest.raises(LimitExceeded, match=f"maxBytes exceeded: {used} used"):
            live_clip(session, {**CLIP, "outputPath": "artifacts/clips/late.gif"}, tmp_path)
        assert not (tmp_path / "artifacts" / "clips" / "late.gif").exists()
        assert (session.recording_path / "quota-ledger.jsonl").read_text() == ""
        assert session.status()["recording"]["bytesUsed"] == used
    finally:
        session.close()
