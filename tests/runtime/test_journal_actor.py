"""JournalActor: the loop's hooks and their order, its one pacing rule and session.max_steps in
the step tracker — driven through the in-memory follower, without processes."""

from __future__ import annotations

import pytest

from actors.runtime.journal_actor import JournalActor
from actors.runtime.memory import MemoryFollower
from actors.runtime.steps import StepTracker
from supervisor.watch import StreamWatch


class Probe(JournalActor):
    """Writes down every hook call; stops itself once it has seen ``stop_after`` rows."""

    PACE_S = 0.03

    def __init__(self, follower, stop_after: int | None = None, fail_on: str | None = None, **kw):
        super().__init__(follower, **kw)
        self.calls: list[tuple] = []
        self.stop_after, self.fail_on = stop_after, fail_on

    def on_row(self, row):
        if row["event"] == self.fail_on:
            raise RuntimeError(f"on_row failed on {row['event']}")
        # the tracker saw the row first: its bookkeeping is current inside on_row
        self.calls.append(("row", row["sequence"], self.track.last_obs))
        if self.stop_after and row["sequence"] >= self.stop_after:
            self.stop_event.set()

    def on_wake(self):
        self.calls.append(("wake",))

    def on_caught_up(self):
        self.calls.append(("caught_up", self.follower.cursor))

    def on_stop(self):
        self.calls.append(("stop",))

    def close(self):
        self.calls.append(("close",))
        super().close()


def observation(n: int) -> dict:
    return {"event": "observation", "observation_id": f"o-{n:06d}", "step": n}


def proposal(n: int, k: int = 0, depth: int | None = None) -> dict:
    pid = f"p-{n:06d}" + (f"-{k + 1}" if k else "")
    row = {"event": "proposal", "proposal_id": pid, "observation_id": f"o-{n:06d}", "action": "x"}
    if depth:
        row.update(pipeline_depth=depth, decided_ahead=k)
    return row


def status(pid: str, st: str = "execute") -> dict:
    return {"event": "proposal_status", "proposal_id": pid, "status": st}


def attempt(pid: str, oid: str, aid: str) -> dict:
    return {"event": "action_attempt", "attempt_id": aid, "proposal_id": pid, "observation_id": oid}


def result(aid: str, outcome: str = "accepted") -> dict:
    return {"event": "action_result", "attempt_id": aid, "outcome": outcome}


def two_pipelined(follower: MemoryFollower) -> None:
    """Two proposals on observation 1 decided ahead (depth 2), both executed."""
    for k in range(2):
        follower.append(proposal(1, k, depth=2))
        follower.append(status(proposal(1, k)["proposal_id"]))


def one_step(follower: MemoryFollower, n: int) -> None:
    """An observation whose executed proposal got its result."""
    for row in (
        observation(n),
        proposal(n),
        status(f"p-{n:06d}"),
        attempt(f"p-{n:06d}", f"o-{n:06d}", f"a-{n:06d}"),
        result(f"a-{n:06d}"),
    ):
        follower.append(row)


def test_rows_reach_on_row_in_order_after_the_tracker_and_caught_up_only_at_the_end():
    follower = MemoryFollower([observation(1), proposal(1), observation(2)], max_rows=2)
    actor = Probe(follower)
    actor.step()
    assert actor.calls == [("row", 1, "o-000001"), ("row", 2, "o-000001"), ("wake",)]
    actor.step()
    assert actor.calls[3:] == [("row", 3, "o-000002"), ("wake",), ("caught_up", 3)]
    actor.step()  # nothing new: still caught up, no rows
    assert actor.calls[6:] == [("wake",), ("caught_up", 3)]


def test_run_ends_when_stopping_with_on_stop_then_close():
    follower = MemoryFollower([observation(1), proposal(1), observation(2)])
    actor = Probe(follower, stop_after=3)
    assert actor.run() == 0
    assert actor.calls[-3:] == [("caught_up", 3), ("stop",), ("close",)]
    assert follower.closed


def test_a_hook_that_raises_ends_the_loop_with_close_but_no_on_stop():
    follower = MemoryFollower([observation(1), proposal(1)])
    actor = Probe(follower, fail_on="proposal")
    with pytest.raises(RuntimeError, match="on_row failed on proposal"):
        actor.run()
    assert ("stop",) not in actor.calls and actor.calls[-1] == ("close",)
    assert follower.closed


