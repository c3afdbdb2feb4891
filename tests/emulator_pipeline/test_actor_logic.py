"""The emulator actor's request handling and the actuator sink's mapping, in one process
(the whole-process behaviour is in test_pyboy_sessions.py and test_pyboy_failures.py)."""

from __future__ import annotations

import threading
import types

import pytest

from actors.actuator.sink import step_message
from actors.emulator.cartridge.layout import DEMO_REGIONS
from actors.emulator.session.actor import EmulatorActor, stop_reason
from actors.emulator.session.config import EmulatorConfig
from actors.emulator.session.core import EmulatorSession, RecordingOptions
from protocol import from_emulator as rep
from protocol import to_emulator as req
from protocol.to_recorder import Finalize


@pytest.fixture
def actor(tmp_path):
    ctx = types.SimpleNamespace(
        session_dir=str(tmp_path / "s"),
        capture_root=str(tmp_path),
        client=lambda name: None,
        recorder=lambda: None,
        status={},
        stopping=threading.Event(),
    )
    config = EmulatorConfig.from_profile(lambda key, default=None: default)
    a = EmulatorActor(ctx, config)
    a.session = EmulatorSession(
        config.rom, memory_regions=DEMO_REGIONS, recording=RecordingOptions(path=a.recording_dir)
    )
    yield a
    a.session.close()


def test_observe_and_step_replies_carry_capture_relative_evidence(actor, tmp_path):
    stepped = actor.answer(req.Step(attempt_id="a-1", buttons=["right"], frames=120, samples=1))
    assert isinstance(stepped, rep.Stepped) and stepped.held == ["right"] and stepped.frame == 120
    assert stepped.span["toActionIndex"] == 1 and stepped.samples[0]["png"].startswith("s/recording/frames/")
    assert (tmp_path / stepped.samples[0]["png"]).is_file()
    observed = actor.answer(req.Observe(read_id="r-1"))
    assert isinstance(observed, rep.Observed) and observed.memory["magic"] == "5a"
    assert (tmp_path / observed.frame_png).is_file() and observed.recording == "s/recording"


def test_refusals_say_whether_anything_ran(actor):
    bad = actor.answer(req.Step(attempt_id="a-1", buttons=["turbo"], frames=4))
    assert isinstance(bad, rep.EmulatorErrorReply) and (bad.code, bad.effect) == ("invalid-button", "none")
    neutral = actor.answer(req.Checkpoint(label="x"))
    assert neutral.code == "checkpoint-not-neutral" and neutral.effect == "none"
    other = actor.answer(Finalize(reason="r", exit_code=0))
    assert other.code == "unexpected-type"
    assert actor.session.action_index == 0


def test_the_sink_refuses_malformed_actions_before_sending():
    assert step_message("step", {"buttons": ["a"], "frames": 4}, "a-1").samples == 0
    for action, params in (
        ("press", {"frames": 4}),
        ("step", {"buttons": "a", "frames": 4}),
        ("step", {"buttons": [], "frames": True}),
        ("step", {"buttons": []}),
    ):
        with pytest.raises(ValueError):
            step_message(action, params, "a-1")


def test_the_recording_stop_reason_comes_from_the_session_journal(tmp_path):
    (tmp_path / "events.jsonl").write_text(
        '{"event":"session_start"}\n{"event":"session_stopping","reason":"max_steps","detail":""}\n'
    )
    assert stop_reason(str(tmp_path)) == "the gamerig session stopped (max_steps)"
    assert stop_reason(str(tmp_path / "absent")) == "the gamerig session stopped"


def test_a_step_batch_runs_each_step_as_if_alone_and_never_twice(actor):
    steps = [
        {"attempt_id": "a-1", "buttons": ["right"], "frames": 8},
        {"attempt_id": "a-2", "buttons": ["turbo"], "frames": 4},
        {"attempt_id": "a-3", "frames": 4},
        {"attempt_id": "a-4", "buttons": [], "frames": 6},
    ]
    batch = actor.answer(req.StepBatch(steps=steps))
    assert isinstance(batch, rep.SteppedBatch)
    assert [r["type"] for r in batch.replies] == [
        "emulator_stepped",
        "emulator_error",
        "emulator_error",
        "emulator_stepped",
    ]
    assert batch.replies[1]["body"]["code"] == "invalid-button" and batch.replies[1]["body"]["effect"] == "none"
    assert batch.replies[2]["body"]["code"] == "bad-request" and "steps[2]" in batch.replies[2]["body"]["message"]
    assert [r["body"].get("frame") for r in batch.replies] == [8, None, None, 14]
    again = actor.answer(req.StepBatch(steps=steps))  # a repeated step id gets its first reply
    assert [r["body"].get("frame") for r in again.replies] == [8, None, None, 14]
    assert actor.session.action_index == 2 and actor.session.frame == 14
