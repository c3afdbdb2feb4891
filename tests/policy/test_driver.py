"""The policy actor's driver (a JournalActor): which observation it decides on (pending), how a
restarted driver replays the journal through the policy's hooks, and what it records
(propose: one proposal, or a pipelining policy's window in one batch, within max_steps) —
through the in-memory follower, and against a real recorder."""

from __future__ import annotations

import threading

import pytest
import zmq

from actors.policy.__main__ import PolicyDriver
from actors.policy.base import Policy, Proposal
from actors.runtime.actor import ActorContext
from actors.runtime.memory import MemoryFollower
from actors.runtime.recorder_client import RecorderClient
from actors.runtime.transport import Counters
from tests.harness import wait_for
from tests.runtime.live import LiveRecorder

pytestmark = pytest.mark.timeout(120)


class Scripted(Policy):
    """Always proposes ``end_turn``; ``depth`` steps may be in flight; remembers its hooks."""

    def __init__(self, depth: int = 1):
        super().__init__({}, {})
        self.depth = depth
        self.seen: list[tuple] = []

    def observe(self, obs):
        self.seen.append(("observe", obs.observation_id, obs.state.get("marker")))

    def decide(self, obs):
        return Proposal("end_turn", {}, "scripted")

    def record_result(self, proposal, result):
        self.seen.append(("result", proposal["proposal_id"], result["outcome"]))

    def pipeline_depth(self, obs):
        return self.depth


def offline_driver(policy: Policy, rows: list[dict] = (), max_steps: int | None = None) -> PolicyDriver:
    ctx = ActorContext(
        name="policy",
        session_id="s",
        session_dir="/nonexistent",
        capture_root="/nonexistent",
        endpoints={"recorder": "ipc://gamerig-test-no-recorder.sock"},
        profile={"session": {"max_steps": max_steps}},
        heartbeat_s=1.0,
        start_count=1,
        zctx=zmq.Context.instance(),
        stopping=threading.Event(),
        counters=Counters(),
    )
    follower = MemoryFollower()
    for row in rows:
        follower.append(row, state={"marker": row["observation_id"]} if row["event"] == "observation" else None)
    recorder = RecorderClient(ctx.zctx, ctx.endpoints["recorder"], session="s", sender="policy", counters=ctx.counters)
    driver = PolicyDriver(ctx, policy, follower, recorder)
    for row in follower.pump():
        driver.feed(row)
    return driver


def obs(n: int) -> dict:
    return {"event": "observation", "observation_id": f"o-{n:06d}", "step": n, "path": "unused"}


def prop(n: int, k: int = 0, depth: int | None = None) -> dict:
    row = {
        "event": "proposal",
        "proposal_id": f"p-{n:06d}" + (f"-{k + 1}" if k else ""),
        "observation_id": f"o-{n:06d}",
        "action": "end_turn",
        "parameters": {},
    }
    return {**row, "pipeline_depth": depth, "decided_ahead": k} if depth else row


def status(row: dict, st: str = "execute") -> dict:
    return {"event": "proposal_status", "proposal_id": row["proposal_id"], "status": st}


def test_it_decides_on_the_newest_observation_without_a_proposal():
    assert offline_driver(Scripted()).pending() is None
    driver = offline_driver(Scripted(), [obs(1)])
    assert driver.pending().observation_id == "o-000001"
    driver = offline_driver(Scripted(), [obs(1), prop(1), status(prop(1), "wait")])
    assert driver.pending() is None, "decided already"
    driver = offline_driver(Scripted(), [obs(1), prop(1), status(prop(1), "wait"), obs(2)])
    assert driver.pending().observation_id == "o-000002"


def test_no_decision_once_the_session_stops_or_max_steps_decisions_are_made():
    stopping = {"event": "session_stopping", "reason": "stop_command"}
    assert offline_driver(Scripted(), [obs(1), stopping]).pending() is None
    rows = [obs(1), prop(1), status(prop(1), "wait"), obs(2)]
    assert offline_driver(Scripted(), rows, max_steps=1).pending() is None
    assert offline_driver(Scripted(), rows, max_steps=2).pending().observation_id == "o-000002"


def test_a_pipelining_policy_decides_again_on_the_same_observation_until_half_its_window_is_busy():
    first = prop(1, 0, depth=4)
    driver = offline_driver(Scripted(depth=4), [obs(1), first, status(first)])
    assert driver.pending().observation_id == "o-000001", "one of four in flight: decide again"
    rows = [obs(1)] + [r for k in range(3) for r in (prop(1, k, depth=4), status(prop(1, k, depth=4)))]
    assert offline_driver(Scripted(depth=4), rows).pending() is None, "three of four in flight"
    waited = offline_driver(Scripted(depth=4), [obs(1), first, status(first, "wait")])
    assert waited.pending() is None, "the last decision was not executed: wait for a new observation"


def test_a_restarted_driver_replays_observations_and_results_through_the_policy():
    policy = Scripted()
    attempt = {"event": "action_attempt", "attempt_id": "a-1", "proposal_id": "p-000001", "observation_id": "o-000001"}
    result = {"event": "action_result", "attempt_id": "a-1", "outcome": "rejected"}
    offline_driver(policy, [obs(1), prop(1), status(prop(1)), attempt, result, obs(2)])
    assert policy.seen == [
        ("observe", "o-000001", "o-000001"),
        ("result", "p-000001", "rejected"),
        ("observe", "o-000002", "o-000002"),
    ]


@pytest.fixture
def live(tmp_path):
    rec = LiveRecorder(tmp_path)  # a fresh journal: no earlier decisions in flight
    yield rec
    rec.close()


def live_driver(live: LiveRecorder, policy: Policy, max_steps: int | None = None) -> PolicyDriver:
    ctx = live.context("policy", session={"max_steps": max_steps})
    return PolicyDriver(ctx, policy, live.follower("policy", with_states=True), live.recorder("policy"))


def proposals_on(live: LiveRecorder, oid: str) -> list[dict]:
    return [r for r in live.rows("proposal") if r["observation_id"] == oid]


@pytest.mark.parametrize(
    "depth,max_steps,expected",
    [(1, None, 1), (4, None, 4), (4, 2, 2)],
    ids=["one", "pipelined-window", "window-within-max-steps"],
)
def test_propose_records_one_decision_or_a_pipelined_window_in_one_batch(live, depth, max_steps, expected):
    rec = live.recorder()
    oid = rec.store_observation(f"read-driver-{depth}-{max_steps}", {"state_type": "map"}).observation_id
    rec.close()
    n = oid.split("-", 1)[1]
    driver = live_driver(live, Scripted(depth), max_steps=max_steps)
    try:
        wait_for(lambda: driver.step() or driver.decisions >= expected, 20, "the decisions")
        rows = wait_for(lambda: len(proposals_on(live, oid)) >= expected and proposals_on(live, oid), 10, "rows")
        ids = [f"p-{n}"] + [f"p-{n}-{k + 1}" for k in range(1, expected)]
        assert [r["proposal_id"] for r in rows] == ids
        if depth > 1:
            assert [(r["pipeline_depth"], r["decided_ahead"]) for r in rows] == [(4, k) for k in range(expected)]
            assert len(driver.track.in_flight) == expected
        for _ in range(3):  # the window is full (or max_steps reached): no further decision
            driver.step()
        assert len(proposals_on(live, oid)) == expected
    finally:
        driver.close()
