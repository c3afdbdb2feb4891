"""Failures in the pyboy pipeline: the emulator killed with SIGKILL resumes from its newest
checkpoint on a new branch and the session goes on; an intent the recorder never
acknowledged never reaches the emulator."""

from __future__ import annotations

import pytest

from actors.emulator.recording.reader import RecordingReader
from tests.harness import kill, wait_for

from .conftest import recording_dir, recording_events

pytestmark = pytest.mark.timeout(60)


def test_sigkill_of_the_emulator_resumes_from_the_newest_checkpoint_and_the_session_goes_on(pyboy_session):
    s = pyboy_session("emulator.checkpoint_every_frames=40", "emulator.step_timeout_s=2")
    wait_for(
        lambda: len(recording_events(s, "checkpoint")) >= 2 and len(s.events("action_result")) >= 25,
        40,
        "two automatic checkpoints and 25 steps",
    )
    victim = s.actor_pid("emulator")
    kill(victim)
    assert s.wait(60) == 0, s.stderr[-3000:]
    assert s.summary()["reason"] == "run_ended", "the session went on to the win"

    exits = [r for r in s.events("actor_exit") if r["actor"] == "emulator" and not r["expected"]]
    assert [(r["pid"], r["signal"]) for r in exits] == [(victim, "SIGKILL")]
    assert any(r["actor"] == "emulator" for r in s.events("actor_restart"))
    (resumed,) = s.events("emulator_resumed")
    lost, branch = resumed["lost_interval"], resumed["branch"]

    events = recording_events(s)
    at = next(i for i, e in enumerate(events) if e["kind"] == "lost-interval")
    newest = [e for e in events[:at] if e["kind"] == "checkpoint"][-1]
    assert lost == {k: v for k, v in events[at].items() if k not in ("hash", "prev", "seq", "kind")}
    assert lost["checkpointId"] == newest["checkpointId"] == branch["checkpointId"]
    assert (lost["fromActionIndex"], lost["fromFrame"]) == (newest["actionIndex"], newest["frame"])
    assert lost["toActionIndex"] >= lost["fromActionIndex"] and lost["branchId"] == "branch-0001"
    assert branch["branchId"] == "branch-0002" and branch["reason"] == "resume"
    assert events[at + 1]["kind"] == "branch" and events[at + 1]["branchId"] == "branch-0002"
    after = [e for e in events[at:] if e["kind"] == "input"]
    assert after and {e["branchId"] for e in after} == {"branch-0002"}
    assert after[0]["actionIndex"] == newest["actionIndex"] + 1, "the new branch starts at the checkpoint"
    status = RecordingReader(recording_dir(s)).status()
    assert status["status"] == "stopped" and status["branchCount"] == 2


def test_an_intent_that_was_never_acknowledged_never_reaches_the_emulator(pyboy_session):
    s = pyboy_session("recorder.inject_failure={event: action_attempt, nth: 3}")
    assert s.wait(60) == 1
    # the recorder and the actuator both ask to stop; whichever the supervisor hears first
    assert s.summary()["reason"] in ("journal_failed", "intent_not_recorded")
    attempts = s.events("action_attempt")
    assert len(attempts) == 2 and len(s.events("action_result")) == 2
    assert len(s.events("proposal_status")) >= 3, "a third step was proposed and refused"
    inputs = recording_events(s, "input")
    assert [e["actionIndex"] for e in inputs] == [1, 2], "exactly the two acknowledged steps ran"
    assert len(recording_events(s, "stepped")) == 2
    assert RecordingReader(recording_dir(s)).status()["actionCount"] == 2
