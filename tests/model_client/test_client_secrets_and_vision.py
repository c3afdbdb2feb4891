"""The API key reaches the server and nothing else; screenshots reach vision models as images."""

from __future__ import annotations

import base64
import json

import pytest

from actors.model_client import ButtonsQuestion, MalformedAnswer, ModelConfigError, ModelHTTPStatus
from tests.fakes.openai_server import Reply, completion_body

from .conftest import KEY_ENV, SECRET, card_answer, card_question, tiny_png


def echo_key_in_error(request):
    return {"error": {"message": f"Incorrect API key provided: {request.headers['authorization']}"}}


def echo_key_in_answer(request):
    answer = card_answer(1, reason=f"my key is {request.headers['authorization']}")
    return completion_body(json.dumps(answer))


def test_key_is_sent_but_never_recorded(server, make_client):
    server.script(
        Reply(body=echo_key_in_answer),
        Reply(status=401, body=echo_key_in_error),
        Reply.text(f"{SECRET} is all I can say"),
    )
    client = make_client(server)
    records, errors = [], []
    records.append(client.ask(card_question()).evidence)
    for expected in (ModelHTTPStatus, MalformedAnswer):
        with pytest.raises(expected) as info:
            client.ask(card_question())
        errors.append(info.value)
        records.append(info.value.to_record())

    assert [r.headers["authorization"] for r in server.requests] == [f"Bearer {SECRET}"] * 3
    dumped = json.dumps(records) + json.dumps(client.usage())
    assert SECRET not in dumped
    assert "[REDACTED]" in records[0]["answers"][0]["reason"]
    assert "[REDACTED]" in records[1]["message"] and "[REDACTED]" in records[2]["message"]
    for text in (
        [repr(client), repr(client.config), str(client.config)] + [str(e) for e in errors] + [repr(e) for e in errors]
    ):
        assert SECRET not in text
    assert KEY_ENV in repr(client)  # the name is fine to show


def test_key_is_read_at_call_time(server, make_client):
    environ = {KEY_ENV: "sk-first"}
    server.default = Reply.answer(card_answer(0))
    client = make_client(server, environ=environ)
    client.ask(card_question())
    environ[KEY_ENV] = "sk-rotated"
    client.ask(card_question())
    assert [r.headers["authorization"] for r in server.requests] == ["Bearer sk-first", "Bearer sk-rotated"]


def test_missing_key_is_a_config_model_error_and_nothing_is_sent(server, make_client):
    client = make_client(server, environ={})
    with pytest.raises(ModelConfigError) as info:
        client.ask(card_question())
    assert KEY_ENV in str(info.value) and info.value.to_record()["kind"] == "config"
    assert server.requests == []


def test_no_key_configured_sends_no_authorization(server, make_client):
    server.script(Reply.answer(card_answer(2)))
    make_client(server, api_key_env=None).ask(card_question())
    assert "authorization" not in server.requests[0].headers


def test_screenshot_goes_as_an_image_data_url_when_vision_is_on(server, make_client):
    png = tiny_png()
    server.script(Reply.answer({"q0": {"buttons": ["up", "a"], "confidence": 0.6, "reason": "door is above"}}))
    question = ButtonsQuestion(screenshot_png=png, goal="leave the house", max_presses=3)
    result = make_client(server, vision=True).ask(question)

    assert result.answer.choice == ["up", "a"]
    content = server.requests[0].body["messages"][1]["content"]
    assert [part["type"] for part in content] == ["text", "image_url"]
    url = content[1]["image_url"]["url"]
    assert url.startswith("data:image/png;base64,")
    assert base64.b64decode(url.split(",", 1)[1]) == png
    recorded = json.dumps(result.evidence)
    assert url.split(",", 1)[1] not in recorded  # evidence keeps the hash, not the image
    shot = result.evidence["request"]["questions"][0]["screenshot"]
    assert shot["bytes"] == len(png) and len(shot["sha256"]) == 64


def test_screenshot_without_vision_is_refused_before_sending(server, make_client):
    with pytest.raises(ModelConfigError) as info:
        make_client(server, vision=False).ask(ButtonsQuestion(screenshot_png=tiny_png()))
    assert "model.vision" in str(info.value)
    assert server.requests == []


def test_buttons_outside_the_allowed_set_are_off_schema(server, make_client):
    from actors.model_client import OffSchemaAnswer

    server.script(Reply.answer({"q0": {"buttons": ["up", "turbo"], "confidence": 0.6, "reason": ""}}))
    with pytest.raises(OffSchemaAnswer):
        make_client(server, vision=True).ask(ButtonsQuestion(screenshot_png=tiny_png(), buttons=("up", "down", "a")))


def test_key_echoed_into_schema_problems_is_redacted(server, make_client):
    from actors.model_client import OffSchemaAnswer

    server.script(Reply.answer({"q0": {"card_index": SECRET, "confidence": 0.5, "reason": ""}}))
    with pytest.raises(OffSchemaAnswer) as info:
        make_client(server).ask(card_question())
    record = info.value.to_record()
    assert record["schema_problems"] and SECRET not in json.dumps(record)
    assert SECRET not in str(info.value)


def test_long_key_cut_by_an_excerpt_is_still_redacted(server, make_client):
    long_key = "sk-" + "q7Z" * 60
    server.script(Reply.text(f"{long_key} and no JSON"))
    with pytest.raises(MalformedAnswer) as info:
        make_client(server, environ={KEY_ENV: long_key}).ask(card_question())
    assert long_key[:12] not in json.dumps(info.value.to_record())
