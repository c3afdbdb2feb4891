"""The journal's vocabulary (protocol/events.py) against real rows.

``journal_rows.jsonl`` holds one real row of every distinct shape (kind, keys and value
types) found in the journals of ``supervisor start run/profiles/demo.yaml`` and
``hostile.yaml``, a pyboy-demo session, and chaos and test sessions, copied byte for byte.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from protocol import events as ev
from protocol import journal
from protocol.to_recorder import RecordEvent

HERE = os.path.dirname(__file__)
ROOT = os.path.dirname(os.path.dirname(HERE))
ROWS = os.path.join(HERE, "journal_rows.jsonl")
DOC = os.path.join(ROOT, "docs", "journal.md")


def real_rows() -> list[dict]:
    with open(ROWS, encoding="utf-8") as fh:
        return [json.loads(line) for line in fh]


def own_fields(row: dict) -> dict:
    return {k: v for k, v in row.items() if k not in ev.WRITER_FIELDS}


@pytest.mark.parametrize("row", real_rows(), ids=lambda r: f"{r['event']}-{r['sequence']}")
def test_every_real_row_round_trips_exactly(row):
    cls = ev.EVENTS[row["event"]]
    event = cls.from_row(row)
    assert isinstance(event, cls)
    assert event.to_row() == own_fields(row)
    assert ev.parse(row) == event
    assert journal.encode_row({**event.to_row(), **{k: row[k] for k in ev.WRITER_FIELDS}}) == journal.encode_row(row)


def test_the_real_rows_cover_the_recorders_kinds_and_the_reference_sessions():
    kinds = {r["event"] for r in real_rows()}
    assert {
        "session_start",
        "observation",
        "observation_error",
        "proposal",
        "proposal_status",
        "action_attempt",
        "action_result",
        "session_end",
        "run_identity_changed",
        "run_identity_unavailable",
        "recorder_resumed",
        "actor_start",
        "actor_exit",
        "session_stopping",
        "builtin_game_stats",
        "emulator_started",
    } <= kinds


def test_unknown_kinds_parse_to_none():
    assert ev.parse({"event": "from_a_newer_writer", "x": 1}) is None
    assert ev.parse({"sequence": 3}) is None
    assert ev.parse(["not", "a", "row"]) is None


def test_a_missing_field_names_the_kind_and_the_field():
    row = next(r for r in real_rows() if r["event"] == "action_attempt")
    del row["requester"]
    with pytest.raises(ev.EventError) as err:
        ev.parse(row)
    assert (err.value.kind, err.value.field, err.value.problem) == ("action_attempt", "requester", "missing")
    assert "'action_attempt'" in str(err.value) and "'requester'" in str(err.value)


def test_an_ill_typed_field_names_the_kind_the_field_and_the_type():
    row = next(r for r in real_rows() if r["event"] == "observation")
    row["step"] = "seven"
    with pytest.raises(ev.EventError, match=r"'observation'.*'step'.*integer, got str"):
        ev.Observation.from_row(row)


def test_a_row_of_another_kind_is_refused_by_the_class():
    row = next(r for r in real_rows() if r["event"] == "proposal_status")
    with pytest.raises(ev.EventError, match="'proposal_status' row"):
        ev.Proposal.from_row(row)


def test_optional_fields_are_left_out_when_none_and_plain_ones_kept():
    status = ev.ProposalStatus(proposal_id="p-000001", status="wait")
    assert status.to_row() == {"event": "proposal_status", "proposal_id": "p-000001", "status": "wait"}
    err = ev.ObservationError(read_id="r", error="boom", error_type="OSError", last_observation_id=None)
    assert err.to_row()["last_observation_id"] is None


def test_an_open_kind_keeps_its_extra_keys_and_declared_fields_win():
    proposal = ev.Proposal(
        proposal_id="p-1",
        observation_id="o-1",
        action="end_turn",
        parameters={},
        reason="r",
        source="policy",
        decide_ms=0.5,
        extra={"then_stop": "run_over", "pipeline_depth": 2, "action": "ignored"},
    )
    row = proposal.to_row()
    assert row["action"] == "end_turn" and row["then_stop"] == "run_over" and "model_evidence" not in row
    back = ev.Proposal.from_row(row)
    assert back.extra == {"then_stop": "run_over", "pipeline_depth": 2}
    assert back.to_row() == row


def test_a_closed_kind_ignores_keys_it_does_not_declare():
    row = {"event": "action_error", "attempt_id": "a-000001", "error": "e", "from_the_future": 1}
    assert ev.parse(row).to_row() == {"event": "action_error", "attempt_id": "a-000001", "error": "e"}


def test_record_event_of_builds_the_request_the_recorder_turns_into_the_row():
    stop = ev.SessionStopping(reason="max_steps", detail="")
    request = RecordEvent.of(stop, key="supervisor:6")
    assert (request.event, request.fields, request.key) == (
        "session_stopping",
        {"reason": "max_steps", "detail": ""},
        "supervisor:6",
    )
    keyed = ev.ActorGiveUp(actor="policy", reason="too many restarts", event_key="supervisor:9")
    assert RecordEvent.of(keyed).key == "supervisor:9"
    assert "event_key" not in RecordEvent.of(keyed).fields
    assert RecordEvent.of(ev.ActionError(attempt_id="a-1", error="e")).key is None


def test_record_event_of_refuses_a_kind_only_the_recorder_appends():
    with pytest.raises(ValueError, match="'proposal_status' is recorded only through its own request"):
        RecordEvent.of(ev.ProposalStatus(proposal_id="p-1", status="wait"))


def test_the_reserved_kinds_are_the_recorders_own_requests():
    assert ev.reserved_kinds() == {
        "session_start",
        "observation",
        "observation_error",
        "proposal",
        "proposal_status",
        "action_attempt",
        "action_result",
        "session_end",
        "run_identity_changed",
        "run_identity_unavailable",
        "recorder_resumed",
        "tap_write_refused",
    }


def test_schema_version_lives_with_the_vocabulary_and_the_journal_re_exports_it():
    assert journal.SCHEMA_VERSION is ev.SCHEMA_VERSION == 1


def test_every_kind_has_a_writer_and_a_unique_kind_name():
    for kind, cls in ev.EVENTS.items():
        assert kind == cls.KIND and cls.WRITER, cls


def test_docs_event_table_matches_the_types():
    with open(DOC, encoding="utf-8") as fh:
        doc = fh.read()
    assert ev.with_table(doc) == doc, (
        "docs/journal.md's event table disagrees with protocol/events.py; regenerate it with "
        "`.venv/bin/python -m protocol.events --write docs/journal.md`"
    )


def test_the_command_line_prints_the_table_and_checks_journals(tmp_path):
    table = subprocess.run(
        [sys.executable, "-m", "protocol.events"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout
    assert table == ev.table() and "| `observation` |" in table
    good = subprocess.run(
        [sys.executable, "-m", "protocol.events", "--check", ROWS], cwd=ROOT, capture_output=True, text=True
    )
    assert good.returncode == 0, good.stdout
    bad = tmp_path / "events.jsonl"
    bad.write_text(json.dumps({"event": "action_result", "attempt_id": "a-1"}) + "\n")
    out = subprocess.run(
        [sys.executable, "-m", "protocol.events", "--check", str(bad)], cwd=ROOT, capture_output=True, text=True
    )
    assert out.returncode == 1 and "'action_result': field 'outcome': missing" in out.stdout


def test_a_writer_holding_a_dict_gets_its_event_checked_and_nothing_dropped():
    stats = ev.EmulatorStats.from_fields(
        {
            "start_count": 1,
            "requests": 3,
            "frame": 10,
            "actions": 2,
            "busy_s": 0.1,
            "wall_s": 0.2,
            "cpu_s": 0.1,
            "emulation_s": 0.05,
            "busy_percent": 50.0,
        }
    )
    assert stats.to_row()["requests"] == 3
    with pytest.raises(ev.EventError) as undeclared:  # a closed kind: an unknown key is refused
        ev.EmulatorStats.from_fields({**stats.to_row(), "surprise": 1})
    assert "emulator_stats" in str(undeclared.value) and "surprise" in str(undeclared.value)
    # an open kind keeps what it does not declare, exactly: a question refused before any call
    # (actors/policy/advice.py) has no backend
    refused = {
        "kind": "bad_question",
        "message": "no such question",
        "request": None,
        "attempts": 0,
        "question_kind": "card_reward",
        "observation_id": "o-000001",
    }
    assert ev.ModelError.from_fields(refused).to_row() == {**refused, "event": "model_error"}
