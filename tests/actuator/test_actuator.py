"""The actuator as a JournalActor: its queue of executed proposals, exactly one attempt and one
result per proposal, orphaned attempts recorded unknown and never sent, refusals — against the
real built-in game and a real recorder, or the in-memory follower."""

from __future__ import annotations

import socket
import threading

import httpx
import pytest
import zmq

from actors.actuator.__main__ import ORPHAN_ERROR, Actuator
from actors.runtime.actor import ActorContext
from actors.runtime.memory import MemoryFollower
from actors.runtime.transport import Counters
from protocol.actor_to_supervisor import RequestStop
from protocol.to_recorder import RecordProposal
from tests.harness import wait_for
from tests.runtime.live import LiveRecorder

pytestmark = pytest.mark.timeout(120)


@pytest.fixture(scope="module")
def live(tmp_path_factory):
    rec = LiveRecorder(tmp_path_factory.mktemp("actuator"))
    yield rec
    rec.close()


def executed(live: LiveRecorder, pid: str, action: str = "end_turn") -> str:
    """Store an observation and an executable proposal on it; the proposal's id."""
    rec = live.recorder()
    try:
        oid = rec.store_observation(f"read-{pid}", {"state_type": "map"}).observation_id
        [reply] = rec.record_proposals(
            [
                RecordProposal(
                    proposal_id=pid,
                    observation_id=oid,
                    action=action,
                    parameters={},
                    reason="test",
                    source="test",
                    wish="execute",
                )
            ]
        )
        assert reply.disposition == "execute"
    finally:
        rec.close()
    return pid


def game_posts(live: LiveRecorder) -> tuple[int, list[str]]:
    """The built-in game's own count of POSTs and its intent violations (a second POST of an
    attempt is one: ``actors/game/intent_check.py``)."""
    stats = httpx.get(live.profile["game"]["base_url"] + "/__gamerig/stats", timeout=10).json()
    return stats["posts"], stats["intent_violations"]


def rows_of(live: LiveRecorder, kind: str, pid: str) -> list[dict]:
    return [r for r in live.rows(kind) if r.get("proposal_id") == pid]


def test_an_executed_proposal_gets_exactly_one_attempt_and_one_result(live):
    pid = executed(live, "p-act-once")
    act = Actuator(live.context("actuator"), follower=live.follower("actuator"))
    try:
        wait_for(lambda: act.step() or rows_of(live, "action_attempt", pid), 20, "the attempt")
        attempt = rows_of(live, "action_attempt", pid)[0]
        result = wait_for(
            lambda: [r for r in live.rows("action_result") if r["attempt_id"] == attempt["attempt_id"]],
            20,
            "the result",
        )[0]
        assert attempt["requester"] == act.requester and result["outcome"] in ("accepted", "rejected")
        for _ in range(3):  # caught up again: nothing is sent twice
            act.step()
        assert len(rows_of(live, "action_attempt", pid)) == 1 and not act.queue
    finally:
        act.close()


def park(act: Actuator) -> None:
    wait_for(lambda: act.step() or act.standing_parked, 20, "a standing intent parked")


def result_sent_once(live: LiveRecorder, act: Actuator, pid: str, attempt_id: str, posts_before: int) -> dict:
    """Step ``act`` until ``attempt_id``'s result is in, and a few turns more (a status row
    reaching the queue later must not send it again); its result row, once the proposal is
    seen attempted once, its result recorded once, and the game to have had one more POST."""
    result = wait_for(
        lambda: act.step() or [r for r in live.rows("action_result") if r["attempt_id"] == attempt_id], 20, "the result"
    )[0]
    for _ in range(5):
        act.step()
    assert len(rows_of(live, "action_attempt", pid)) == 1
    assert len([r for r in live.rows("action_result") if r["attempt_id"] == attempt_id]) == 1
    posts, violations = game_posts(live)
    assert posts == posts_before + 1 and violations == [], "the game got it exactly once"
    return result


