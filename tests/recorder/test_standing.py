"""What the recorder's serving loop does for the game step's speed, through real ROUTER
sockets: standing intents (``await_intent``), follows that wake only for named rows, rows
reaching followers before the group's fsync (the writer's acknowledgement after it). A real
Recorder on real files; the server runs in a thread."""

from __future__ import annotations

import pytest
import zmq

import protocol
from actors.runtime.transport import send_envelope
from protocol.events import ActionAttempt, ActorExit
from protocol.from_recorder import IntentAck, NoIntent, ObservationStored, RecorderError, Rows
from protocol.message import from_item
from protocol.to_recorder import (
    AwaitIntent,
    Follow,
    RecordBatch,
    RecordEvent,
    RecordIntent,
    RecordResult,
    StoreObservation,
)

from .conftest import SESSION, kinds, proposal, rows

pytestmark = pytest.mark.timeout(60)

QUIET_MS = 300  # how long a reply that must not come is waited for


class Peer:
    """One more DEALER on the writers' endpoint, sending as ``sender``."""

    def __init__(self, s, sender: str):
        self.sock = s.ctx.zctx.socket(zmq.DEALER)
        self.sock.setsockopt(zmq.LINGER, 0)
        self.sock.connect(s.ctx.endpoints["recorder"])
        self.sender = sender

    def send(self, body) -> str:
        return send_envelope(self.sock, body, session=SESSION, sender=self.sender)

    def receive(self, wait_ms: int = 10_000):
        """The next reply, or None if none comes within ``wait_ms``."""
        if not self.sock.poll(wait_ms):
            return None
        return protocol.decode(self.sock.recv()).body

    def close(self) -> None:
        self.sock.close(0)


@pytest.fixture
def peers():
    made: list[Peer] = []

    def make(s, sender: str = "actuator") -> Peer:
        made.append(Peer(s, sender))
        return made[-1]

    yield make
    for p in made:
        p.close()


def observed(s, read_id: str = "r1") -> str:
    stored = s.ask(StoreObservation(read_id=read_id, state={"state_type": "map"}))
    assert isinstance(stored, ObservationStored)
    return stored.observation_id


def attempts(s) -> list[dict]:
    return [r for r in rows(s.recorder) if r["event"] == ActionAttempt.KIND]


def parked(s, peer: Peer, wait_ms: int = 20_000) -> str:
    """A standing intent sent and seen to wait (no answer while nothing is executable)."""
    msg_id = peer.send(AwaitIntent(requester="act-1", wait_ms=wait_ms))
    assert peer.receive(QUIET_MS) is None, "nothing was executable: the request waits"
    return msg_id


# -- standing intents --------------------------------------------------------------------------
def test_a_standing_intent_gets_the_next_executable_proposal_once_durable(serve, peers):
    s = serve()
    act = peers(s)
    msg_id = parked(s, act)
    oid = observed(s)
    assert s.ask(proposal("p1", oid)).disposition == "execute"
    ack = act.receive()
    assert isinstance(ack, IntentAck) and ack.reply_to == msg_id
    assert (ack.proposal_id, ack.action) == ("p1", "end_turn")
    [attempt] = attempts(s)
    assert (attempt["attempt_id"], attempt["requester"]) == (ack.attempt_id, "act-1")
    assert s.recorder.writer.sequence == attempt["sequence"]
    # the intent is the one record_intent would have made: asking again gets the same ack
    again = s.ask(RecordIntent(proposal_id="p1", requester="act-1"))
    assert isinstance(again, IntentAck) and again.attempt_id == ack.attempt_id
    assert isinstance(s.ask(RecordIntent(proposal_id="p1", requester="other")), RecorderError)


def test_an_executable_proposal_already_waiting_is_taken_at_once(serve, peers):
    s = serve()
    act = peers(s)
    assert s.ask(proposal("p1", observed(s))).disposition == "execute"
    act.send(AwaitIntent(requester="act-1", wait_ms=20_000))
    ack = act.receive()
    assert isinstance(ack, IntentAck) and ack.proposal_id == "p1"


def test_a_newer_observation_supersedes_a_waiting_proposal(serve, peers):
    s = serve()
    act = peers(s)
    assert s.ask(proposal("p1", observed(s, "r1"))).disposition == "execute"
    observed(s, "r2")
    parked(s, act)
    assert attempts(s) == []


@pytest.mark.parametrize("wish, extra", [("wait", None), ("execute", {"pipeline_depth": 4})])
def test_a_proposal_not_to_execute_or_pipelined_is_never_taken(serve, peers, wish, extra):
    s = serve()
    act = peers(s)
    parked(s, act)
    s.ask(proposal("p1", observed(s), wish=wish, extra=extra))
    assert act.receive(QUIET_MS) is None
    assert attempts(s) == []


