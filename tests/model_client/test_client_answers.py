"""ModelClient over loopback HTTP: answers, structured output, and unusable answers."""

from __future__ import annotations

import json
import time

import pytest

from actors.model_client import (
    ANSWER_GATE_SCOPE,
    MalformedAnswer,
    MapNodeQuestion,
    ModelHTTPStatus,
    OffSchemaAnswer,
    QuestionError,
    RefusedAnswer,
    TruncatedAnswer,
)
from tests.fakes.openai_server import LITELLM_REJECT_RESPONSE_FORMAT, FakeOpenAIServer, Reply

from .conftest import SECRET, card_answer, card_question


def test_success_returns_answer_and_evidence(server, make_client):
    server.script(
        Reply.answer(
            card_answer(1, 0.9),
            model="served-model-v2",
            usage={"prompt_tokens": 210, "completion_tokens": 31, "total_tokens": 241},
        )
    )
    client = make_client(server)
    result = client.ask([card_question()])

    assert result.answer.choice == 1
    assert result.answer.confidence == 0.9 and result.answer.gated is False
    ev = result.evidence
    assert ev["backend"] == "http" and ev["attempts"] == 1
    assert ev["request"]["model"] == "test-model"
    assert ev["request"]["question_kind"] == "card_reward"
    assert ev["request"]["questions"][0]["cards"][1]["name"] == "Inflame"
    assert ev["answers"] == [
        {
            "question_index": 0,
            "answer": {"card_index": 1},
            "confidence": 0.9,
            "reason": "strength scales",
            "gated": False,
            "answer_gate_scope": "default_helper_not_policy_gate",
        }
    ]
    assert ev["usage"]["model"] == "served-model-v2"
    assert (ev["usage"]["prompt_tokens"], ev["usage"]["completion_tokens"], ev["usage"]["total_tokens"]) == (
        210,
        31,
        241,
    )
    assert ev["usage"]["latency_ms"] >= 0
    json.dumps(ev)  # storable as is
    # the wire request
    sent = server.requests[0]
    assert sent.path == "/v1/chat/completions"
    assert sent.headers["authorization"] == f"Bearer {SECRET}"
    assert sent.body["model"] == "test-model"
    assert [m["role"] for m in sent.body["messages"]] == ["system", "user"]
    assert "Inflame" in sent.body["messages"][1]["content"]


def test_low_confidence_is_gated_and_labelled_never_judged(server, make_client):
    server.script(Reply.answer(card_answer(None, 0.3)))
    result = make_client(server, confidence_gate=0.5).ask(card_question())
    assert result.answer.choice is None  # skip
    record = result.evidence["answers"][0]
    assert record["gated"] is True
    assert record["answer_gate_scope"] == ANSWER_GATE_SCOPE
    assert not {"correct", "label", "outcome", "accepted"} & set(record)


def test_json_schema_response_format_is_sent_with_the_answer_schema(server, make_client):
    server.script(Reply.answer(card_answer(2)))
    make_client(server).ask(card_question(can_skip=False))
    fmt = server.requests[0].body["response_format"]
    assert fmt["type"] == "json_schema"
    schema = fmt["json_schema"]["schema"]
    assert fmt["json_schema"]["strict"] is True
    assert schema["required"] == ["q0"]
    assert schema["properties"]["q0"]["properties"]["card_index"]["enum"] == [0, 1, 2]


def test_batch_of_questions_gets_one_answer_each(server, make_client):
    nodes_a = [{"index": 0, "type": "Monster"}, {"index": 1, "type": "RestSite"}]
    nodes_b = [{"index": 0, "type": "Elite"}, {"index": 1, "type": "Shop"}]
    server.script(
        Reply.answer(
            {
                "q0": {"node_index": 1, "confidence": 0.7, "reason": "heal"},
                "q1": {"node_index": 0, "confidence": 0.4, "reason": "risky"},
            }
        )
    )
    result = make_client(server).ask([MapNodeQuestion(next_options=nodes_a), MapNodeQuestion(next_options=nodes_b)])
    assert [a.choice for a in result.answers] == [1, 0]
    assert [a.gated for a in result.answers] == [False, True]


def test_structured_off_sends_no_response_format(server, make_client):
    server.script(Reply.text("```json\n" + json.dumps(card_answer(0)) + "\n```"))
    result = make_client(server, structured="off").ask(card_question())
    assert "response_format" not in server.requests[0].body
    assert result.answer.choice == 0
    assert result.evidence["request"]["parameters"]["response_format"] == "none (text parsed)"


def test_rejected_response_format_falls_back_and_is_remembered(make_client):
    with FakeOpenAIServer(reject_response_format=True) as server:
        server.script(
            Reply.text("Sure! Here you go:\n```json\n" + json.dumps(card_answer(2)) + "\n```"),
            Reply.text("<think>hmm</think>" + json.dumps(card_answer(1))),
        )
        client = make_client(server)
        first = client.ask(card_question())
        second = client.ask(card_question())
    assert (first.answer.choice, second.answer.choice) == (2, 1)
    sent = [("response_format" in r.body) for r in server.requests]
    assert sent == [True, False, False]  # rejected once, then never sent again
    assert client.structured_supported is False
    assert first.evidence["attempts"] == 2 and second.evidence["attempts"] == 1
    assert first.evidence["request"]["parameters"]["response_format"] == "none (text parsed)"


