"""ModelSettings (the profile's model: section with replay) and ModelService (the actor's
request handling) without processes: a fake server on loopback, replies from the pool."""

from __future__ import annotations

import json
import select
import threading
import time

import pytest

from actors.model_client import ConfigError, ReplayBackend
from actors.model_client.backends import open_backend
from actors.model_client.client import ModelClient
from actors.model_client.service import ModelService
from actors.model_client.settings import ModelSettings
from protocol.model_to_policy import ModelAnswer, ModelFailure
from protocol.policy_to_model import AskModel
from supervisor.profile import ProfileError, load
from tests.fakes.openai_server import Reply
from tests.harness import wait_for

from .conftest import CARDS, card_answer


def ask(**overrides) -> AskModel:
    fields = {"kind": "card_reward", "questions": [{"cards": CARDS, "evidence": {"hp": 5}}]}
    fields.update(overrides)
    return AskModel(**fields)


def drain(service: ModelService, count: int) -> dict:
    got: dict = {}
    wait_for(lambda: got.update(service.finished()) or len(got) >= count, 10, "replies")
    return got


def test_no_base_url_and_no_replay_is_not_configured():
    assert not ModelSettings.from_profile({"base_url": None, "model": None}).configured
    assert not ModelSettings.from_profile(None).configured


def test_http_settings_carry_the_config():
    settings = ModelSettings.from_profile(
        {"base_url": "http://127.0.0.1:9/v1", "model": "m", "confidence_gate": 0.7, "max_concurrent": 3}
    )
    assert settings.backend_name == "http" and settings.confidence_gate == 0.7
    assert settings.max_concurrent == 3
    backend = open_backend(settings, threading.Event())
    assert isinstance(backend, ModelClient)
    backend.close()


def test_replay_accepts_a_session_dir_and_wins_over_base_url(tmp_path):
    (tmp_path / "events.jsonl").write_text(json.dumps({"event": "session_start"}) + "\n")
    settings = ModelSettings.from_profile({"base_url": "http://127.0.0.1:9/v1", "model": "m", "replay": str(tmp_path)})
    assert settings.backend_name == "replay" and settings.replay == tmp_path / "events.jsonl"
    assert settings.replay_gate is None  # the recorded gate unless the profile states one
    assert isinstance(open_backend(settings), ReplayBackend)
    gated = ModelSettings.from_profile({"replay": str(tmp_path), "confidence_gate": 0.8})
    assert gated.replay_gate == gated.confidence_gate == 0.8


@pytest.mark.parametrize(
    "section, key",
    [
        ({"replay": "/nonexistent/session"}, "replay"),
        ({"replay": ""}, "replay"),
        ({"replay": "EVENTS", "confidence_gate": 2}, "confidence_gate"),
    ],
)
def test_bad_replay_settings_name_the_key(tmp_path, section, key):
    if section["replay"] == "EVENTS":
        (tmp_path / "events.jsonl").write_text("")
        section = {**section, "replay": str(tmp_path / "events.jsonl")}
    with pytest.raises(ConfigError) as info:
        ModelSettings.from_profile(section)
    assert info.value.key == key


def test_profile_resolves_replay_to_an_absolute_events_file(tmp_path, monkeypatch):
    (tmp_path / "events.jsonl").write_text("")
    (tmp_path / "p.yaml").write_text("name: p\n")
    monkeypatch.chdir(tmp_path.parent)
    out = load(str(tmp_path / "p.yaml"), [f"model.replay={tmp_path.name}"])["model"]
    assert out["replay"] == str(tmp_path / "events.jsonl") and out["base_url"] is None
    with pytest.raises(ProfileError, match="model.replay"):
        load(str(tmp_path / "p.yaml"), ["model.replay=missing-dir"])


