"""``record_batch``: several writer requests in one frame, answered item by item, in order,
exactly as if each had been sent alone — against a real recorder in a running session."""

from __future__ import annotations

import signal

import pytest
import zmq

from actors.runtime.recorder_client import RecorderClient
from actors.runtime.transport import Counters, PeerRefused
from protocol.from_recorder import BatchReplies, Recorded, RecorderError
from protocol.to_recorder import RecordBatch, RecordEvent, RecordIntent
from tests.harness import wait_for

pytestmark = pytest.mark.timeout(90)
LONG = ("session.max_steps=100000", "session.stop_on_run_end=false")


@pytest.fixture
def recorder(session_factory):
    s = session_factory(*LONG)
    wait_for(lambda: len(s.events("action_result")) >= 2, 60, "two results")
    client = RecorderClient(
        zmq.Context.instance(), s.endpoint("recorder"), session="x", sender="t", counters=Counters()
    )
    yield s, client
    client.close()
    s.signal(signal.SIGTERM)
    assert s.wait() == 143


def test_items_are_answered_in_order_each_as_if_alone(recorder):
    s, client = recorder
    items = [
        RecordEvent(event="batch_note", fields={"n": 1}, key="batch-note-1"),
        RecordEvent(event="run_identity_changed", fields={}),
        RecordEvent(event="batch_note", fields={"x": float("nan")}),
        RecordIntent(proposal_id="p-none", requester="t"),
        RecordEvent(event="batch_note", fields={"n": 2}, key="batch-note-2"),
    ]
    replies = client.request_batch(items, deadline_s=10)
    assert [type(r) for r in replies] == [Recorded, RecorderError, RecorderError, RecorderError, Recorded]
    assert [r.code for r in replies if isinstance(r, RecorderError)] == [
        "reserved_event",
        "bad_request",
        "unknown_proposal",
    ]
    assert replies[0].sequence < replies[4].sequence
    again = client.request_batch(items, deadline_s=10)  # a repeated batch (a retry) adds nothing
    assert [type(r) for r in again] == [type(r) for r in replies]
    notes = s.events("batch_note")
    assert [n["n"] for n in notes] == [1, 2], "each keyed event once, the refused one never"


def test_items_that_cannot_be_batched_or_decoded_are_refused_by_position(recorder):
    _, client = recorder
    raw = RecordBatch(
        items=[
            {"type": "finalize", "body": {"reason": "x", "exit_code": 0}},
            {"type": "no_such_type", "body": {}},
            {"type": "record_event", "body": {"event": 7}},
            {"type": "record_batch", "body": {"items": []}},
            {"type": "record_event", "body": {"event": "batch_ok", "fields": {}}},
        ]
    )
    reply = client.request(raw, deadline_s=10)
    assert isinstance(reply, BatchReplies) and len(reply.items) == 5
    codes = [item["body"].get("code") for item in reply.items]
    assert codes[:4] == ["bad_batch_item", "bad_request", "bad_request", "bad_batch_item"]
    assert "items[2]" in reply.items[2]["body"]["message"] and "event" in reply.items[2]["body"]["message"]
    assert reply.items[4]["type"] == "recorded"


def test_a_batch_on_the_read_only_stream_is_refused(recorder):
    s, _ = recorder
    tap = RecorderClient(zmq.Context.instance(), s.endpoint("stream"), session="x", sender="tap", counters=Counters())
    try:
        with pytest.raises(PeerRefused) as refused:
            tap.request_batch([RecordEvent(event="batch_note", fields={})], deadline_s=10)
        assert refused.value.code == "read_only"
    finally:
        tap.close()
    wait_for(lambda: s.events("tap_write_refused"), 10, "the refusal recorded")
