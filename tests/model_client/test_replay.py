"""ReplayBackend: answers from a capture's evidence; divergence reported, never invented."""

from __future__ import annotations

import json

import pytest

from actors.model_client import ModelTimeout, ReplayBackend, ReplayDivergence, ReplayedError, request_hash
from tests.fakes.openai_server import Reply

from .conftest import CARDS, card_answer, card_question


def write_events(path, rows, tail=""):
    path.write_text("".join(json.dumps(r) + "\n" for r in rows) + tail, encoding="utf-8")
    return path


@pytest.fixture
def capture(server, make_client, tmp_path):
    """A journal recorded against the fake server: two answers and one timeout."""
    server.script(
        Reply.answer(card_answer(1, 0.8)), Reply.answer(card_answer(2, 0.4)), Reply.answer(card_answer(0)).slow(10)
    )
    client = make_client(server, timeout_s=0.3)
    first = client.ask(card_question()).evidence
    second = client.ask(card_question()).evidence  # the same question asked again
    with pytest.raises(ModelTimeout) as info:
        client.ask(card_question(evidence={"hp": 1}))
    rows = [
        {"seq": 1, "event": "session_start"},
        {"seq": 2, "event": "proposal", "source": "model", "model_evidence": [first]},
        {"seq": 3, "event": "proposal", "source": "model", "model_evidence": [second]},
        {"seq": 4, "event": "model_error", "model_error": info.value.to_record()},
    ]
    return write_events(tmp_path / "events.jsonl", rows, tail='{"seq": 5, "event": "prop')


def test_replay_answers_in_capture_order_without_calling(capture, server):
    asked_before = len(server.requests)
    backend = ReplayBackend.from_events(capture)
    assert backend.skipped_lines == 1 and backend.recorded_calls() == 3
    first = backend.ask(card_question())
    second = backend.ask(card_question())
    assert (first.answer.choice, second.answer.choice) == (1, 2)
    assert (first.answer.gated, second.answer.gated) == (False, True)
    assert len(server.requests) == asked_before
    evidence = first.evidence
    assert evidence["backend"] == "replay" and evidence["attempts"] == 0
    assert evidence["replay_of"]["usage"]["total_tokens"] == 120
    assert evidence["usage"]["total_tokens"] is None  # nothing was spent now
    assert evidence["answers"][0]["answer_gate_scope"] == "default_helper_not_policy_gate"
    usage = backend.usage()
    assert usage["answered"] == 2 and usage["replayed"] == 2 and usage["total_tokens"] == 0


def test_recorded_failure_is_replayed_with_its_kind(capture):
    backend = ReplayBackend.from_events(capture)
    with pytest.raises(ReplayedError) as info:
        backend.ask(card_question(evidence={"hp": 1}))
    record = info.value.to_record()
    assert record["kind"] == "timeout" and record["backend"] == "replay"
    assert record["request"]["question_kind"] == "card_reward"


def test_unasked_question_is_a_divergence(capture):
    backend = ReplayBackend.from_events(capture)
    with pytest.raises(ReplayDivergence) as info:
        backend.ask(card_question(evidence={"hp": 2}))
    record = info.value.to_record()
    assert record["kind"] == "divergence" and "never asked" in record["message"]
    assert record["request_hash"] == request_hash("card_reward", [card_question(evidence={"hp": 2}).state()])
    assert backend.usage()["errors"] == {"divergence": 1}


def test_asking_more_often_than_recorded_is_a_divergence(capture):
    backend = ReplayBackend.from_events(capture)
    backend.ask(card_question())
    backend.ask(card_question())
    with pytest.raises(ReplayDivergence, match="asked 3 times, the capture recorded it 2"):
        backend.ask(card_question())


def test_duplicate_rows_of_one_call_count_once(capture, tmp_path):
    rows = [json.loads(line) for line in capture.read_text().splitlines()[:2]]
    path = write_events(tmp_path / "dup.jsonl", rows + [rows[1]])
    backend = ReplayBackend.from_events(path)
    backend.ask(card_question())
    with pytest.raises(ReplayDivergence):
        backend.ask(card_question())


def test_gate_override_recomputes_gated(capture):
    backend = ReplayBackend.from_events(capture, gate=0.9)
    assert backend.ask(card_question()).answer.gated is True  # confidence 0.8 < 0.9


def test_a_recorded_answer_that_no_longer_fits_is_a_divergence(capture, tmp_path):
    rows = [json.loads(line) for line in capture.read_text().splitlines()[:2]]
    rows[1]["model_evidence"][0]["answers"][0]["answer"]["card_index"] = 9
    backend = ReplayBackend.from_events(write_events(tmp_path / "edited.jsonl", rows))
    with pytest.raises(ReplayDivergence, match="no longer fits"):
        backend.ask(card_question())


def test_hash_is_stable_across_json_round_trips():
    state = card_question().state()
    assert request_hash("card_reward", [state]) == request_hash("card_reward", [json.loads(json.dumps(state))])
    assert request_hash("card_reward", [state]) != request_hash("map_node", [state])
    reordered = dict(reversed(list(CARDS[0].items())))
    assert request_hash("card_reward", [card_question(cards=[reordered] + CARDS[1:]).state()]) == request_hash(
        "card_reward", [state]
    )  # key order does not matter