def test_forced_json_schema_does_not_fall_back(make_client):
    with FakeOpenAIServer(reject_response_format=True) as server:
        with pytest.raises(ModelHTTPStatus) as info:
            make_client(server, structured="json_schema").ask(card_question())
    assert info.value.to_record()["http_status"] == 400
    assert len(server.requests) == 1


@pytest.mark.parametrize(
    "reply, error, kind",
    [
        (Reply.text("I think Inflame is best, honestly."), MalformedAnswer, "malformed"),
        (Reply.text('{"q0": {"card_index": 1, "confidence": 0.9,'), MalformedAnswer, "malformed"),
        (Reply.text(None), MalformedAnswer, "malformed"),
        (Reply.raw(200, "<html>gateway</html>"), MalformedAnswer, "malformed"),
        (Reply.raw(200, '{"object": "chat.completion", "choices": []}'), MalformedAnswer, "malformed"),
        (Reply.answer(card_answer(7)), OffSchemaAnswer, "off_schema"),
        (Reply.answer(card_answer(1, confidence=1.5)), OffSchemaAnswer, "off_schema"),
        (Reply.answer({"q0": {"card_index": True, "confidence": 0.5, "reason": ""}}), OffSchemaAnswer, "off_schema"),
        (Reply.answer({"q0": {"card_index": 1, "reason": "no confidence"}}), OffSchemaAnswer, "off_schema"),
        (Reply.refusal("I can't help with gambling."), RefusedAnswer, "refused"),
        (Reply.truncated(), TruncatedAnswer, "truncated"),
        (
            Reply(
                body=json.loads(
                    json.dumps(
                        {
                            "choices": [
                                {
                                    "finish_reason": "length",
                                    "message": {"role": "assistant", "content": json.dumps(card_answer(1))},
                                }
                            ]
                        }
                    )
                )
            ),
            TruncatedAnswer,
            "truncated",
        ),
    ],
)
def test_unusable_answers_are_typed_model_errors(server, make_client, reply, error, kind):
    server.script(reply)
    client = make_client(server)
    with pytest.raises(error) as info:
        client.ask(card_question())
    record = info.value.to_record()
    assert record["kind"] == kind
    assert record["attempts"] == 1  # answer errors are not retried
    assert record["request"]["question_kind"] == "card_reward"
    json.dumps(record)
    assert client.usage()["errors"] == {kind: 1}


def test_off_schema_message_names_the_offending_path(server, make_client):
    server.script(Reply.answer(card_answer(7)))
    with pytest.raises(OffSchemaAnswer) as info:
        make_client(server).ask(card_question())
    assert "$.q0.card_index" in str(info.value) and "7" in str(info.value)


def test_answer_errors_still_charge_reported_usage(server, make_client):
    server.script(Reply.truncated())
    client = make_client(server)
    with pytest.raises(TruncatedAnswer) as info:
        client.ask(card_question())
    assert info.value.to_record()["usage"]["total_tokens"] == 120
    usage = client.usage()
    assert usage["total_tokens"] == 120 and usage["budget"]["tokens_used"] == 120


def test_mixed_or_empty_batches_are_caller_errors(server, make_client):
    client = make_client(server)
    with pytest.raises(QuestionError):
        client.ask([])
    with pytest.raises(QuestionError):
        client.ask([card_question(), MapNodeQuestion(next_options=[{"index": 0}])])
    assert server.requests == []


def test_a_500_refusing_response_format_falls_back_at_once_and_is_recorded(make_client):
    """Found against a LiteLLM proxy: its refusal of ``response_format`` is a 500, which was
    retried with backoff (~25 s a call) instead of falling back to text."""
    with FakeOpenAIServer(reject_response_format=LITELLM_REJECT_RESPONSE_FORMAT) as server:
        server.script(Reply.answer(card_answer(2)), Reply.answer(card_answer(0)))
        client = make_client(server, max_retries=3, backoff_s=2, backoff_max_s=8)
        started = time.monotonic()
        first = client.ask(card_question())
        took = time.monotonic() - started
        second = client.ask(card_question())
    assert took < 1.5, f"the fallback took {took:.1f}s"
    assert (first.answer.choice, second.answer.choice) == (2, 0)
    assert [("response_format" in r.body) for r in server.requests] == [True, False, False]
    params = first.evidence["request"]["parameters"]
    assert params["response_format"] == "none (text parsed)"
    assert params["response_format_rejected"]["http_status"] == 500
    assert "response_format" in params["response_format_rejected"]["message"]
    assert "response_format_rejected" not in second.evidence["request"]["parameters"]


def test_forced_json_schema_refused_with_a_500_is_not_retried(make_client):
    with FakeOpenAIServer(reject_response_format=LITELLM_REJECT_RESPONSE_FORMAT) as server:
        with pytest.raises(ModelHTTPStatus, match="never falls back") as info:
            make_client(server, structured="json_schema", backoff_s=2).ask(card_question())
    assert info.value.to_record()["http_status"] == 500
    assert len(server.requests) == 1
