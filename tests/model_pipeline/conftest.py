"""Fixtures for whole-process sessions that consult a fake OpenAI-compatible server.

``model_session(server, *sets, **model_keys)`` starts a real ``supervisor start`` of the
demo profile with ``model.*`` pointed at ``server`` (a ``FakeOpenAIServer`` in this test
process, on 127.0.0.1) and the test key in the session's environment. ``advising_reply``
answers any question by reading the allowed choices out of the request's JSON schema.
"""

from __future__ import annotations

import json
import os

import pytest

from tests.fakes.openai_server import FakeOpenAIServer, Reply, completion_body

KEY_ENV = "GAMERIG_TEST_KEY"
SECRET = "sk-test-7d1e0c55-PIPELINE-NEVER-WRITE-93aa"
CHOICE_FIELDS = ("card_index", "option_index", "node_index")


def schema_of(request) -> dict:
    """The envelope schema the client sent (``response_format``, else the system prompt)."""
    body = request.body
    if "response_format" in body:
        return body["response_format"]["json_schema"]["schema"]
    system = body["messages"][0]["content"]
    return json.loads(system.split("JSON schema: ", 1)[1].split("\n", 1)[0])


def choose(request, confidence: float = 0.9, pick: str = "last") -> dict:
    """An on-schema answer: the last (or first) allowed non-null choice for each question."""
    out = {}
    for key, answer in schema_of(request)["properties"].items():
        field = next(f for f in CHOICE_FIELDS if f in answer["properties"])
        allowed = [v for v in answer["properties"][field]["enum"] if v is not None]
        value = allowed[-1] if pick == "last" else allowed[0]
        out[key] = {field: value, "confidence": confidence, "reason": f"fake pick {pick}"}
    return out


def advising_reply(confidence: float = 0.9, pick: str = "last") -> Reply:
    return Reply(body=lambda request: completion_body(json.dumps(choose(request, confidence, pick))))


def off_schema_reply() -> Reply:
    """Valid JSON naming a choice that was never offered."""

    def body(request):
        answer = choose(request)
        for item in answer.values():
            field = next(f for f in CHOICE_FIELDS if f in item)
            item[field] = 97
        return completion_body(json.dumps(answer))

    return Reply(body=body)


@pytest.fixture
def fake_server():
    with FakeOpenAIServer(default=advising_reply()) as server:
        yield server


@pytest.fixture
def model_session(session_factory, monkeypatch):
    """``model_session(server_or_url, *sets, args=, name=, **model_keys)`` → a ``Session``."""
    monkeypatch.setenv(KEY_ENV, SECRET)

    def start(server, *sets: str, args: tuple[str, ...] = (), name: str = "s", **model_keys):
        base_url = server if isinstance(server, str) else server.base_url
        keys = {
            "base_url": base_url,
            "model": "fake-model",
            "api_key_env": KEY_ENV,
            "timeout_s": 5,
            "max_retries": 1,
            "backoff_s": 0.05,
            "backoff_max_s": 0.2,
            **model_keys,
        }
        model_sets = [f"model.{k}={json.dumps(v)}" for k, v in keys.items()]
        return session_factory(*model_sets, *sets, args=args, name=name)

    return start


def capture_files(session) -> list[str]:
    """Every file the session left: its capture root and its runtime dir (logs included)."""
    out = []
    for root in (session.capture, session.runtime):
        for folder, _dirs, files in os.walk(root):
            out.extend(os.path.join(folder, name) for name in files)
    return out


def proposals(session, state_types=("card_reward", "event", "map")) -> list[dict]:
    return [r for r in session.events("proposal") if r.get("state_type") in state_types and "model_advice" in r]
