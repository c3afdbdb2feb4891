"""The recorder's domain rules (``actors.recorder.rules``), in-process: a real Recorder on
real files under tmp_path, no sockets, no processes."""

from __future__ import annotations

import json
import os

import pytest

from actors.recorder.rules import Recorder, Refusal
from actors.recorder.state import CACHE_ROWS
from protocol.events import (
    ActionAttempt,
    ActionResult,
    Observation,
    Proposal,
    ProposalStatus,
    SessionEnd,
    SessionStart,
    reserved_kinds,
)
from protocol.from_recorder import IntentAck, ObservationStored
from protocol.journal import GENESIS, scan_file
from protocol.to_recorder import Finalize, RecordEvent, RecordIntent, RecordResult, ReportObservationError

from .conftest import kinds, observe, proposal, rows

pytestmark = pytest.mark.timeout(60)


def refused(code: str, call, *args) -> Refusal:
    with pytest.raises(Refusal) as info:
        call(*args)
    assert info.value.code == code, f"refused with {info.value.code!r}: {info.value}"
    assert str(info.value), "a refusal names what was wrong"
    return info.value


def executed(rec: Recorder, pid: str = "p1", read_id: str = "r1") -> str:
    """An observation and an executable proposal for it; the proposal's id."""
    oid = observe(rec, read_id).observation_id
    assert rec.on_record_proposal(proposal(pid, oid)).disposition == "execute"
    return pid


def count(rec: Recorder, kind: str) -> int:
    return kinds(rec).count(kind)


# -- start ---------------------------------------------------------------------------------


def test_a_new_session_starts_with_session_start_chained_from_genesis(make_recorder):
    rec = make_recorder(profile={"session": {"max_steps": 7}, "game": {"backend": "builtin"}})
    [row] = rows(rec)
    assert row["event"] == SessionStart.KIND and row["sequence"] == 1
    assert row["prev_sha256"] == GENESIS
    assert row["max_steps"] == 7 and row["game_backend"] == "builtin" and row["dry_run"] is False
    assert os.path.isdir(os.path.join(rec.dir, "observations"))


def test_a_capture_directory_is_never_reused(make_recorder, root):
    rec = make_recorder()
    os.remove(rec.journal_path)  # a session directory without a journal: not resumable
    with pytest.raises(FileExistsError):
        make_recorder()


# -- observations --------------------------------------------------------------------------


def test_an_observation_is_stored_as_a_file_whose_digest_the_row_carries(make_recorder):
    rec = make_recorder()
    stored = observe(rec, "r1", {"state_type": "map", "x": [1, 2]})
    assert isinstance(stored, ObservationStored)
    assert (stored.observation_id, stored.step, stored.sequence) == ("o-000001", 1, 2)
    row = rows(rec)[-1]
    assert row["event"] == Observation.KIND and row["state_type"] == "map" and row["read_id"] == "r1"
    with open(os.path.join(rec.root, row["path"]), "rb") as fh:
        data = fh.read()
    assert json.loads(data) == {"state_type": "map", "x": [1, 2]}
    assert row["sha256"] == stored.sha256 and "after_attempt_id" not in row


def test_the_same_read_is_stored_once(make_recorder):
    rec = make_recorder()
    first = observe(rec, "r1")
    again = observe(rec, "r1", {"state_type": "other"})
    assert again == first
    assert count(rec, Observation.KIND) == 1


def test_an_orphan_observation_file_is_never_overwritten(make_recorder):
    rec = make_recorder()
    orphan = os.path.join(rec.dir, "observations", "000001.json")
    with open(orphan, "w") as fh:
        fh.write("left by a crash")
    assert observe(rec, "r1").observation_id == "o-000002"
    with open(orphan) as fh:
        assert fh.read() == "left by a crash"


def test_an_observation_error_names_the_last_observation(make_recorder):
    rec = make_recorder()
    observe(rec, "r1")
    reply = rec.on_report_observation_error(
        ReportObservationError(read_id="r2", error="timeout", error_type="ReadTimeout")
    )
    row = rows(rec)[-1]
    assert row["sequence"] == reply.sequence and row["event"] == "observation_error"
    assert row["last_observation_id"] == "o-000001" and row["error"] == "timeout"


# -- proposals -----------------------------------------------------------------------------


def test_a_proposal_is_refused_for_an_unknown_observation_a_bad_wish_or_no_action(make_recorder):
    rec = make_recorder()
    oid = observe(rec, "r1").observation_id
    refused("unknown_observation", rec.on_record_proposal, proposal("p1", "o-999999"))
    refused("bad_wish", rec.on_record_proposal, proposal("p1", oid, wish="maybe"))
    refused("bad_proposal", rec.on_record_proposal, proposal("p1", oid, action=None))
    assert count(rec, Proposal.KIND) == 0


