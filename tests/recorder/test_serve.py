"""The recorder's serving loop (``actors.recorder.serve``) through real ROUTER sockets: where
errors become ``recorder_error`` replies, group commit, batches, the read-only stream
endpoint and parked follows. A real Recorder on real files; the server runs in a thread."""

from __future__ import annotations

import os
import shutil
import time

import pytest

from protocol.events import ActionAttempt, TapWriteRefused
from protocol.from_recorder import (
    BatchReplies,
    IntentAck,
    ObservationStored,
    ProposalRecorded,
    Recorded,
    RecorderError,
    Rows,
    SnapshotReply,
)
from protocol.message import from_item
from protocol.to_recorder import (
    Finalize,
    Follow,
    RecordBatch,
    RecordEvent,
    RecordIntent,
    RecordResult,
    Snapshot,
    StoreObservation,
)

from .conftest import kinds, proposal, rows

pytestmark = pytest.mark.timeout(60)


def error(reply, code: str) -> RecorderError:
    assert isinstance(reply, RecorderError), f"expected {code}, got {reply}"
    assert reply.code == code, reply
    assert reply.message, "an error reply names what was wrong"
    return reply


def executable(s) -> None:
    """An observation and an executable proposal p1 for it, recorded through the socket."""
    stored = s.ask(StoreObservation(read_id="r1", state={"state_type": "map"}))
    assert isinstance(stored, ObservationStored)
    assert s.ask(proposal("p1", stored.observation_id)).disposition == "execute"


def stop_reasons(s) -> list[str]:
    return [m.reason for m in s.stop_requests()]


def test_a_refusal_is_answered_with_its_code_and_the_server_goes_on(serve):
    s = serve()
    error(s.ask(RecordResult(attempt_id="a-none", outcome="accepted")), "unknown_attempt")
    assert isinstance(s.ask(RecordEvent(event="note", fields={"n": 1})), Recorded)
    assert stop_reasons(s) == []


def test_a_value_json_cannot_hold_is_a_bad_request_naming_the_request(serve):
    s = serve()
    reply = error(s.ask(RecordEvent(event="note", fields={"x": float("nan")})), "bad_request")
    assert reply.message.startswith("record_event: ")
    assert kinds(s.recorder)[-1] == "session_start"


def test_a_state_nested_deeper_than_json_can_write_is_a_bad_request_and_the_server_goes_on(serve):
    """A state the wire carries (msgpack nests ≈ 1,024 deep) but JSON cannot write out (Python's
    recursion limit): refused ``bad_request`` naming the request, nothing written for it, and
    the recorder goes on (a RecursionError does not end it)."""
    s = serve()
    state: dict = {"state_type": "map"}
    for _ in range(1010):
        state = {"k": state}
    reply = error(s.ask(StoreObservation(read_id="r-deep", state=state)), "bad_request")
    assert reply.message.startswith("store_observation: "), reply.message
    assert "observation" not in kinds(s.recorder)
    assert isinstance(s.ask(StoreObservation(read_id="r-flat", state={"state_type": "map"})), ObservationStored)


def test_an_injected_append_failure_is_journal_failed_and_asks_for_a_stop(serve):
    s = serve({"recorder": {"inject_failure": {"event": "action_attempt", "nth": 1}}})
    executable(s)
    error(s.ask(RecordIntent(proposal_id="p1", requester="a")), "journal_failed")
    assert stop_reasons(s) == ["journal_failed"]
    assert ActionAttempt.KIND not in kinds(s.recorder)  # failed before anything was written
    assert isinstance(s.ask(RecordIntent(proposal_id="p1", requester="a")), IntentAck)  # still usable


def test_no_intent_is_acknowledged_when_its_fsync_fails(serve):
    # the 1st fsync is session_start's; the 2nd is the group commit the intent waits for
    s = serve({"recorder": {"inject_failure": {"event": "fsync", "nth": 2}}})
    executable(s)
    reply = error(s.ask(RecordIntent(proposal_id="p1", requester="a")), "journal_failed")
    assert "fsync" in reply.message
    assert kinds(s.recorder)[-1] == ActionAttempt.KIND  # written, never acknowledged
    assert stop_reasons(s) == ["journal_failed"]
    error(s.ask(RecordEvent(event="note", fields={})), "journal_failed")  # unusable from then on


