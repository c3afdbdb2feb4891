"""The recorder's checkpoint (``actors.recorder.checkpoint``): a resume reads the checkpoint
and the rows after it, and rebuilds exactly the index a full scan would; a checkpoint that
does not match the journal is ignored. And the index's memory is bounded."""

from __future__ import annotations

import json
import os
import shutil

import pytest

from actors.recorder import checkpoint
from actors.recorder.index import RECENT
from actors.recorder.rules import Recorder, Refusal
from protocol.journal import scan_file
from protocol.to_recorder import RecordEvent, RecordIntent, RecordResult

from .conftest import context, observe, proposal, rows

pytestmark = pytest.mark.timeout(120)
TIMING = ("recorded_at", "ts", "prev_sha256")
BOUNDED = (
    "reads",
    "observed",
    "proposals",
    "pending",
    "dispositions",
    "attempts",
    "attempt_by_proposal",
    "results",
    "event_keys",
)  # the index's bounded maps


def notes(rec: Recorder, count: int, start: int = 0) -> None:
    for n in range(start, start + count):
        rec.on_record_event(RecordEvent(event="note", fields={"n": n}, key=f"k{n}"))


def a_step(rec: Recorder, n: int) -> None:
    oid = observe(rec, f"r{n}").observation_id
    rec.on_record_proposal(proposal(f"p{n}", oid))
    ack = rec.on_record_intent(RecordIntent(proposal_id=f"p{n}", requester="a"))
    rec.on_record_result(RecordResult(attempt_id=ack.attempt_id, outcome="accepted"))


def resumed_both_ways(root: str, tmp_path) -> tuple[Recorder, Recorder]:
    """The session resumed from its checkpoint, and a copy resumed with a full scan."""
    copy = str(tmp_path / "copy")
    shutil.copytree(root, copy)
    os.remove(os.path.join(context(copy).session_dir, checkpoint.NAME))
    return Recorder(context(root, start_count=2)), Recorder(context(copy, start_count=2))


def same_index(a: Recorder, b: Recorder) -> bool:
    """The two indexes hold the same entries in the same order (the order decides what a
    bounded map forgets next)."""
    return json.dumps(a.index.to_state()) == json.dumps(b.index.to_state())


def last_row_untimed(rec: Recorder) -> dict:
    return {k: v for k, v in rows(rec)[-1].items() if k not in TIMING}


def test_a_checkpoint_is_written_every_so_many_rows(make_recorder):
    rec = make_recorder()
    notes(rec, checkpoint.EVERY - 2)
    path = os.path.join(rec.dir, checkpoint.NAME)
    assert not os.path.exists(path)
    notes(rec, 1, start=checkpoint.EVERY)
    with open(path) as fh:
        state = json.load(fh)
    assert state["point"]["sequence"] == checkpoint.EVERY == rec.writer.sequence
    assert state["point"]["offset"] == os.path.getsize(rec.journal_path)


def test_a_resume_from_the_checkpoint_rebuilds_what_a_full_scan_does(make_recorder, root, tmp_path):
    rec = make_recorder()
    for n in range(300):
        a_step(rec, n)
    notes(rec, checkpoint.EVERY)
    a_step(rec, 300)
    oid = observe(rec, "r-last").observation_id
    rec.on_record_proposal(proposal("p-open", oid))
    rec.on_record_intent(RecordIntent(proposal_id="p-open", requester="a"))  # left unresolved
    rec.writer.close()
    fast, full = resumed_both_ways(root, tmp_path)
    try:
        assert same_index(fast, full)
        assert fast.index.unresolved_attempts() == ["a-000302"]
        assert last_row_untimed(fast) == last_row_untimed(full)
        assert fast.rows_after(0, 50) == full.rows_after(0, 50)  # older rows come from disk
        assert fast.rows_after(fast.writer.sequence - 3, 10) == rows(fast)[-3:]
        ack = fast.on_record_intent(RecordIntent(proposal_id="p-open", requester="a"))
        assert ack.attempt_id == "a-000302"  # the repeat is recognised after the checkpoint too
    finally:
        fast.writer.close()
        full.writer.close()


