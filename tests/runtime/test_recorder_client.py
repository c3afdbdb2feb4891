"""RecorderClient: every request to the recorder, against a real recorder in a running session
(recorder and built-in game only; this test plays the observer, policy and actuator)."""

from __future__ import annotations

import pytest

from actors.runtime.recorder_client import RecorderClient, follow_message, read_observation
from actors.runtime.transport import PeerRefused
from protocol import events as ev
from protocol.from_recorder import (
    IntentAck,
    ObservationStored,
    ProposalRecorded,
    Recorded,
    RecorderError,
    Rows,
    SnapshotReply,
)
from protocol.to_recorder import RecordProposal, RecordResult
from tests.harness import wait_for
from tests.runtime.live import LiveRecorder

pytestmark = pytest.mark.timeout(120)


@pytest.fixture(scope="module")
def live(tmp_path_factory):
    rec = LiveRecorder(tmp_path_factory.mktemp("recorder-client"))
    yield rec
    rec.close()


@pytest.fixture
def client(live):
    c = live.recorder()
    yield c
    c.close()


def proposal(oid: str, pid: str, wish: str = "execute", action: str | None = "end_turn") -> RecordProposal:
    return RecordProposal(
        proposal_id=pid,
        observation_id=oid,
        action=action if wish == "execute" else None,
        parameters={},
        reason="test",
        source="test",
        wish=wish,
    )


def test_an_observation_is_stored_and_its_state_read_back_from_its_file(live, client):
    state = {"state_type": "map", "marker": "rc-1"}
    stored = client.store_observation("read-rc-1", state, phase="run", read_ms=1.5)
    assert isinstance(stored, ObservationStored)
    row = wait_for(
        lambda: [r for r in live.rows("observation") if r["observation_id"] == stored.observation_id],
        10,
        "the observation row",
    )[0]
    assert read_observation(live.session.capture, row["path"]) == state
    again = client.store_observation("read-rc-1", state)  # a retried read is stored once
    assert again.observation_id == stored.observation_id


def test_a_failed_read_is_recorded_and_an_unreachable_recorder_is_reported_not_raised(live, client):
    assert client.report_observation_error("read-rc-err", "connection refused", "transport") is True
    wait_for(
        lambda: [r for r in live.rows("observation_error") if r.get("read_id") == "read-rc-err"],
        10,
        "the observation_error row",
    )
    gone = RecorderClient(
        live.zctx,
        "ipc://gamerig-no-such-recorder.sock",
        session="x",
        sender="t",
        counters=live.counters,
        should_stop=lambda: True,
    )  # one try, then give up
    try:
        assert gone.report_observation_error("r", "e") is False
    finally:
        gone.close()


def test_proposals_alone_and_in_a_batch_get_their_dispositions_or_refusals(live, client):
    oid = client.store_observation("read-rc-2", {"state_type": "map"}).observation_id
    [alone] = client.record_proposals([proposal(oid, "p-rc-alone", wish="wait")])
    assert isinstance(alone, ProposalRecorded) and alone.disposition == "wait"
    batch = client.record_proposals([proposal(oid, "p-rc-b1"), proposal("o-nope", "p-rc-b2")])
    assert isinstance(batch[0], ProposalRecorded) and batch[0].disposition == "execute"
    assert isinstance(batch[1], RecorderError) and batch[1].code == "unknown_observation"
    [refused] = client.record_proposals([proposal("o-nope", "p-rc-alone-2")])
    assert isinstance(refused, PeerRefused) and refused.code == "unknown_observation"


