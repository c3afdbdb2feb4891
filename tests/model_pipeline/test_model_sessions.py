"""Whole sessions with a model: model-assisted play, evidence, usage, the key, replay.

Real ``supervisor start`` processes play the built-in game; the model is a fake
OpenAI-compatible server on 127.0.0.1 in this test process.
"""

from __future__ import annotations

import json

import pytest

from tests.fakes.openai_server import FakeOpenAIServer

from .conftest import KEY_ENV, SECRET, capture_files, proposals

pytestmark = pytest.mark.timeout(120)


def decisions(session) -> list[tuple]:
    return [(r["observation_id"], r["action"], r["parameters"], r["source"]) for r in session.events("proposal")]


def assert_secret_nowhere(session) -> None:
    files = capture_files(session)
    assert any(f.endswith("events.jsonl") for f in files) and any(f.endswith(".log") for f in files)
    for path in files:
        with open(path, "rb") as fh:
            assert SECRET.encode() not in fh.read(), f"the API key was written to {path}"


def test_a_model_assisted_session_plays_to_game_over_and_replays_without_calls(fake_server, model_session):
    price = {"model": "fake-model", "input_per_mtok": 100, "output_per_mtok": 500}
    s = model_session(fake_server, price=price)
    assert s.wait() == 0, s.stderr
    assert s.summary()["reason"] == "run_ended"
    consulted = proposals(s)
    assert consulted and {p["source"] for p in consulted} == {"model"}
    assert {p["state_type"] for p in consulted} == {"card_reward", "event", "map"}
    for p in consulted:
        [evidence] = p["model_evidence"]
        assert evidence["backend"] == "http" and evidence["attempts"] == 1
        [answer] = evidence["answers"]
        assert answer["gated"] is False
        assert answer["answer_gate_scope"] == "default_helper_not_policy_gate"
        assert p["model_advice"]["outcome"] == "used" and p["model_advice"]["policy_gate"] == 0.6
        assert p["model_advice"]["call_id"] == evidence["call_id"]
        assert "the model's choice" in p["reason"]
    card = next(p for p in consulted if p["state_type"] == "card_reward")
    question = card["model_evidence"][0]["request"]["questions"][0]
    assert set(question["evidence"]) == {"card_evidence", "player", "run"}
    assert s.events("model_error") == []
    # usage as reported, summed into session.json
    usage = s.summary()["model_usage"]
    assert usage["answered"] == len(consulted) == len(fake_server.requests)
    assert usage["total_tokens"] == 120 * len(consulted) and usage["http_requests"] == len(consulted)
    # each call priced from what its reply reported; the last lines say it, per run
    replies = [json.loads(body)["usage"] for body in fake_server.sent]
    costs = [(u["prompt_tokens"] * 100 + u["completion_tokens"] * 500) / 1e6 for u in replies]
    assert [p["model_evidence"][0]["usage"]["cost_usd"] for p in consulted] == pytest.approx(costs)
    assert f"{usage['total_tokens']:,} tokens; cost ${sum(costs):.4f} (${sum(costs):.4f} per run, 1 run)" in s.stderr, (
        s.stderr[-800:]
    )
    # the key went over the wire and nowhere else
    assert {r.headers["authorization"] for r in fake_server.requests} == {f"Bearer {SECRET}"}
    assert_secret_nowhere(s)

    with FakeOpenAIServer() as untouched:
        replay = model_session(untouched, f"model.replay={s.session_dir}", name="replay")
        assert replay.wait() == 0, replay.stderr
        assert untouched.requests == []
    assert decisions(replay) == decisions(s)
    replayed = proposals(replay)
    assert [p["model_evidence"][0]["backend"] for p in replayed] == ["replay"] * len(consulted)
    assert [p["model_evidence"][0]["replay_of"]["call_id"] for p in replayed] == [
        p["model_evidence"][0]["call_id"] for p in consulted
    ]
    assert replay.summary()["model_usage"]["answered"] == len(consulted)
    assert replay.summary()["model_usage"].get("total_tokens", 0) == 0
    assert replay.summary()["model_usage"]["cost_usd"] == 0  # nothing was spent, and that is known


def test_a_replay_that_meets_a_question_never_asked_reports_a_divergence(fake_server, model_session):
    recorded = model_session(fake_server, args=("--max-steps", "14"))
    assert recorded.wait() == 0, recorded.stderr
    assert proposals(recorded), "the first events and map must have been consulted"
    asked = len(fake_server.requests)
    replay = model_session(
        fake_server, f"model.replay={recorded.session_dir}", "game.seed=7", args=("--max-steps", "14"), name="diverged"
    )
    assert replay.wait() == 0, replay.stderr
    assert len(fake_server.requests) == asked  # a replay calls nothing, even with a base_url
    errors = replay.events("model_error")
    assert errors and {e["kind"] for e in errors} == {"divergence"}
    assert all(e["request"]["request_hash"] == e["request_hash"] for e in errors)
    fallbacks = [p for p in proposals(replay) if p["source"] == "heuristic_fallback"]
    assert len(fallbacks) == len(errors)
    assert {p["model_advice"]["error_kind"] for p in fallbacks} == {"divergence"}
    assert replay.summary()["model_usage"]["errors"] == len(errors)


def test_without_consult_model_the_policy_never_asks(fake_server, model_session):
    s = model_session(fake_server, "policy.settings.consult_model=false", args=("--max-steps", "14"))
    assert s.wait() == 0, s.stderr
    assert fake_server.requests == [] and proposals(s) == []
    assert {p["source"] for p in s.events("proposal")} <= {"policy", "stop_on_run_end"}


def test_the_key_variable_named_but_unset_is_a_config_error_not_a_crash(fake_server, model_session, monkeypatch):
    monkeypatch.delenv(KEY_ENV)
    s = model_session(fake_server, args=("--max-steps", "14"))
    assert s.wait() == 0, s.stderr
    assert fake_server.requests == []
    errors = s.events("model_error")
    assert errors and {e["kind"] for e in errors} == {"config"}
    assert KEY_ENV in errors[0]["message"]
