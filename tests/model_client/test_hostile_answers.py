"""Hostile model servers: whatever a server answers — malformed or
deeply nested JSON, wrong types, huge or endless bodies, drip-fed bodies, odd statuses — a
call ends with answers or a ``ModelError`` of a named kind, within its time bound, and the
failure's record (kind, attempts, usage when reported) is what the journal gets. Nothing
else escapes ``ModelClient.ask``. The fake is a real HTTP server on 127.0.0.1."""

from __future__ import annotations

import json
import math
import time

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from actors.model_client import ModelError
from actors.model_client.service import ModelService
from protocol.model_to_policy import ModelFailure
from protocol.policy_to_model import AskModel
from tests.fakes.openai_server import FakeOpenAIServer, Reply, completion_body
from tests.fuzz.strategies import deep_nesting, trees
from tests.harness import wait_for

from .conftest import CARDS, card_answer, card_question

DEEP = deep_nesting(200_000)

#: reply -> (error kind, words in the message)
HOSTILE = {
    "deep body": (Reply.raw(200, DEEP), "malformed", "not JSON"),
    "deep content": (Reply.text(DEEP), "malformed", "no complete JSON object"),
    "deep in prose": (Reply.text("the answer: {" + '"a":' * 1 + DEEP + "}"), "malformed", "no complete JSON object"),
    "not JSON": (Reply.raw(200, '{"choices": [{"message": {"content": "'), "malformed", "not JSON"),
    "choices a string": (Reply(body={"choices": "x"}), "malformed", "not a chat completion"),
    "message a list": (Reply(body={"choices": [{"message": [1]}]}), "malformed", "not a chat completion"),
    "content a number": (
        Reply(body=completion_body(None) | {"choices": [{"message": {"content": 7}}]}),
        "malformed",
        "no text content",
    ),
    "HTML 200": (Reply.raw(200, "<html><body>Bad gateway</body></html>"), "malformed", "not JSON"),
    "redirect": (Reply(status=302, body="", headers=(("Location", "/elsewhere"),)), "http_status", "HTTP 302"),
    "teapot": (Reply.raw(418, "<html>I'm a teapot</html>"), "http_status", "HTTP 418"),
    "declared huge": (Reply(body="{}", headers=(("Content-Length", str(64 << 20)),)), "malformed", "declares"),
    "endless": (Reply.endless_body(), "malformed", "exceeds the limit"),
    "drip-fed": (Reply.answer(card_answer(1)).drip(0.05), "timeout", "(body)"),
    "NaN confidence": (
        Reply.text('{"q0": {"card_index": 1, "confidence": NaN, "reason": "x"}}'),
        "malformed",
        "no complete JSON object",
    ),
}
CONFIDENCES = st.sampled_from([math.nan, math.inf, -math.inf, 0.5, 1.0, 1.5, -0.5])
ANSWER_LEAVES = st.one_of(
    st.none(), st.booleans(), st.integers(-2, 4), st.floats(allow_nan=True, allow_infinity=True), st.text(max_size=5)
)


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_a_hostile_answer_is_a_named_model_error_in_time(name, make_client):
    reply, kind, words = HOSTILE[name]
    with FakeOpenAIServer(default=Reply.answer(card_answer(2))) as server:
        server.script(reply)
        client = make_client(server, timeout_s=1.0, max_retries=0)
        started = time.monotonic()
        with pytest.raises(ModelError) as info:
            client.ask(card_question())
        took = time.monotonic() - started
        record = info.value.to_record()
        assert (record["kind"], words in record["message"]) == (kind, True), record["message"]
        assert took < 3.0, f"{name}: the call took {took:.1f}s"
        assert record["attempts"] == 1 and len(record["message"]) < 1000
        assert client.ask(card_question()).answer.choice == 2, "the next call is unaffected"


REPLIES = st.one_of(
    trees().map(lambda t: Reply(body=json.dumps(t))),
    st.text(max_size=200).map(Reply.text),
    trees().map(lambda t: Reply(body=completion_body("x") | {"usage": t})),
    trees().map(lambda t: Reply.text(json.dumps({"q0": t}))),
    st.fixed_dictionaries(
        {
            "card_index": st.sampled_from([0, 1, 2, None]) | ANSWER_LEAVES,
            "confidence": CONFIDENCES,
            "reason": ANSWER_LEAVES | st.just("r"),
        }
    ).map(lambda q: Reply.text(json.dumps({"q0": q}))),
    st.sampled_from([200, 201, 301, 400, 404, 500, 599]).map(lambda code: Reply.raw(code, "odd")),
)


def test_any_answer_gives_answers_or_a_model_error_never_anything_else(server, make_client):
    client = make_client(server, timeout_s=1.0, max_retries=0)  # one client: examples are fast

    @settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(REPLIES)
    @example(Reply.text('{"q0": {"card_index": 1, "confidence": NaN, "reason": "r"}}'))
    def one_answer(reply):
        server.script(reply)
        try:
            result = client.ask(card_question())
        except ModelError as err:
            record = err.to_record()
            assert record["kind"] and record["message"]
            json.dumps(record, allow_nan=False)  # the journal can hold it
        else:
            assert result.answer.choice in (0, 1, 2, None)
            json.dumps(result.evidence, allow_nan=False)

    one_answer()


def test_the_actor_service_answers_a_hostile_server_with_failures_not_internal_errors(make_client):
    """What the model-client actor sends the policy: a ``ModelFailure`` naming the kind."""
    replies = [HOSTILE[n][0] for n in ("deep content", "endless", "choices a string")]
    with FakeOpenAIServer() as server:
        server.script(*replies)
        service = ModelService(make_client(server, timeout_s=1.0, max_retries=0), workers=1)
        ask = AskModel(kind="card_reward", questions=[{"cards": CARDS, "evidence": {}}])
        got: dict = {}
        try:
            for n in range(3):
                service.submit(f"r{n}", ask)
                wait_for(lambda: got.update(service.finished()) or f"r{n}" in got, 10, "reply")
        finally:
            service.close()
    assert all(isinstance(r, ModelFailure) for r in got.values())
    assert [got[f"r{n}"].error["kind"] for n in range(3)] == ["malformed"] * 3