def test_without_a_backend_every_ask_is_no_model_configured():
    service = ModelService(None)
    service.submit("r1", ask())
    [(request_id, reply)] = service.finished()
    assert request_id == "r1" and isinstance(reply, ModelFailure)
    assert reply.error["kind"] == "no_model_configured"


def test_service_answers_concurrently_and_a_repeat_is_answered_once(server, make_client):
    server.script(Reply.answer(card_answer(1)).hold(), Reply.answer(card_answer(2)))
    service = ModelService(make_client(server, max_concurrent=2), workers=2)
    try:
        service.submit("slow", ask())
        assert server.wait_for(lambda s: s.inflight == 1)
        service.submit("slow", ask())  # a repeat while in flight: ignored
        service.submit("fast", ask(questions=[{"cards": CARDS, "evidence": {"hp": 6}}]))
        got = drain(service, 1)
        assert list(got) == ["fast"] and isinstance(got["fast"], ModelAnswer)
        assert got["fast"].answers[0]["answer"] == {"card_index": 2}
        server.release()
        got = drain(service, 1)
        assert got["slow"].answers[0]["answer"] == {"card_index": 1}
        service.submit("slow", ask())  # a repeat after the answer: the kept reply, no call
        assert drain(service, 1)["slow"] is got["slow"]
        assert len(server.requests) == 2
    finally:
        service.close()


def test_a_finished_reply_wakes_the_actor_s_poll_at_once(server, make_client):
    """The actor polls ``wake_fd`` beside its socket: a reply made on a pool thread is sent
    when it is ready, not at the poll's timeout; ``finished`` drains it."""
    server.script(Reply.answer(card_answer(1)))
    service = ModelService(make_client(server), workers=1)
    try:
        assert select.select([service.wake_fd], [], [], 0)[0] == []
        service.submit("r1", ask())
        assert select.select([service.wake_fd], [], [], 10)[0] == [service.wake_fd]
        assert [request_id for request_id, _ in service.finished()] == ["r1"]
        assert select.select([service.wake_fd], [], [], 0)[0] == []
    finally:
        service.close()


def test_service_turns_errors_into_failures(server, make_client):
    server.script(Reply.text("no json here"))
    service = ModelService(make_client(server), workers=1)
    try:
        service.submit("bad", ask())
        service.submit("wrong", ask(kind="no_such_kind"))
        got = drain(service, 2)
        assert got["bad"].error["kind"] == "malformed" and got["bad"].error["request"]
        assert got["wrong"].error["kind"] == "bad_question"
    finally:
        service.close()


def test_a_reply_finished_past_the_askers_deadline_is_handed_over_for_the_journal(server, make_client):
    """An answer the policy no longer waits for has spent tokens all the same: the service still
    sends it, and hands over its late row, so the capture records every token spent."""
    server.script(Reply.answer(card_answer(1)).slow(0.6), Reply.answer(card_answer(2)))
    service = ModelService(make_client(server, max_concurrent=1), workers=1)
    try:
        sent = time.time()
        service.submit("late", ask(deadline_ms=200), sent_at=sent)
        got = drain(service, 1)
        service.submit("in-time", ask(deadline_ms=5000), sent_at=time.time())
        got.update(drain(service, 1))
        [late] = service.late_outcomes()
        assert service.late_outcomes() == [], "each late reply is handed over once"
    finally:
        service.close()
    assert isinstance(got["late"], ModelAnswer) and isinstance(got["in-time"], ModelAnswer)
    evidence = got["late"].evidence
    assert (late["ask_id"], late["outcome"], late["question_kind"]) == ("late", "answered", "card_reward")
    assert late["call_id"] == evidence["call_id"] and late["evidence"] == evidence
    assert late["usage"]["total_tokens"] == 120 and late["attempts"] == 1
    assert late["request_hash"] == evidence["request"]["request_hash"]
    assert late["deadline_ms"] == 200 and late["late_by_ms"] >= 300
    assert "model_evidence" not in late, "a late answer must never be replayed as used"
    assert service.late == 1