def test_a_proposal_gets_its_wished_disposition_and_an_executed_one_a_decide_row(make_recorder):
    rec = make_recorder()
    oid = observe(rec, "r1").observation_id
    wishes = {"p1": "execute", "p2": "wait", "p3": "suppressed", "p4": "stop"}
    got = {
        pid: rec.on_record_proposal(proposal(pid, oid, wish=w, extra={"policy_key": pid})).disposition
        for pid, w in wishes.items()
    }
    assert got == {"p1": "execute", "p2": "wait", "p3": "suppressed", "p4": "session_stopped"}
    props = [r for r in rows(rec) if r["event"] == Proposal.KIND]
    assert [r["policy_key"] for r in props] == ["p1", "p2", "p3", "p4"]  # the policy's extras kept
    stop = [r for r in rows(rec) if r["event"] == ProposalStatus.KIND][-1]
    assert stop["stop_reason"] == "because"
    with open(os.path.join(rec.root, "decisions.jsonl")) as fh:
        decides = [json.loads(line) for line in fh]
    assert [(d["proposal_id"], d["event"], d["disposition"]) for d in decides] == [("p1", "decide", "execute")]


def test_in_a_group_the_decide_row_is_appended_after_it_with_its_status_rows_time(make_recorder):
    """The feed line waits for ``after_group`` (the server calls it once the group's
    replies are sent): no acknowledgement waits for a compatibility feed."""
    rec = make_recorder()
    oid = observe(rec, "r1").observation_id
    feed = os.path.join(rec.root, "decisions.jsonl")
    rec.writer.begin_group()
    rec.on_record_proposal(proposal("p1", oid))
    assert not os.path.exists(feed)
    rec.commit()
    rec.after_group()
    with open(feed) as fh:
        [decide] = [json.loads(line) for line in fh]
    status = [r for r in rows(rec) if r["event"] == ProposalStatus.KIND][-1]
    assert (decide["proposal_id"], decide["disposition"]) == ("p1", "execute")
    assert decide["recorded_at"] == status["recorded_at"]


def test_a_dry_run_session_previews_instead_of_executing(make_recorder):
    rec = make_recorder(profile={"session": {"dry_run": True}})
    oid = observe(rec, "r1").observation_id
    assert rec.on_record_proposal(proposal("p1", oid)).disposition == "dry_run"
    refused("not_executable", rec.on_record_intent, RecordIntent(proposal_id="p1", requester="a"))


def test_the_same_proposal_is_recorded_once(make_recorder):
    rec = make_recorder()
    oid = observe(rec, "r1").observation_id
    first = rec.on_record_proposal(proposal("p1", oid))
    again = rec.on_record_proposal(proposal("p1", oid, wish="wait"))
    assert again == first
    assert (count(rec, Proposal.KIND), count(rec, ProposalStatus.KIND)) == (1, 1)


def test_an_execute_wish_while_stopping_is_session_stopped(make_recorder):
    rec = make_recorder()
    oid = observe(rec, "r1").observation_id
    rec.on_record_event(RecordEvent(event="session_stopping", fields={"reason": "max_steps"}))
    assert rec.on_record_proposal(proposal("p1", oid)).disposition == "session_stopped"
    assert rows(rec)[-1]["stop_reason"] == "max_steps"


# -- intents -------------------------------------------------------------------------------


def test_an_intent_is_acknowledged_with_a_durable_attempt(make_recorder):
    rec = make_recorder()
    executed(rec)
    ack = rec.on_record_intent(RecordIntent(proposal_id="p1", requester="a"))
    assert isinstance(ack, IntentAck) and ack.attempt_id == "a-000001" and ack.action == "end_turn"
    row = rows(rec)[-1]
    assert row["event"] == ActionAttempt.KIND and row["sequence"] == ack.sequence
    assert row["requester"] == "a" and row["observation_id"] == "o-000001"


def test_an_intent_is_refused_without_a_proposal_or_an_execute_disposition(make_recorder):
    rec = make_recorder()
    oid = observe(rec, "r1").observation_id
    rec.on_record_proposal(proposal("p-wait", oid, wish="wait"))
    refused("unknown_proposal", rec.on_record_intent, RecordIntent(proposal_id="p-none", requester="a"))
    refused("not_executable", rec.on_record_intent, RecordIntent(proposal_id="p-wait", requester="a"))
    assert count(rec, ActionAttempt.KIND) == 0


def test_a_repeated_intent_by_the_same_requester_gets_the_same_ack(make_recorder):
    rec = make_recorder()
    executed(rec)
    first = rec.on_record_intent(RecordIntent(proposal_id="p1", requester="a"))
    assert rec.on_record_intent(RecordIntent(proposal_id="p1", requester="a")) == first
    assert count(rec, ActionAttempt.KIND) == 1


