"""Pipelined steps end to end: the explorer decides ahead, yet every step keeps its own
proposal, its own fsynced intent (before it is sent) and its own result; the session stops at
exactly ``max_steps`` decisions; a SIGKILL of the emulator with steps in flight records them
``unknown`` and sends none of them again."""

from __future__ import annotations

import collections
import datetime
import signal
import subprocess
import sys

import pytest

from tests.harness import REPO, kill, wait_for

from .conftest import recording_events

pytestmark = pytest.mark.timeout(90)
EXPLORE = ("policy.module=pyboy_explore", "emulator.checkpoint_every_frames=null")


def _in_flight_peak(rows: list[dict]) -> int:
    """The most attempts ever waiting for their result, checking that each result follows its attempt."""
    waiting, peak = set(), 0
    for row in rows:
        if row["event"] == "action_attempt":
            waiting.add(row["attempt_id"])
            peak = max(peak, len(waiting))
        elif row["event"] == "action_result":
            assert row["attempt_id"] in waiting, f"result before its attempt: {row['attempt_id']}"
            waiting.remove(row["attempt_id"])
    assert not waiting, f"attempts without a result: {sorted(waiting)}"
    return peak


def _slowest_intent_s(rows: list[dict]) -> float:
    """The longest wait from a proposal's execute status row to its attempt row (seconds): a
    row that woke nobody waits for the actuator's follow to time out (0.5 s)."""
    stamp = lambda r: datetime.datetime.fromisoformat(r["recorded_at"].replace("Z", "+00:00")).timestamp()  # noqa: E731
    executed = {
        r["proposal_id"]: stamp(r) for r in rows if r["event"] == "proposal_status" and r["status"] == "execute"
    }
    return max(stamp(r) - executed[r["proposal_id"]] for r in rows if r["event"] == "action_attempt")


def test_pipelined_steps_each_keep_their_own_intent_and_result(pyboy_session):
    s = pyboy_session(
        *EXPLORE,
        "policy.settings.pipeline_depth=6",
        "emulator.frames_per_step=20",
        "game.seed=4",
        args=("--max-steps", "60"),
    )
    assert s.wait(60) == 0, s.stderr[-3000:]
    assert s.summary()["reason"] == "max_steps"
    proposals, attempts, results = s.events("proposal"), s.events("action_attempt"), s.events("action_result")
    assert len(proposals) == len(attempts) == len(results) == 60, "exactly max_steps decisions, each sent once"
    assert {r["outcome"] for r in results} == {"accepted"}
    assert [p["input_index"] for p in proposals] == list(range(1, 61)), "the seeded stream, in order"
    assert all(p["pipeline_depth"] == 6 for p in proposals)
    per_observation = collections.defaultdict(list)
    for p in proposals:
        per_observation[p["observation_id"]].append(p["decided_ahead"])
    assert all(ahead == list(range(len(ahead))) for ahead in per_observation.values())
    assert len(per_observation) < 60 and max(map(len, per_observation.values())) > 1, "decided ahead"
    assert 1 < _in_flight_peak(s.rows()) <= 6, "pipelined, and never deeper than the policy's depth"
    assert _slowest_intent_s(s.rows()) < 0.25, "an executed proposal waited for the follow's timeout"
    inputs = recording_events(s, "input")
    assert [e["actionIndex"] for e in inputs] == list(range(1, 61)), "the emulator ran each step once"
    assert [(sorted(e["buttons"]), e["frames"]) for e in inputs] == [
        (sorted(a["parameters"]["buttons"]), a["parameters"]["frames"]) for a in attempts
    ], "in intent order"
    verify = subprocess.run(
        [sys.executable, "-m", "supervisor", "capture", "verify", s.session_dir],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert verify.returncode == 0, verify.stdout + verify.stderr


def _waiting(rows: list[dict]) -> set[str]:
    """Attempts recorded so far that have no result yet."""
    attempts = {r["attempt_id"] for r in rows if r["event"] == "action_attempt"}
    return attempts - {r["attempt_id"] for r in rows if r["event"] == "action_result"}


def test_sigkill_of_the_emulator_with_steps_in_flight_never_resends_them(pyboy_session):
    s = pyboy_session(
        *EXPLORE,
        "policy.settings.pipeline_depth=8",
        "emulator.frames_per_step=30",
        "emulator.checkpoint_every_frames=60",
        "emulator.step_timeout_s=2",
        args=("--max-steps", "120"),
    )
    wait_for(
        lambda: len(s.events("action_result")) >= 30 and len(recording_events(s, "checkpoint")) >= 2,
        60,
        "30 results and two checkpoints",
    )
    emulator = s.actor_pid("emulator")
    kill(emulator, signal.SIGSTOP)  # it finishes no step now, so the steps sent to it stay in flight
    wait_for(lambda: len(_waiting(s.rows())) >= 2, 10, "steps in flight to the stopped emulator")
    kill(emulator)
    assert s.wait(80) == 0, s.stderr[-3000:]
    assert s.summary()["reason"] == "max_steps"
    attempts, results = s.events("action_attempt"), s.events("action_result")
    assert len(attempts) == len(results) == 120
    _in_flight_peak(s.rows())
    unknown = [r for r in results if r["outcome"] == "unknown"]
    assert unknown, "a step in flight when the emulator died is recorded unknown"
    assert all("never resent" in r["error"] or "no reply" in r["error"] for r in unknown)
    restarted = [r for r in s.events("actor_start") if r["actor"] == "emulator"][1]["sequence"]
    sent_to_the_dead = {a["attempt_id"] for a in attempts if a["sequence"] < restarted}
    assert {r["attempt_id"] for r in unknown} <= sent_to_the_dead, "only steps sent to the killed emulator"
    accepted = sum(r["outcome"] == "accepted" for r in results)
    inputs = recording_events(s, "input")
    assert accepted <= len(inputs) <= accepted + len(unknown), (
        "the emulator ran no step more often than the journal allows"
    )
    assert s.events("emulator_resumed"), "the emulator resumed from its newest checkpoint"


def test_an_intent_that_failed_to_record_in_a_batch_is_never_sent(pyboy_session):
    s = pyboy_session(
        *EXPLORE,
        "policy.settings.pipeline_depth=8",
        "emulator.frames_per_step=20",
        "recorder.inject_failure={event: action_attempt, nth: 3}",
        args=("--max-steps", "40"),
    )
    assert s.wait(60) == 1, s.stderr[-3000:]
    assert s.summary()["reason"] in ("journal_failed", "intent_not_recorded")
    attempts = s.events("action_attempt")
    assert attempts and len(attempts) < 40
    proposals = {p["proposal_id"]: p for p in s.events("proposal")}
    attempted = {a["proposal_id"] for a in attempts}
    assert len(proposals) > len(attempted), "a proposal's intent failed and it has no attempt"
    inputs = recording_events(s, "input")
    assert len(inputs) <= len(attempts), "no step ran without its recorded intent"
    assert [(sorted(e["buttons"]), e["frames"]) for e in inputs] == [
        (sorted(a["parameters"]["buttons"]), a["parameters"]["frames"]) for a in attempts[: len(inputs)]
    ]