def test_an_executed_proposal_comes_by_the_standing_intent_and_is_sent_once(live):
    act = Actuator(live.context("actuator"), follower=live.follower("actuator"))
    try:
        park(act)
        posts_before, _ = game_posts(live)
        pid = executed(live, "p-act-standing")
        [attempt] = rows_of(live, "action_attempt", pid)  # recorded with the proposal, for this actuator
        assert attempt["requester"] == act.requester
        result = result_sent_once(live, act, pid, attempt["attempt_id"], posts_before)
        assert result["outcome"] in ("accepted", "rejected") and result["http_status"] is not None, (
            "the game answered: the request was sent"
        )
    finally:
        act.close()


def test_an_intent_recorded_for_it_whose_acknowledgement_was_lost_is_asked_again_and_sent_once(live):
    # as when a standing intent was answered by a recorder that died before the reply left
    act = Actuator(live.context("actuator"), follower=live.follower("actuator"))
    try:
        posts_before, _ = game_posts(live)
        pid = executed(live, "p-act-lost-ack")
        rec = live.recorder()
        lost = rec.record_intent(pid, act.requester)
        rec.close()
        result = result_sent_once(live, act, pid, lost.attempt_id, posts_before)
        assert result["outcome"] in ("accepted", "rejected"), "sent, and the game answered"
    finally:
        act.close()


def test_a_closed_actuator_leaves_no_standing_intent_behind(live):
    act = Actuator(live.context("actuator"), follower=live.follower("actuator"))
    try:
        park(act)
    finally:
        act.close()
    pid = executed(live, "p-act-after-close")  # the reply comes after any intent it made
    assert rows_of(live, "action_attempt", pid) == [], "no intent for an actuator that stopped"


def test_an_actuator_closing_with_an_intent_unread_sends_it_and_parks_no_other(live):
    """Closed without the stop event (as ``run`` closes after a step raised) while its standing
    intent's ``intent_ack`` waits unread: the withdrawal takes it and sends it — and the
    result must not park a new standing intent for an actuator that is going."""
    act = Actuator(live.context("actuator"), follower=live.follower("actuator"))
    try:
        park(act)
        first = executed(live, "p-act-closing-1")  # the recorder answers the parked standing intent
        wait_for(lambda: rows_of(live, "action_attempt", first), 20, "the standing intent's attempt")
    finally:
        act.close()
    attempt = rows_of(live, "action_attempt", first)[0]
    wait_for(
        lambda: [r for r in live.rows("action_result") if r["attempt_id"] == attempt["attempt_id"]],
        20,
        "the result of the intent taken while closing",
    )
    later = executed(live, "p-act-closing-2")  # the reply comes after any intent it made
    assert rows_of(live, "action_attempt", later) == [], "no intent for an actuator that closed"


def test_an_attempt_left_without_a_result_is_recorded_unknown_and_never_sent(live):
    pid = executed(live, "p-act-orphan")
    rec = live.recorder()
    ack = rec.record_intent(pid, "actuator-that-died")  # its holder exits before sending
    rec.close()
    act = Actuator(live.context("actuator"), follower=live.follower("actuator"))
    try:
        result = wait_for(
            lambda: act.step() or [r for r in live.rows("action_result") if r["attempt_id"] == ack.attempt_id],
            20,
            "the result",
        )[0]
        assert result["outcome"] == "unknown" and result["error"] == ORPHAN_ERROR
        assert len(rows_of(live, "action_attempt", pid)) == 1
    finally:
        act.close()


def test_a_proposal_the_recorder_refuses_is_not_sent_and_does_not_stop_the_session(live):
    follower = MemoryFollower([{"event": "proposal_status", "proposal_id": "p-act-unknown", "status": "execute"}])
    ctx = live.context("actuator")
    act = Actuator(ctx, follower=follower)
    try:
        act.step()
        assert act.caught_up and not act.queue
        assert ctx.outbox.empty(), "an unknown proposal is refused; the session goes on"
        assert not rows_of(live, "action_attempt", "p-act-unknown")
    finally:
        act.close()