def test_a_proposal_is_never_attempted_twice(make_recorder):
    rec = make_recorder()
    executed(rec)
    ack = rec.on_record_intent(RecordIntent(proposal_id="p1", requester="a"))
    refused("attempt_exists", rec.on_record_intent, RecordIntent(proposal_id="p1", requester="b"))
    rec.on_record_result(RecordResult(attempt_id=ack.attempt_id, outcome="accepted"))
    # once resolved, not even the same requester may have it again
    refused("attempt_exists", rec.on_record_intent, RecordIntent(proposal_id="p1", requester="a"))
    assert count(rec, ActionAttempt.KIND) == 1


def test_no_intent_once_the_session_is_stopping(make_recorder):
    rec = make_recorder()
    executed(rec)
    rec.on_record_event(RecordEvent(event="session_stopping", fields={"reason": "signal"}))
    refused("session_stopping", rec.on_record_intent, RecordIntent(proposal_id="p1", requester="a"))


def test_an_intent_for_a_forgotten_observation_is_stale(make_recorder):
    rec = make_recorder()
    executed(rec)
    rec.index.observed.limit = 1  # remember one observation: the next pushes o-000001 out
    observe(rec, "r2")
    refused("stale_proposal", rec.on_record_intent, RecordIntent(proposal_id="p1", requester="a"))


# -- results -------------------------------------------------------------------------------


def test_a_result_is_refused_for_an_unknown_attempt_or_a_bad_outcome(make_recorder):
    rec = make_recorder()
    executed(rec)
    ack = rec.on_record_intent(RecordIntent(proposal_id="p1", requester="a"))
    refused("unknown_attempt", rec.on_record_result, RecordResult(attempt_id="a-999999", outcome="accepted"))
    refused("bad_outcome", rec.on_record_result, RecordResult(attempt_id=ack.attempt_id, outcome="fine"))
    assert count(rec, ActionResult.KIND) == 0


def test_the_same_result_is_recorded_once(make_recorder):
    rec = make_recorder()
    executed(rec)
    ack = rec.on_record_intent(RecordIntent(proposal_id="p1", requester="a"))
    first = rec.on_record_result(RecordResult(attempt_id=ack.attempt_id, outcome="accepted", http_status=200))
    again = rec.on_record_result(RecordResult(attempt_id=ack.attempt_id, outcome="rejected"))
    assert again == first
    assert [r["outcome"] for r in rows(rec) if r["event"] == ActionResult.KIND] == ["accepted"]
    assert rec.snapshot()["action_results"]["accepted"] == 1


def test_after_attempt_id_is_on_the_first_read_after_an_attempt_only(make_recorder):
    rec = make_recorder()
    executed(rec)
    ack = rec.on_record_intent(RecordIntent(proposal_id="p1", requester="a"))
    rec.on_record_result(RecordResult(attempt_id=ack.attempt_id, outcome="accepted"))
    observe(rec, "r2")
    observe(rec, "r3")
    obs = [r for r in rows(rec) if r["event"] == Observation.KIND]
    assert [r.get("after_attempt_id") for r in obs] == [None, ack.attempt_id, None]


# -- other events --------------------------------------------------------------------------


@pytest.mark.parametrize("kind", sorted(reserved_kinds()))
def test_a_reserved_kind_is_refused_through_record_event(make_recorder, kind):
    rec = make_recorder()
    refused("reserved_event", rec.on_record_event, RecordEvent(event=kind, fields={}))
    assert kinds(rec) == [SessionStart.KIND]


def test_an_event_with_a_key_is_recorded_once_with_its_key(make_recorder):
    rec = make_recorder()
    first = rec.on_record_event(RecordEvent(event="actor_start", fields={"actor": "x"}, key="k1"))
    again = rec.on_record_event(RecordEvent(event="actor_start", fields={"actor": "x"}, key="k1"))
    assert again.sequence == first.sequence
    [row] = [r for r in rows(rec) if r["event"] == "actor_start"]
    assert row["event_key"] == "k1" and row["actor"] == "x"


def test_a_value_json_cannot_hold_is_refused_before_anything_is_written(make_recorder):
    rec = make_recorder()
    with pytest.raises(ValueError):
        rec.on_record_event(RecordEvent(event="note", fields={"x": float("nan")}))
    assert kinds(rec) == [SessionStart.KIND]
    assert rec.on_record_event(RecordEvent(event="note", fields={"x": 1})).sequence == 2


# -- the end -------------------------------------------------------------------------------


