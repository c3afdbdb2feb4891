"""Whole sessions whose model fails: every failure is a model_error row and a heuristic
fallback, never a crash; a stop during a slow call finalizes the session promptly."""

from __future__ import annotations

import itertools
import json
import math
import re
import signal
import socket
import time

import pytest

from tests.fakes.openai_server import FakeOpenAIServer, Reply, completion_body, usage
from tests.harness import wait_for

from .conftest import SECRET, advising_reply, capture_files, choose, off_schema_reply, proposals

pytestmark = pytest.mark.timeout(120)


def errors_by_kind(session) -> dict[str, list[dict]]:
    out: dict[str, list[dict]] = {}
    for row in session.events("model_error"):
        out.setdefault(row["kind"], []).append(row)
    return out


def assert_fallbacks_match_errors(session) -> None:
    fallbacks = [p for p in proposals(session) if p["source"] == "heuristic_fallback"]
    errors = session.events("model_error")
    assert [p["observation_id"] for p in fallbacks] == [e["observation_id"] for e in errors]
    assert [p["model_advice"]["error_kind"] for p in fallbacks] == [e["kind"] for e in errors]
    assert all(p.get("model_evidence") is None for p in fallbacks)
    for e in errors:  # a failed call keeps its request
        assert e["request"]["question_kind"] == e["question_kind"]


def test_bad_answers_and_server_errors_fall_back_to_the_heuristic(model_session):
    script = [
        Reply.answer({}).slow(4),  # timeout (timeout_s 1)
        Reply.status_code(500, "boom"),
        Reply.status_code(503, "still down"),
        Reply.status_code(429, "slow down", retry_after="1"),
        advising_reply(),
        Reply.text("I think the second one, probably."),  # malformed: no JSON
        off_schema_reply(),  # a choice never offered
        advising_reply(confidence=0.2),
    ]  # gated by the policy
    with FakeOpenAIServer(default=advising_reply()) as server:
        server.script(*script)
        s = model_session(server, timeout_s=1)
        wait_for(lambda: len(proposals(s)) >= 6, 60, "six consulted decisions")
        s.signal(signal.SIGTERM)
        assert s.wait() == 143, s.stderr
        requests = list(server.requests)
    kinds = errors_by_kind(s)
    assert set(kinds) == {"timeout", "http_status", "malformed", "off_schema"}
    assert kinds["timeout"][0]["timeout_phase"] == "read"
    assert kinds["http_status"][0]["http_status"] == 503
    assert kinds["http_status"][0]["attempts"] == 2 and "still down" in kinds["http_status"][0]["message"]
    assert kinds["off_schema"][0]["schema_problems"]
    assert_fallbacks_match_errors(s)
    consulted = proposals(s)
    retried = consulted[2]  # 429, then an answer after the server's Retry-After
    assert retried["source"] == "model" and retried["model_evidence"][0]["attempts"] == 2
    assert requests[4].received_at - requests[3].received_at >= 0.95
    gated = consulted[5]
    assert gated["source"] == "heuristic" and gated["model_advice"]["outcome"] == "gated"
    assert gated["model_evidence"][0]["answers"][0]["gated"] is True
    usage = s.summary()["model_usage"]
    assert usage["errors"] == 4 and usage["http_requests"] >= 8
    for path in capture_files(s):
        with open(path, "rb") as fh:
            assert SECRET.encode() not in fh.read(), path


def test_connection_refused_is_a_transport_error_and_play_goes_on(model_session):
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    s = model_session(f"http://127.0.0.1:{port}/v1", args=("--max-steps", "14"))
    assert s.wait() == 0, s.stderr
    kinds = errors_by_kind(s)
    assert set(kinds) == {"transport"} and len(kinds["transport"]) >= 2
    assert_fallbacks_match_errors(s)
    assert len(s.events("observation")) == 14