def offline_context() -> ActorContext:
    """A context whose game and recorder are unreachable (nothing listens there)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        url = f"http://127.0.0.1:{s.getsockname()[1]}"
    return ActorContext(
        name="actuator",
        session_id="s",
        session_dir="/nonexistent",
        capture_root="/nonexistent",
        endpoints={"recorder": "ipc://gamerig-test-no-recorder.sock"},
        profile={"game": {"backend": "http", "base_url": url, "timeout_s": 1}},
        heartbeat_s=1.0,
        start_count=1,
        zctx=zmq.Context.instance(),
        stopping=threading.Event(),
        counters=Counters(),
    )


def step_rows(n: int, pipelined: bool = False) -> list[dict]:
    extra = {"pipeline_depth": 4, "decided_ahead": 0} if pipelined else {}
    return [
        {"event": "proposal", "proposal_id": f"p-{n}", "observation_id": f"o-{n}", "action": "x", **extra},
        {"event": "proposal_status", "proposal_id": f"p-{n}", "status": "execute"},
    ]


def test_a_newer_observation_drops_queued_proposals_except_pipelined_ones():
    follower = MemoryFollower(
        [{"event": "observation", "observation_id": "o-1", "step": 1}, *step_rows(1), *step_rows(2, pipelined=True)]
    )
    act = Actuator(offline_context(), follower=follower)
    try:
        for row in follower.pump():
            act.feed(row)
        assert act.queue == ["p-1", "p-2"]
        act.feed(follower.append({"event": "observation", "observation_id": "o-2", "step": 2}))
        assert act.queue == ["p-2"]
        act.feed(
            follower.append(
                {"event": "action_attempt", "attempt_id": "a-2", "proposal_id": "p-2", "observation_id": "o-1"}
            )
        )
        assert act.queue == [], "another actuator attempted it"
    finally:
        act.close()


def test_a_result_that_cannot_be_recorded_asks_the_supervisor_to_stop():
    ctx = offline_context()
    ctx.stopping.set()  # give up on the unreachable recorder after one try each
    follower = MemoryFollower(
        [
            {
                "event": "action_attempt",
                "attempt_id": "a-9",
                "proposal_id": "p-9",
                "observation_id": "o-9",
                "requester": "actuator-gone",
            }
        ]
    )
    act = Actuator(ctx, follower=follower)
    try:
        for row in follower.pump():
            act.feed(row)
        act.recover_orphans()
        stop = ctx.outbox.get_nowait()
        assert isinstance(stop, RequestStop) and stop.reason == "result_not_recorded"
    finally:
        act.close()


@pytest.fixture
def emulator(tmp_path):
    rec = LiveRecorder(tmp_path, backend="pyboy")
    yield rec
    rec.close()


def test_pipelined_steps_go_as_one_batch_of_intents_and_get_one_result_each(emulator):
    live = emulator
    rec = live.recorder()
    oid = rec.store_observation("read-pipelined", {"state_type": "pyboy"}).observation_id
    n = oid.split("-", 1)[1]
    pids = [f"p-{n}"] + [f"p-{n}-{k + 1}" for k in range(1, 4)]
    replies = rec.record_proposals(
        [
            RecordProposal(
                proposal_id=pid,
                observation_id=oid,
                action="step",
                parameters={"buttons": [], "frames": 4},
                reason="test",
                source="test",
                wish="execute",
                extra={"pipeline_depth": 4, "decided_ahead": k},
            )
            for k, pid in enumerate(pids)
        ]
    )
    rec.close()
    assert [r.disposition for r in replies] == ["execute"] * 4
    act = Actuator(live.context("actuator"), follower=live.follower("actuator"))
    try:
        results = wait_for(
            lambda: act.step() or (len(live.rows("action_result")) >= 4 and live.rows("action_result")),
            30,
            "four results",
        )
        rows = live.rows()
        attempts = [r for r in rows if r["event"] == "action_attempt"]
        assert [a["proposal_id"] for a in attempts] == pids
        seqs = [a["sequence"] for a in attempts]
        assert seqs == list(range(seqs[0], seqs[0] + 4)), "the four intents were recorded as one batch"
        assert sorted(r["attempt_id"] for r in results) == sorted(a["attempt_id"] for a in attempts)
        assert {r["outcome"] for r in results} == {"accepted"}
        frames = [r["response"]["frame"] for r in sorted(results, key=lambda r: r["attempt_id"])]
        assert frames == sorted(frames) and len(set(frames)) == 4, "each step ran once, in order"
        for _ in range(3):
            act.step()
        assert len(live.rows("action_attempt")) == 4 and not act.in_flight()
    finally:
        act.close()