def test_a_standing_intent_is_answered_no_intent_after_its_wait(serve, peers):
    s = serve()
    act = peers(s)
    msg_id = act.send(AwaitIntent(requester="act-1", wait_ms=200))
    reply = act.receive()
    assert isinstance(reply, NoIntent) and reply.reply_to == msg_id
    s.ask(proposal("p1", observed(s)))
    assert attempts(s) == [], "an expired standing intent takes nothing"


def test_a_withdrawn_standing_intent_takes_nothing(serve, peers):
    s = serve()
    act = peers(s)
    park = parked(s, act)
    withdrawal = act.send(AwaitIntent(requester="act-1", wait_ms=0))
    answers = [act.receive(), act.receive()]
    assert all(isinstance(a, NoIntent) for a in answers)
    assert [a.reply_to for a in answers] == [park, withdrawal], "the withdrawn request, then the withdrawal"
    s.ask(proposal("p1", observed(s)))
    assert act.receive(QUIET_MS) is None and attempts(s) == []


def test_a_newer_standing_intent_replaces_the_senders_last_which_is_answered_no_intent(serve, peers):
    s = serve()
    act = peers(s)
    first = parked(s, act)
    newer = act.send(AwaitIntent(requester="act-2", wait_ms=20_000))
    replaced = act.receive()
    assert isinstance(replaced, NoIntent) and replaced.reply_to == first
    s.ask(proposal("p1", observed(s)))
    ack = act.receive()
    assert isinstance(ack, IntentAck) and ack.reply_to == newer
    assert [a["requester"] for a in attempts(s)] == ["act-2"]


def test_a_withdrawal_is_answered_after_an_intent_the_request_got_before_it(serve, peers):
    # one socket parks, records the proposal and withdraws at once: the intent recorded for
    # the parked request must reach it before the withdrawal's answer (the actuator stops
    # reading at that answer)
    s = serve()
    act = peers(s)
    park = parked(s, act)
    oid = observed(s)
    act.send(proposal("p1", oid))
    withdrawal = act.send(AwaitIntent(requester="act-1", wait_ms=0))
    got = [act.receive() for _ in range(3)]
    order = {type(g).__name__: n for n, g in enumerate(got)}
    assert set(order) == {"IntentAck", "ProposalRecorded", "NoIntent"}, got
    assert got[order["IntentAck"]].reply_to == park and got[order["NoIntent"]].reply_to == withdrawal
    assert order["IntentAck"] < order["NoIntent"]


def test_the_exit_of_its_actor_drops_a_standing_intent(serve, peers):
    s = serve()
    act = peers(s, sender="actuator")
    msg_id = parked(s, act)
    exit_row = ActorExit(actor="actuator", pid=1, code=None, signal="SIGKILL", expected=False)
    s.ask(RecordEvent.of(exit_row))
    dropped = act.receive()
    assert isinstance(dropped, NoIntent) and dropped.reply_to == msg_id, "a live sender would ask again"
    s.ask(proposal("p1", observed(s)))
    assert act.receive(QUIET_MS) is None
    assert attempts(s) == [], "no intent is recorded for an actuator known to be gone"


def test_a_standing_intent_whose_fsync_fails_is_not_acknowledged(serve, peers):
    # the 1st fsync is session_start's; the 2nd the group holding the proposal and the intent
    s = serve({"recorder": {"inject_failure": {"event": "fsync", "nth": 2}}})
    act = peers(s)
    parked(s, act)
    policy_reply = s.ask(proposal("p1", observed(s)))
    reply = act.receive()
    assert isinstance(reply, RecorderError) and reply.code == "journal_failed"
    assert isinstance(policy_reply, RecorderError) and policy_reply.code == "journal_failed"
    assert kinds(s.recorder)[-1] == ActionAttempt.KIND  # written, never acknowledged


def test_a_standing_intent_is_not_taken_on_the_read_only_endpoint_nor_in_a_batch(serve):
    s = serve()
    reply = s.ask(AwaitIntent(requester="tap", wait_ms=20_000), "stream")
    assert isinstance(reply, RecorderError) and reply.code == "read_only"
    batch = s.ask(RecordBatch(items=[AwaitIntent(requester="a", wait_ms=20_000).to_item()]))
    [item] = [from_item(i) for i in batch.items]
    assert isinstance(item, RecorderError) and item.code == "bad_batch_item"


# -- follows that wake for named rows; rows before the fsync ----------------------------------
def test_a_follow_naming_wake_rows_is_answered_by_such_a_row_with_every_row_before_it(serve):
    s = serve()
    last = s.recorder.writer.sequence
    msg_id = s.send(Follow(after=last, wait_ms=20_000, wake=["note_b"]), "stream")
    s.ask(RecordEvent(event="note_a", fields={}))
    assert not s.socks["stream"].poll(QUIET_MS), "a row that wakes nothing waits"
    s.ask(RecordEvent(event="note_b", fields={}))
    env = s.receive("stream")
    assert env.body.reply_to == msg_id and isinstance(env.body, Rows)
    assert [r["event"] for r in env.body.rows] == ["note_a", "note_b"]
    assert [r["sequence"] for r in env.body.rows] == [last + 1, last + 2]


