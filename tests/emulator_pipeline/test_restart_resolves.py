"""After the emulator dies, the steps in flight are resolved ``unknown`` as soon as the
supervisor's ``actor_exit`` row says so -- not after the step deadline (30 s here), since a
reply from the dead process can never come -- and none is sent again."""

from __future__ import annotations

import datetime as dt

import pytest

from tests.harness import kill, wait_for

pytestmark = pytest.mark.timeout(120)
LONG_DEADLINE = "emulator.step_timeout_s=30"
PROMPT_S = 5.0  # well under the 30 s deadline (plus 1 ms per frame) the old actuator waited


def _t(row: dict) -> float:
    return dt.datetime.fromisoformat(row["recorded_at"].replace("Z", "+00:00")).timestamp()


def _in_flight(s) -> bool:
    results = {r["attempt_id"] for r in s.events("action_result")}
    return any(a["attempt_id"] not in results for a in s.events("action_attempt"))


def _resolved_after_exit(s) -> list[float]:
    """Seconds from the emulator's actor_exit row to each unknown result."""
    exits = [r for r in s.events("actor_exit") if r["actor"] == "emulator" and not r.get("expected")]
    assert exits, "the emulator's exit was recorded"
    unknown = [r for r in s.events("action_result") if r["outcome"] == "unknown"]
    assert unknown, "a step was in flight when the emulator died"
    assert all("never resent" in r["error"] for r in unknown), [r["error"] for r in unknown]
    return [_t(r) - _t(exits[0]) for r in unknown]


def test_pipelined_steps_in_flight_are_resolved_when_the_emulator_exits(pyboy_session):
    s = pyboy_session(
        "policy.module=pyboy_explore",
        "policy.settings.pipeline_depth=8",
        "emulator.record=false",
        "emulator.frames_per_step=3000",
        LONG_DEADLINE,
        args=("--max-steps", "40"),
    )
    wait_for(lambda: len(s.events("action_result")) >= 4 and _in_flight(s), 60, "results, and steps in flight")
    kill(s.actor_pid("emulator"))
    assert s.wait(100) == 0, s.stderr[-3000:]
    delays = _resolved_after_exit(s)
    assert max(delays) < PROMPT_S, f"resolved {max(delays):.1f}s after the exit"
    attempts, results = s.events("action_attempt"), s.events("action_result")
    assert len(attempts) == len(results) == 40 and len({a["attempt_id"] for a in attempts}) == 40


def test_a_step_sent_alone_is_resolved_when_the_emulator_exits(pyboy_session):
    s = pyboy_session(
        "policy.module=pyboy_explore",
        "policy.settings.pipeline_depth=1",
        "emulator.record=false",
        "emulator.frames_per_step=40000",
        LONG_DEADLINE,
        args=("--max-steps", "3"),
    )
    wait_for(lambda: _in_flight(s), 60, "a step in flight")
    kill(s.actor_pid("emulator"))
    assert s.wait(100) == 0, s.stderr[-3000:]
    delays = _resolved_after_exit(s)
    assert max(delays) < PROMPT_S, f"resolved {max(delays):.1f}s after the exit"
    assert len(s.events("action_attempt")) == len(s.events("action_result")) == 3