def test_one_step_at_a_time_is_never_paced():
    follower = MemoryFollower()
    actor = Probe(follower)
    one_step(follower, 1)
    follower.append(observation(2))
    actor.step()
    assert actor.pace_s() == 0.0 and follower.pace_s == 0.0


def test_pipelined_steps_in_flight_pace_the_follow_until_their_results_are_in():
    follower = MemoryFollower([observation(1)])
    actor = Probe(follower)
    two_pipelined(follower)
    actor.step()
    assert set(actor.track.in_flight) == {"p-000001", "p-000001-2"}
    assert actor.pace_s() == Probe.PACE_S
    actor.step()
    assert follower.pace_s == Probe.PACE_S  # the base set it before reading
    for k, aid in enumerate(("a-1", "a-2")):
        follower.append(attempt(proposal(1, k)["proposal_id"], "o-000001", aid))
        follower.append(result(aid))
    actor.step()
    assert not actor.track.in_flight and actor.pace_s() == 0.0


def test_the_supervisors_watch_only_counts_so_it_is_always_paced():
    follower = MemoryFollower([observation(1)])
    watch = StreamWatch(None, follower)
    assert watch.socket() is None  # the in-memory follower has no socket to poll
    assert follower.pace_s == StreamWatch.PACE_S > 0
    assert watch.pump() == 1 and watch.steps == 1 and watch.last_sequence == 1


def test_max_steps_is_reached_by_observations_or_by_the_callers_own_count():
    track = StepTracker(max_steps=2)
    assert not track.max_steps_reached()
    track.feed(observation(1))
    track.feed(observation(2))
    assert track.max_steps_reached()
    assert not track.max_steps_reached(taken=1)  # the policy counts its decisions itself
    assert StepTracker(max_steps=0).max_steps_reached(taken=10**6) is False  # 0: no limit
    assert StepTracker().max_steps_reached(taken=10**6) is False


def test_the_session_ends_on_max_steps_when_the_last_step_is_resolved():
    follower = MemoryFollower()
    watch = StreamWatch(2, follower)
    one_step(follower, 1)
    watch.pump()
    assert watch.stop_reason is None
    follower.append(observation(2))
    follower.append(proposal(2))
    watch.pump()
    assert watch.stop_reason is None, "the second step is not resolved yet"
    follower.append(status("p-000002", "wait"))
    watch.pump()
    assert watch.stop_reason == "max_steps"


def test_pipelined_decisions_end_the_session_once_nothing_is_in_flight():
    track = StepTracker(max_steps=2)
    for row in (
        observation(1),
        proposal(1, 0, depth=2),
        status("p-000001"),
        proposal(1, 1, depth=2),
        status("p-000001-2"),
        attempt("p-000001", "o-000001", "a-1"),
        result("a-1"),
    ):
        track.feed(row)
    assert track.decisions == 2 and not track.ended_by_max_steps("o-000001"), "one still in flight"
    for row in (attempt("p-000001-2", "o-000001", "a-2"), result("a-2")):
        track.feed(row)
    assert track.ended_by_max_steps("o-000001")
    assert not track.ended_by_max_steps(None)


def test_the_in_memory_follower_refuses_rows_out_of_order_or_without_a_kind():
    follower = MemoryFollower([observation(1)])
    with pytest.raises(ValueError, match="sequence 5, the journal expects 2"):
        follower.append({**observation(2), "sequence": 5})
    with pytest.raises(ValueError, match="row 2 has no event name"):
        follower.append({"observation_id": "o-2"})
    follower.append(observation(2), state={"state_type": "map"})
    assert follower.take_state("o-000002") == {"state_type": "map"}
    assert follower.take_state("o-000002") is None


class Waker(Probe):
    WAKE = ("observation",)


def test_the_follow_carries_the_waking_kinds_and_session_stopping_while_steps_go_one_at_a_time():
    follower = MemoryFollower([observation(1)])
    actor = Waker(follower)
    actor.step()
    assert follower.wake == ("observation", "session_stopping")
    assert Probe(MemoryFollower()).wake_kinds() is None, "no WAKE: every row wakes it"


def test_pipelined_steps_in_flight_wake_on_every_row_paced_instead():
    follower = MemoryFollower([observation(1)])
    actor = Waker(follower)
    two_pipelined(follower)
    actor.step()
    assert actor.track.in_flight and follower.wake is not None  # set before the read that showed them
    actor.step()
    assert follower.wake is None and follower.pace_s == Waker.PACE_S
