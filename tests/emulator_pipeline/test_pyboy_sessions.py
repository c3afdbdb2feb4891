"""The pyboy backend end to end: the demo cartridge won through the pipeline, and any other
cartridge (rex-runner) handed over to seeded exploration, with battery RAM kept in the session."""

from __future__ import annotations

import hashlib
import json
import os

import pytest

from actors.emulator.recording.frames import decode_rgba
from actors.emulator.recording.reader import RecordingReader

from .conftest import recording_dir, recording_events

pytestmark = pytest.mark.timeout(60)


def test_the_demo_cartridge_is_won_through_the_pipeline(pyboy_session):
    s = pyboy_session("emulator.checkpoint_every_frames=120")  # the demo is won in ~1,000 frames
    assert s.wait(60) == 0, s.stderr[-3000:]
    assert s.summary()["reason"] == "run_ended"
    last = s.events("proposal")[-1]
    assert last["run_outcome"] == "won" and last["action"] is None
    attempts, results = s.events("action_attempt"), s.events("action_result")
    assert attempts and [r["attempt_id"] for r in results] == [a["attempt_id"] for a in attempts]
    assert {r["outcome"] for r in results} == {"accepted"}
    spans = [r["response"]["recording_span"] for r in results]
    assert [(sp["fromActionIndex"], sp["toActionIndex"]) for sp in spans] == [(i, i + 1) for i in range(len(spans))], (
        "one recorded action per executed step, in order"
    )
    assert all(
        a["parameters"] == {"buttons": r["response"]["held"], "frames": a["parameters"]["frames"], "samples": 0}
        for a, r in zip(attempts, results)
    )
    status = RecordingReader(recording_dir(s)).status()
    assert status["status"] == "stopped" and "run_ended" in status["reason"]
    assert status["actionCount"] == len(attempts) and status["checkpointCount"] >= 1
    assert RecordingReader(recording_dir(s)).verify_frames() == []
    observations = s.events("observation")
    assert {o["state_type"] for o in observations} == {"pyboy"}
    final = _state(s, observations[-1])
    assert final["memory"]["won"] == "01" and final["rom"]["title"] == "GAMERIG DEMO"
    with open(os.path.join(s.capture, final["frame_png"]), "rb") as fh:  # the evidence file
        assert hashlib.sha256(decode_rgba(fh.read())).hexdigest() == final["frame_rgba_sha256"]


def test_any_other_cartridge_is_explored_and_its_battery_ram_stays_in_the_session(pyboy_session, rex_rom_copy):
    s = pyboy_session(f"game.rom={rex_rom_copy}", "game.seed=5", args=("--max-steps", "25"))
    assert s.wait(60) == 0, s.stderr[-3000:]
    assert s.summary()["reason"] == "max_steps"
    proposals = s.events("proposal")
    assert {p["source"] for p in proposals} == {"exploration"}
    handover = proposals[0]["handover"]
    assert handover["from"] == "pyboy_demo" and handover["to"] == "pyboy_explore" and handover["seed"] == 5
    assert "Rex Runner" in handover["reason"]
    assert all("handover" not in p for p in proposals[1:]), "the handover is recorded once"
    assert len(recording_events(s, "input")) == len(s.events("action_attempt"))
    battery = recording_dir(s) / "battery" / "battery.ram"
    assert battery.is_file() and battery.stat().st_size == 8192
    assert sorted(p.name for p in rex_rom_copy.parent.iterdir()) == ["rex-runner.gb"], (
        "nothing is written beside the ROM"
    )
    assert RecordingReader(recording_dir(s)).status()["rom"]["title"] == "Rex Runner"


def _state(s, row: dict) -> dict:
    with open(os.path.join(s.capture, row["path"]), encoding="utf-8") as fh:
        return json.load(fh)