def test_intents_results_and_events_alone_and_in_batches(live, client):
    oid = client.store_observation("read-rc-3", {"state_type": "map"}).observation_id
    client.record_proposals([proposal(oid, "p-rc-i1"), proposal(oid, "p-rc-i2")])
    ack = client.record_intent("p-rc-i1", "rc-test")
    assert isinstance(ack, IntentAck) and ack.action == "end_turn"
    with pytest.raises(PeerRefused) as refused:
        client.record_intent("p-rc-none", "rc-test")
    assert refused.value.code == "unknown_proposal"
    [ack2, bad] = client.record_intents(["p-rc-i2", "p-rc-none"], "rc-test")
    assert isinstance(ack2, IntentAck) and isinstance(bad, RecorderError)
    # a response that cannot travel (an integer beyond 64 bits) is recorded without it, the outcome kept
    assert isinstance(
        client.record_result(RecordResult(attempt_id=ack.attempt_id, outcome="accepted", response={"x": 2**70})),
        Recorded,
    )
    [done] = client.record_results([RecordResult(attempt_id=ack2.attempt_id, outcome="rejected")])
    assert isinstance(done, Recorded)
    results = {r["attempt_id"]: r for r in live.rows("action_result")}
    assert results[ack.attempt_id]["response"] is None
    assert "response not recordable" in results[ack.attempt_id]["error"]
    assert results[ack2.attempt_id]["outcome"] == "rejected"
    for _ in range(2):  # a keyed event is appended once
        client.record(ev.ActionError(attempt_id="a-rc", error="test"), key="rc-event-1")
        client.record_event("rc_note", {"n": 1}, "rc-event-2")
    assert len([r for r in live.rows("action_error") if r["attempt_id"] == "a-rc"]) == 1
    assert len(live.rows("rc_note")) == 1


def test_the_follow_request_snapshot_and_a_request_sent_without_waiting(live, client):
    pending = client.send_nowait(follow_message(0, max_rows=3, wait_ms=0))
    reply = wait_for(pending.reply, 10, "the follow reply")
    pending.close()
    assert isinstance(reply, Rows) and [r["sequence"] for r in reply.rows] == [1, 2, 3]
    stream = RecorderClient(live.zctx, live.endpoints["stream"], session="x", sender="tap", counters=live.counters)
    try:
        snap = stream.snapshot()
        assert isinstance(snap, SnapshotReply) and snap.last_sequence >= 3
        with pytest.raises(PeerRefused) as refused:  # the stream is read-only
            stream.record_event("rc_note", {})
        assert refused.value.code == "read_only"
    finally:
        stream.close()


def test_finalize_returns_the_summary_once_and_the_journal_takes_no_more_rows(tmp_path):
    live = LiveRecorder(tmp_path)
    client = live.recorder()
    try:
        summary = client.finalize("stop_command", 0)
        assert summary["reason"] == "stop_command" and summary["exit_code"] == 0
        assert client.finalize("stop_command", 0) == summary, "finalization is idempotent"
        with pytest.raises(PeerRefused):
            client.record_event("rc_note", {})
        assert live.rows("session_end")[-1]["reason"] == "stop_command"
    finally:
        client.close()
        live.close()


def test_a_follower_reads_everything_appended_at_once_without_the_long_poll(live, client):
    follower = live.follower("reader", with_states=True, max_rows=2)  # several replies needed
    try:
        first = follower.read_now()
        assert [r["sequence"] for r in first] == list(range(1, len(first) + 1)) and len(first) >= 3
        stored = client.store_observation("read-now-1", {"state_type": "menu", "n": 1}, phase="run")
        more = follower.read_now()
        assert [r["sequence"] for r in more] == list(range(len(first) + 1, follower.cursor + 1))
        assert stored.observation_id in [r.get("observation_id") for r in more]
        assert follower.take_state(stored.observation_id) == {"state_type": "menu", "n": 1}
        assert follower.read_now() == []  # nothing new: nothing returned, the cursor stays
    finally:
        follower.close()


def test_a_follower_with_waking_kinds_is_held_only_once_caught_up(live, client):
    oid = client.store_observation("read-rc-wake", {"state_type": "map"}).observation_id
    follower = live.follower("test", wake=("no_such_kind",), wait_ms=20_000)
    try:
        behind = follower.next_rows(10)  # the first request asks without wake: answered at once
        assert behind and follower.caught_up
        assert any(r.get("observation_id") == oid for r in behind)
        client.record_event("note_rc_wake", {"n": 1})
        assert follower.next_rows(0.3) == [], "caught up: a row of no waking kind waits"
        follower.close()
        follower.wake = ("note_rc_wake",)
        client.record_event("note_rc_wake", {"n": 2})
        rows = follower.next_rows(10)
        assert [r.get("n") for r in rows if r["event"] == "note_rc_wake"] == [1, 2], "every row, in order"
    finally:
        follower.close()