def test_a_spent_money_budget_mid_session_falls_back_without_calls_and_says_what_it_cost(model_session):
    """Each answer's cost is the profile's price times the tokens the server's reply reported
    (read here from the bytes it sent); the call that reaches ``budget_usd`` is answered, the
    next ones are ``budget_exhausted`` with nothing sent; session.json, the progress line and
    the last lines say the tokens and the cost."""
    price = {
        "model": "fake-model",
        "input_per_mtok": 1000,
        "output_per_mtok": 4000.3,
        "cached_input_per_mtok": 250,
    }  # cents' fractions: a sum rounded anywhere shows
    n = itertools.count()

    def answer(request) -> dict:  # the i-th reply reports 1000 + 100i prompt tokens, 256i cached
        i = next(n)
        return completion_body(json.dumps(choose(request)), usage=usage(1000 + 100 * i, 50 + i, cached=256 * i))

    with FakeOpenAIServer(default=Reply(body=answer)) as server:
        s = model_session(server, price=price, budget_usd=2.0)
        wait_for(lambda: len(proposals(s)) >= 4, 60, "four consulted decisions")
        s.signal(signal.SIGTERM)
        assert s.wait() == 143, s.stderr
    assert len(server.requests) == 2  # 1.2 USD, then 1.112: past the budget, nothing more sent
    replies = [json.loads(body)["usage"] for body in server.sent]
    costs = [
        (
            (u["prompt_tokens"] - u["prompt_tokens_details"]["cached_tokens"]) * 1000
            + u["prompt_tokens_details"]["cached_tokens"] * 250
            + u["completion_tokens"] * 4000.3
        )
        / 1e6
        for u in replies
    ]
    consulted = proposals(s)
    assert [p["source"] for p in consulted[:2]] == ["model", "model"]
    assert {p["source"] for p in consulted[2:]} == {"heuristic_fallback"}
    for p, u, cost in zip(consulted, replies, costs):
        got = p["model_evidence"][0]["usage"]
        assert got["cached_tokens"] == u["prompt_tokens_details"]["cached_tokens"]
        assert math.isclose(got["cost_usd"], cost) and got["price"] == price and got["cost_unknown"] is None
    kinds = errors_by_kind(s)
    assert set(kinds) == {"budget_exhausted"}
    refused = kinds["budget_exhausted"][0]
    assert (refused["budget"], refused["limit"], refused["attempts"]) == ("usd", 2.0, 0)
    assert math.isclose(refused["used"], sum(costs))
    assert_fallbacks_match_errors(s)
    usage_sum = s.summary()["model_usage"]
    assert math.isclose(usage_sum["cost_usd"], sum(costs), rel_tol=1e-9) and usage_sum["calls_cost_unknown"] == 0
    assert usage_sum["cached_tokens"] == sum(u["prompt_tokens_details"]["cached_tokens"] for u in replies)
    tokens = sum(u["total_tokens"] for u in replies)
    assert f"{tokens:,} tokens (256 cached); cost ${sum(costs):.2f}" in s.stderr, s.stderr[-1500:]
    assert re.search(rf"model 2 ok \d+ err \d+ fallback {tokens / 1000:.1f}k tok \${sum(costs):.2f}", s.stderr), (
        s.stderr[-1500:]
    )


def test_sigterm_during_a_slow_answer_finalizes_promptly(model_session):
    with FakeOpenAIServer(default=advising_reply().hold()) as server:
        s = model_session(server, timeout_s=60, args=("--max-steps", "100"))
        assert server.wait_for(lambda srv: srv.inflight >= 1, timeout=60)
        stopped = time.monotonic()
        s.signal(signal.SIGTERM)
        assert s.wait(timeout=30) == 143, s.stderr
        took = time.monotonic() - stopped
        server.release()
    assert took < 10, f"the session took {took:.1f}s to stop during a slow model call"
    summary = s.summary()
    assert summary["reason"] == "sigterm"
    assert s.rows()[-1]["event"] == "session_end"
    [error] = s.events("model_error")  # the policy gave up the ask when it was stopped
    assert error["kind"] == "cancelled"


def test_an_answer_after_the_policy_deadline_is_journalled_with_its_usage(model_session):
    """Found against a LiteLLM proxy: calls answered after the policy's deadline spent tokens
    that no capture recorded. The policy falls back at its deadline; the model-client records
    the late answer (usage, call id, evidence) and session.json counts it."""
    late_usage = {"prompt_tokens": 700, "completion_tokens": 77, "total_tokens": 777}
    with FakeOpenAIServer(default=advising_reply()) as server:
        server.script(Reply(body=lambda r: advising_reply().body(r) | {"usage": late_usage}).slow(2.5))
        s = model_session(server, "policy.settings.model_deadline_s=1", timeout_s=10)
        wait_for(lambda: s.events("model_late_answer"), 60, "the late answer's row")
        s.signal(signal.SIGTERM)
        assert s.wait() == 143, s.stderr
    [timeout] = errors_by_kind(s)["timeout"]
    assert timeout["timeout_phase"] == "policy_deadline"
    [late] = s.events("model_late_answer")
    assert late["outcome"] == "answered" and late["usage"]["total_tokens"] == 777
    assert late["request_hash"] == timeout["request"]["request_hash"]
    assert late["late_by_ms"] > 0 and late["evidence"]["call_id"] == late["call_id"]
    used = [p for p in proposals(s) if p.get("model_evidence")]
    assert late["call_id"] not in {p["model_evidence"][0]["call_id"] for p in used}
    usage = s.summary()["model_usage"]
    assert usage["late_answers"] == 1
    assert usage["total_tokens"] == 777 + 120 * len(used)


def test_hostile_model_answers_are_model_error_rows_and_play_goes_on(model_session):
    """Deeply nested, endless and drip-fed answers: each a model_error row of a named kind
    before its heuristic fallback; the model-client never answers 'internal' or dies."""
    deep = "[" * 200_000 + "]" * 200_000
    script = [Reply.text(deep), Reply.endless_body(), Reply.answer({}).drip(0.05)]
    with FakeOpenAIServer(default=advising_reply()) as server:
        server.script(*script)
        s = model_session(server, timeout_s=1, max_retries=0)
        wait_for(lambda: len(proposals(s)) >= 5, 60, "five consulted decisions")
        s.signal(signal.SIGTERM)
        assert s.wait() == 143, s.stderr
    errors = s.events("model_error")
    assert [(e["kind"], e.get("timeout_phase")) for e in errors] == [
        ("malformed", None),
        ("malformed", None),
        ("timeout", "body"),
    ]
    assert_fallbacks_match_errors(s)
    assert not [r for r in s.events("actor_exit") if not r["expected"]], "no actor died"
    assert {p["source"] for p in proposals(s)[3:]} == {"model"}
