"""The demo session end to end: separate processes, the intent handshake, a capture on disk."""

from __future__ import annotations

import os
import signal

import pytest

from tests.harness import wait_for

pytestmark = pytest.mark.timeout(120)


def test_demo_plays_to_game_over_and_every_post_follows_its_recorded_intent(session_factory):
    s = session_factory()
    assert s.wait() == 0, s.stderr
    rows = s.rows()
    events = [r["event"] for r in rows]
    assert events[0] == "session_start" and events[-1] == "session_end"
    assert [r["sequence"] for r in rows] == list(range(1, len(rows) + 1))
    obs = [r for r in rows if r["event"] == "observation"]
    assert any(r["state_type"] == "game_over" for r in obs), "the demo must reach game over"
    end = rows[-1]
    assert end["reason"] == "run_ended" and end["exit_code"] == 0
    attempts = [r for r in rows if r["event"] == "action_attempt"]
    results = {r["attempt_id"]: r for r in rows if r["event"] == "action_result"}
    assert attempts and set(results) == {a["attempt_id"] for a in attempts}
    stats = s.game_stats()
    # the game checked, on every POST it received, that the attempt was already on disk
    assert stats["posts"] == len(attempts)
    assert stats["posts_with_intent"] == stats["posts"]
    assert stats["intent_violations"] == []
    summary = s.summary()
    assert summary["reason"] == "run_ended" and summary["steps"] == len(obs)
    assert summary["journal"]["last_sequence"] == end["sequence"]
    # the game-over dismissal has no later read: the link stays explicitly unresolved
    assert summary["awaiting_observation_after_attempt"] == [attempts[-1]["attempt_id"]]
    for r in obs:
        assert os.path.exists(os.path.join(s.capture, r["path"]))
    assert "session ended: run_ended" in s.stderr


def test_sigterm_finalizes_the_session_with_the_reason(session_factory):
    s = session_factory("session.max_steps=100000", "session.stop_on_run_end=false")
    wait_for(lambda: len(s.events("action_result")) >= 5, 60, "five action results")
    s.signal(signal.SIGTERM)
    assert s.wait() == 143
    summary = s.summary()
    assert summary["reason"] == "sigterm" and summary["exit_code"] == 143
    assert s.rows()[-1]["event"] == "session_end"


def test_sigint_finalizes_the_session_with_the_reason(session_factory):
    s = session_factory("session.max_steps=100000", "session.stop_on_run_end=false")
    wait_for(lambda: len(s.events("action_result")) >= 5, 60, "five action results")
    s.signal(signal.SIGINT)
    assert s.wait() == 130
    assert s.summary()["reason"] == "sigint"


def test_max_steps_bounds_the_session(session_factory):
    s = session_factory(args=("--max-steps", "7"))
    assert s.wait() == 0, s.stderr
    assert len(s.events("observation")) == 7
    assert s.summary()["reason"] == "max_steps"


def test_dry_run_records_proposals_without_acting(session_factory):
    s = session_factory(args=("--dry-run", "--max-steps", "5"))
    assert s.wait() == 0, s.stderr
    statuses = [r["status"] for r in s.events("proposal_status")]
    assert statuses and set(statuses) == {"dry_run"}
    assert s.events("action_attempt") == []
    assert s.game_stats()["posts"] == 0


def test_the_actors_logs_hold_no_line_per_step(session_factory):
    """A session runs for days: an actor's log (its stderr, kept under
    ``run/runtime/<session>.logs/``) must not grow with the steps at the default level."""
    s = session_factory(args=("--max-steps", "60"))
    assert s.wait() == 0, s.stderr
    steps = len(s.events("observation"))
    assert steps >= 50
    for actor in ("recorder", "observer", "policy", "actuator", "game", "model_client"):
        lines = s.log(actor).splitlines()
        assert len(lines) < 10, f"{actor}.log: {len(lines)} lines after {steps} steps: {lines[:3]}"