def test_a_wake_entry_can_name_one_fields_value(serve):
    s = serve()
    oid = observed(s)
    last = s.recorder.writer.sequence
    s.send(Follow(after=last, wait_ms=20_000, wake=["proposal_status.status=wait"]), "stream")
    s.ask(proposal("p1", oid))  # execute: no wake-up
    assert not s.socks["stream"].poll(QUIET_MS)
    s.ask(proposal("p2", oid, wish="wait"))
    env = s.receive("stream")
    assert [(r["event"], r.get("status")) for r in env.body.rows][-1] == ("proposal_status", "wait")
    assert [r["sequence"] for r in env.body.rows] == list(range(last + 1, last + 1 + len(env.body.rows)))


def test_a_wake_entry_can_ask_for_a_field_being_present(serve):
    s = serve()
    oid = observed(s)
    last = s.recorder.writer.sequence
    s.send(Follow(after=last, wait_ms=20_000, wake=["proposal.pipeline_depth"]), "stream")
    s.ask(proposal("p1", oid))  # no pipeline_depth: no wake-up
    assert not s.socks["stream"].poll(QUIET_MS)
    s.ask(proposal("p2", oid, extra={"pipeline_depth": 4}))
    env = s.receive("stream")
    assert [r.get("proposal_id") for r in env.body.rows if r["event"] == "proposal"] == ["p1", "p2"]


@pytest.mark.parametrize("wake", [[], [""], [".status"], ["proposal_status.=x"], ["a=b"]])
def test_a_malformed_wake_is_refused_naming_the_entry(serve, wake):
    s = serve()
    reply = s.ask(Follow(after=0, wait_ms=20_000, wake=wake), "stream")
    assert isinstance(reply, RecorderError) and reply.code == "bad_wake", reply
    assert "wake" in reply.message


def test_a_follow_naming_wake_rows_is_answered_when_max_rows_wait(serve):
    s = serve()
    last = s.recorder.writer.sequence
    s.send(Follow(after=last, wait_ms=20_000, max_rows=3, wake=["never"]), "stream")
    for n in range(3):
        s.ask(RecordEvent(event="note", fields={"n": n}))
    env = s.receive("stream")
    assert [r["n"] for r in env.body.rows] == [0, 1, 2]


@pytest.mark.parametrize("fsync_fails", [False, True])
def test_a_follower_gets_a_row_before_its_fsync_and_the_writer_only_after(serve, peers, fsync_fails):
    # one socket follows and writes, so the order of its replies is the order they were sent:
    # the row to the follow first, then (after the fsync) the intent's acknowledgement; when
    # that fsync fails (the 2nd, after session_start's), the writer is never acknowledged
    faults = {"recorder": {"inject_failure": {"event": "fsync", "nth": 2}}} if fsync_fails else None
    s = serve(faults)
    s.ask(proposal("p1", observed(s)))
    peer = peers(s, sender="both")
    follow_id = peer.send(Follow(after=s.recorder.writer.sequence, wait_ms=20_000))
    assert peer.receive(QUIET_MS) is None, "the follow waits for a row"
    intent_id = peer.send(RecordIntent(proposal_id="p1", requester="a"))
    first, second = peer.receive(), peer.receive()
    assert isinstance(first, Rows) and first.reply_to == follow_id
    assert [r["event"] for r in first.rows] == [ActionAttempt.KIND]
    assert second.reply_to == intent_id
    if fsync_fails:
        assert isinstance(second, RecorderError) and second.code == "journal_failed"
    else:
        assert isinstance(second, IntentAck) and second.sequence == first.rows[0]["sequence"]


def test_a_broken_journal_acknowledges_no_repeat_of_a_row_it_wrote_but_never_made_durable(serve, peers):
    # the intent's fsync fails (fault journal:fsync): the same request again must not be answered
    # from the index with an intent_ack, or the action would be sent on a row never made durable
    s = serve({"recorder": {"inject_failure": {"event": "fsync", "nth": 2}}})
    s.ask(proposal("p1", observed(s)))
    first = s.ask(RecordIntent(proposal_id="p1", requester="a"))
    assert isinstance(first, RecorderError) and first.code == "journal_failed"
    again = s.ask(RecordIntent(proposal_id="p1", requester="a"))
    assert isinstance(again, RecorderError) and again.code == "journal_failed"
    [attempt] = attempts(s)
    reply = s.ask(RecordResult(attempt_id=attempt["attempt_id"], outcome="accepted"))
    assert isinstance(reply, RecorderError) and reply.code == "journal_failed"
    act = peers(s)
    act.send(AwaitIntent(requester="a", wait_ms=20_000))
    assert isinstance(act.receive(), RecorderError)