def test_a_row_whose_event_key_is_no_string_resumes_alike_from_the_checkpoint(make_recorder, root, tmp_path):
    """``record_event`` passes its fields through: a row may carry ``event_key: 7``. A
    checkpoint (JSON) cannot keep that key an integer, so no such key is indexed: resumed
    either way, the index is the same and a later request keyed ``"7"`` is no repeat."""
    rec = make_recorder()
    rec.on_record_event(RecordEvent(event="note", fields={"event_key": 7}))
    for n in range(checkpoint.EVERY + 5):  # unkeyed: the bounded map keeps the odd key
        rec.on_record_event(RecordEvent(event="note", fields={"n": n}))
    rec.writer.close()
    fast, full = resumed_both_ways(root, tmp_path)
    try:
        assert list(fast.index.event_keys) == list(full.index.event_keys)
        for r in (fast, full):
            before = r.writer.sequence
            r.on_record_event(RecordEvent(event="note", fields={"x": 1}, key="7"))
            assert r.writer.sequence == before + 1, "a new request keyed '7' is appended"
    finally:
        fast.writer.close()
        full.writer.close()


def test_torn_lines_before_the_checkpoint_are_still_named_on_the_next_resume(make_recorder, root, tmp_path):
    rec = make_recorder()
    notes(rec, 10)
    rec.writer.close()
    with open(rec.journal_path, "ab") as fh:
        fh.write(b'{"event":"note","n"')
    again = make_recorder(start_count=2)
    [first] = rows(again)[-1]["torn_rows"]
    assert first["terminated"] is False
    notes(again, checkpoint.EVERY, start=10)  # a checkpoint after the torn line
    again.writer.close()
    fast, full = resumed_both_ways(root, tmp_path)
    try:
        named = rows(fast)[-1]["torn_rows"]
        assert named == rows(full)[-1]["torn_rows"] == [{**first, "terminated": True}]
        assert same_index(fast, full)
    finally:
        fast.writer.close()
        full.writer.close()


@pytest.mark.parametrize("damage", ["other_session", "journal_cut", "different_row", "garbage", "old_format"])
def test_a_checkpoint_that_does_not_match_the_journal_is_ignored(make_recorder, root, tmp_path, damage, caplog):
    rec = make_recorder()
    notes(rec, checkpoint.EVERY + 5)
    rec.writer.close()
    path = os.path.join(rec.dir, checkpoint.NAME)
    with open(path) as fh:
        state = json.load(fh)
    if damage == "other_session":
        state["session"] = "20260101T000000Z-someoneelse"
    elif damage == "old_format":  # format 1 held the bounded maps as lists of pairs
        state["format"] = 1
        state["index"].update({name: [[k, v] for k, v in state["index"][name].items()] for name in BOUNDED})
    elif damage == "different_row":
        state["point"]["digest"] = "0" * 64
    elif damage == "journal_cut":
        with open(rec.journal_path, "r+b") as fh:
            fh.truncate(state["point"]["offset"] - 10)
    with open(path, "w") as fh:
        fh.write("{not json" if damage == "garbage" else json.dumps(state))
    again = make_recorder(start_count=2)
    assert "checkpoint" in caplog.text and "ignored" in caplog.text
    if damage == "old_format":
        assert "format 1, not 2" in caplog.text
    scan = scan_file(again.journal_path)
    assert again.index.counts["note"] == sum(1 for r in scan.rows if r["event"] == "note")
    assert rows(again)[-1]["resumed_after_sequence"] == scan.rows[-2]["sequence"]


def test_a_checkpoint_due_in_a_group_is_written_after_it(make_recorder):
    """Inside a group commit the checkpoint waits for ``after_group`` (the server calls it
    once the group's replies are sent), and then covers the group's last row."""
    rec = make_recorder()
    rec.writer.begin_group()
    notes(rec, checkpoint.EVERY + 3)
    path = os.path.join(rec.dir, checkpoint.NAME)
    assert not os.path.exists(path)
    rec.commit()
    rec.after_group()
    with open(path) as fh:
        state = json.load(fh)
    assert state["format"] == checkpoint.FORMAT
    assert state["point"]["sequence"] == rec.writer.sequence == checkpoint.EVERY + 4


def test_the_index_keeps_the_newest_entries_only(make_recorder):
    rec = make_recorder()
    for n in range(RECENT + 10):
        oid = observe(rec, f"r{n}").observation_id
        rec.on_record_proposal(proposal(f"p{n}", oid, wish="wait"))
    assert len(rec.index.observed) == len(rec.index.reads) == len(rec.index.proposals) == RECENT
    assert len(rec.index.pending) == 0  # every proposal got its status
    # a forgotten proposal is refused, never attempted
    with pytest.raises(Refusal) as info:
        rec.on_record_intent(RecordIntent(proposal_id="p0", requester="a"))
    assert info.value.code == "unknown_proposal"