def test_a_batch_whose_fsync_fails_is_answered_journal_failed_as_a_whole(serve):
    s = serve({"recorder": {"inject_failure": {"event": "fsync", "nth": 2}}})
    executable(s)
    items = [RecordIntent(proposal_id="p1", requester="a").to_item(), RecordEvent(event="note", fields={}).to_item()]
    error(s.ask(RecordBatch(items=items)), "journal_failed")


def test_a_storage_failure_is_storage_failed_and_asks_for_a_stop(serve):
    s = serve()
    observations = os.path.join(s.recorder.dir, "observations")
    shutil.rmtree(observations)
    with open(observations, "w") as fh:  # a file where the directory was
        fh.write("not a directory")
    error(s.ask(StoreObservation(read_id="r1", state={})), "storage_failed")
    assert stop_reasons(s) == ["storage_failed"]


def test_batch_items_are_answered_in_order_each_as_if_alone(serve):
    s = serve()
    items = [
        RecordEvent(event="note", fields={"n": 1}).to_item(),
        Finalize(reason="x", exit_code=0).to_item(),
        {"type": "no_such_request", "body": {}},
        RecordEvent(event="note", fields={"x": float("nan")}).to_item(),
        RecordEvent(event="session_end", fields={}).to_item(),
    ]
    reply = s.ask(RecordBatch(items=items))
    assert isinstance(reply, BatchReplies)
    got = [from_item(item) for item in reply.items]
    assert isinstance(got[0], Recorded)
    assert [g.code for g in got[1:]] == ["bad_batch_item", "bad_request", "bad_request", "reserved_event"]
    assert got[1].message.startswith("items[1]: ") and got[2].message.startswith("items[2]: ")
    assert got[3].message.startswith("record_event: ")
    assert [r.get("n") for r in rows(s.recorder) if r["event"] == "note"] == [1]


def test_the_writers_endpoint_takes_no_snapshot_and_no_negative_cursor(serve):
    s = serve()
    error(s.ask(Snapshot()), "unexpected_type")
    error(s.ask(Follow(after=-1)), "bad_cursor")


def test_the_stream_endpoint_is_read_only_and_journals_a_write(serve):
    s = serve()
    snap = s.ask(Snapshot(), "stream")
    assert isinstance(snap, SnapshotReply) and snap.last_sequence == 1
    error(s.ask(RecordEvent(event="note", fields={}), "stream"), "read_only")
    last = rows(s.recorder)[-1]
    assert (last["event"], last["request"], last["sender"]) == (TapWriteRefused.KIND, "record_event", "test")


def test_an_undecodable_frame_is_counted_and_not_answered(serve):
    s = serve()
    s.socks["recorder"].send(b"\xc1 not msgpack")
    assert isinstance(s.ask(RecordEvent(event="note", fields={})), Recorded)  # the next one is
    assert sum(s.ctx.counters.bad_frames.values()) == 1


def test_a_follow_is_parked_until_rows_come(serve):
    s = serve()
    msg_id = s.send(Follow(after=1, wait_ms=20_000, with_states=True), "stream")
    stored = s.ask(StoreObservation(read_id="r1", state={"state_type": "map"}))
    env = s.receive("stream")
    assert env.body.reply_to == msg_id and isinstance(env.body, Rows)
    assert [r["sequence"] for r in env.body.rows] == [stored.sequence]
    assert env.body.states == {stored.observation_id: {"state_type": "map"}}


def test_a_follow_with_nothing_new_is_answered_empty_when_it_times_out(serve):
    s = serve()
    start = time.monotonic()
    reply = s.ask(Follow(after=1, wait_ms=300), "stream")
    assert isinstance(reply, Rows) and reply.rows == [] and reply.last_sequence == 1
    assert time.monotonic() - start >= 0.25


def test_a_proposal_repeat_through_the_socket_gets_the_first_reply(serve):
    s = serve()
    stored = s.ask(StoreObservation(read_id="r1", state={}))
    first = s.ask(proposal("p1", stored.observation_id))
    again = s.ask(proposal("p1", stored.observation_id))
    assert isinstance(first, ProposalRecorded)
    assert (again.disposition, again.sequence) == (first.disposition, first.sequence)