def test_finalize_writes_session_end_and_a_summary_pinning_the_last_row(make_recorder):
    rec = make_recorder()
    executed(rec)
    ack = rec.on_record_intent(RecordIntent(proposal_id="p1", requester="a"))
    summary = rec.on_finalize(Finalize(reason="done", exit_code=0)).summary
    scan = scan_file(rec.journal_path)
    end = scan.rows[-1]
    assert end["event"] == SessionEnd.KIND and end["unresolved_attempts"] == [ack.attempt_id]
    assert summary["journal"] == {"last_sequence": end["sequence"], "last_row_sha256": scan.last_digest}
    assert summary["unresolved_attempts"] == [ack.attempt_id] and summary["steps"] == 1
    with open(os.path.join(rec.dir, "session.json")) as fh:
        assert json.load(fh) == summary
    assert rec.on_finalize(Finalize(reason="again", exit_code=1)).summary == summary
    assert count(rec, SessionEnd.KIND) == 1


def test_nothing_new_is_recorded_after_session_end(make_recorder):
    rec = make_recorder()
    executed(rec)
    ack = rec.on_record_intent(RecordIntent(proposal_id="p1", requester="a"))
    first_read = observe(rec, "r2")
    rec.on_finalize(Finalize(reason="done", exit_code=0))
    before = kinds(rec)
    oid = first_read.observation_id
    refused("session_finalized", observe, rec, "r-new")
    refused("session_finalized", rec.on_report_observation_error, ReportObservationError(read_id="r-new", error="x"))
    refused("session_finalized", rec.on_record_proposal, proposal("p-new", oid))
    refused("session_finalized", rec.on_record_intent, RecordIntent(proposal_id="p1", requester="a"))
    refused("session_finalized", rec.on_record_result, RecordResult(attempt_id=ack.attempt_id, outcome="accepted"))
    refused("session_finalized", rec.on_record_event, RecordEvent(event="note", fields={}))
    assert observe(rec, "r2") == first_read  # a repeat is answered from the journal
    assert kinds(rec) == before


# -- resume --------------------------------------------------------------------------------

TORN = b'{"event":"observation","observation_id":"o-0'


def test_resume_after_a_torn_last_line_continues_the_chain_and_names_the_line(make_recorder):
    rec = make_recorder()
    executed(rec)
    ack = rec.on_record_intent(RecordIntent(proposal_id="p1", requester="a"))
    rec.writer.close()
    size = os.path.getsize(rec.journal_path)
    with open(rec.journal_path, "ab") as fh:
        fh.write(TORN)
    again = make_recorder(start_count=2)
    scan = scan_file(again.journal_path)
    [torn] = scan.torn
    assert (torn.offset, torn.length, torn.terminated) == (size, len(TORN), True)
    resumed = scan.rows[-1]
    assert resumed["event"] == "recorder_resumed" and resumed["start_count"] == 2
    assert resumed["resumed_after_sequence"] == ack.sequence
    assert resumed["torn_rows"] == [
        {"line": torn.line_number, "offset": size, "length": len(TORN), "sha256": torn.sha256, "terminated": False}
    ]
    assert resumed["prev_sha256"] == scan.digests[-2]  # chained to the last intact row
    with open(again.journal_path, "rb") as fh:
        assert fh.read()[size : size + len(TORN) + 1] == TORN + b"\n"  # left as it was


def test_a_resumed_recorder_answers_repeats_as_the_one_that_died(make_recorder):
    rec = make_recorder()
    executed(rec)
    stored = observe(rec, "r1")
    ack = rec.on_record_intent(RecordIntent(proposal_id="p1", requester="a"))
    rec.writer.close()
    again = make_recorder(start_count=2)
    assert observe(again, "r1") == stored
    assert again.on_record_intent(RecordIntent(proposal_id="p1", requester="a")) == ack
    refused("attempt_exists", again.on_record_intent, RecordIntent(proposal_id="p1", requester="b"))
    assert observe(again, "r2").observation_id == "o-000002"
    assert count(again, ActionAttempt.KIND) == 1


def test_a_resumed_finalized_session_only_serves_reads(make_recorder):
    rec = make_recorder()
    summary = rec.on_finalize(Finalize(reason="done", exit_code=0)).summary
    rec.writer.close()
    again = make_recorder(start_count=2)
    assert again.finalized == summary
    assert kinds(again)[-1] == SessionEnd.KIND  # no recorder_resumed after the end
    refused("session_finalized", observe, again, "r1")
    assert again.on_finalize(Finalize(reason="x", exit_code=3)).summary == summary


# -- reading rows back ---------------------------------------------------------------------


def test_rows_after_come_from_the_cache_or_from_disk_alike(make_recorder):
    rec = make_recorder()
    for n in range(CACHE_ROWS + 50):
        rec.on_record_event(RecordEvent(event="note", fields={"n": n}))
    on_disk = scan_file(rec.journal_path).rows
    early = rec.rows_after(0, 10)  # older than the cache: read from the journal
    late = rec.rows_after(len(on_disk) - 5, 10)
    assert early == on_disk[:10]
    assert late == on_disk[-5:]
    assert rec.rows_after(len(on_disk), 10) == []
