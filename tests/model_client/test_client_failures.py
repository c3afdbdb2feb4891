"""ModelClient over loopback HTTP: timeouts, statuses, retries, budgets, concurrency, stop."""

from __future__ import annotations

import socket
import threading
import time

import pytest

from actors.model_client import (
    BudgetExhausted,
    ModelCancelled,
    ModelConfig,
    ModelHTTPStatus,
    ModelTimeout,
    ModelTransportError,
)
from actors.model_client.client import ModelClient
from tests.fakes.openai_server import Reply

from .conftest import KEY_ENV, SECRET, card_answer, card_question


def gaps(server) -> list[float]:
    times = [r.received_at for r in server.requests]
    return [b - a for a, b in zip(times, times[1:])]


def test_timeout_is_a_model_error_and_not_retried(server, make_client):
    server.script(Reply.answer(card_answer(1)).slow(10))
    client = make_client(server, timeout_s=0.3)
    started = time.monotonic()
    with pytest.raises(ModelTimeout) as info:
        client.ask(card_question())
    assert time.monotonic() - started < 3
    record = info.value.to_record()
    assert record["kind"] == "timeout" and record["timeout_phase"] == "read"
    assert record["attempts"] == 1 and len(server.requests) == 1


def test_429_retry_after_seconds_is_honoured(server, make_client):
    server.script(Reply.status_code(429, "slow down", retry_after="1"), Reply.answer(card_answer(2)))
    result = make_client(server, backoff_s=0.01, backoff_max_s=0.01).ask(card_question())
    assert result.answer.choice == 2 and result.evidence["attempts"] == 2
    [gap] = gaps(server)
    assert 0.95 <= gap < 2.5, gap  # the server's 1 s, not the client's 10 ms backoff


def test_retry_after_beyond_the_cap_gives_up_at_once(server, make_client):
    server.script(Reply.status_code(429, "come back tomorrow", retry_after="86400"))
    with pytest.raises(ModelHTTPStatus) as info:
        make_client(server, retry_after_max_s=5).ask(card_question())
    assert "Retry-After 86400s exceeds" in str(info.value)
    assert info.value.to_record()["http_status"] == 429 and len(server.requests) == 1


def test_500_then_success(server, make_client):
    server.script(Reply.status_code(500, "overloaded"), Reply.answer(card_answer(0)))
    result = make_client(server).ask(card_question())
    assert result.answer.choice == 0
    assert result.evidence["attempts"] == 2
    assert "retries" not in result.evidence  # an attempt count, not a ledger


def test_5xx_exhausted_after_bounded_exponential_backoff(server, make_client):
    server.script(*[Reply.status_code(503, "down")] * 3)
    client = make_client(server, max_retries=2, backoff_s=0.1, backoff_max_s=1.0)
    with pytest.raises(ModelHTTPStatus) as info:
        client.ask(card_question())
    record = info.value.to_record()
    assert record["kind"] == "http_status" and record["http_status"] == 503
    assert record["attempts"] == 3 and len(server.requests) == 3
    assert "gave up after 3 attempts" in record["message"] and "down" in record["message"]
    first, second = gaps(server)
    assert 0.095 <= first < 1.0 and 0.195 <= second < 1.5, (first, second)


@pytest.mark.parametrize("status", [400, 401, 404, 422])
def test_other_4xx_are_not_retried(server, make_client, status):
    server.script(Reply.status_code(status, "The model `nope` does not exist"))
    with pytest.raises(ModelHTTPStatus) as info:
        make_client(server).ask(card_question())
    assert len(server.requests) == 1
    assert "does not exist" in str(info.value) and info.value.to_record()["attempts"] == 1


def test_connection_refused_is_a_transport_error():
    with socket.socket() as holder:  # bound but not listening: connects are refused
        holder.bind(("127.0.0.1", 0))
        port = holder.getsockname()[1]
        config = ModelConfig(base_url=f"http://127.0.0.1:{port}/v1", model="m", api_key_env=KEY_ENV, timeout_s=2)
        with ModelClient(config, environ={KEY_ENV: SECRET}) as client:
            with pytest.raises(ModelTransportError) as info:
                client.ask(card_question())
    record = info.value.to_record()
    assert record["kind"] == "transport" and record["transport_error"] == "ConnectError"
    assert record["attempts"] == 1


def test_call_budget_exhaustion_sends_nothing(server, make_client):
    server.default = Reply.answer(card_answer(1))
    client = make_client(server, budget_calls=2)
    client.ask(card_question())
    client.ask(card_question())
    with pytest.raises(BudgetExhausted) as info:
        client.ask(card_question())
    assert len(server.requests) == 2
    record = info.value.to_record()
    assert record["kind"] == "budget_exhausted" and record["attempts"] == 0
    assert record["budget"] == "calls" and record["request"]["question_kind"] == "card_reward"
    assert client.usage()["errors"] == {"budget_exhausted": 1}


def test_token_budget_exhaustion_sends_nothing(server, make_client):
    server.default = Reply.answer(card_answer(1))  # reports 120 tokens per call
    client = make_client(server, budget_tokens=200)
    client.ask(card_question())
    client.ask(card_question())  # 120 < 200: still allowed, ends at 240
    with pytest.raises(BudgetExhausted) as info:
        client.ask(card_question())
    assert len(server.requests) == 2
    assert info.value.to_record()["budget"] == "tokens"
    assert client.usage()["budget"]["tokens_used"] == 240


def test_concurrency_is_limited_to_max_concurrent(server, make_client):
    server.default = Reply.answer(card_answer(1)).hold()
    client = make_client(server, max_concurrent=2, timeout_s=10)
    results, errors = [], []

    def ask():
        try:
            results.append(client.ask(card_question()))
        except Exception as exc:  # noqa: BLE001 - reported by the assertion below
            errors.append(exc)

    threads = [threading.Thread(target=ask) for _ in range(5)]
    for thread in threads:
        thread.start()
    assert server.wait_for(lambda s: s.inflight == 2, timeout=5)
    # three callers are ready to send; a missing limit would let them in within this window
    assert not server.wait_for(lambda s: len(s.requests) > 2, timeout=0.3)
    server.release()
    for thread in threads:
        thread.join(timeout=10)
    assert not errors and len(results) == 5
    assert len(server.requests) == 5 and server.max_inflight == 2


def test_stop_event_cancels_a_retry_wait(server, make_client):
    server.script(Reply.status_code(429, "busy", retry_after="30"))
    stop = threading.Event()
    client = make_client(server, stop_event=stop, retry_after_max_s=60)
    outcome = []
    worker = threading.Thread(target=lambda: outcome.append(_catch(client, card_question())))
    worker.start()
    assert server.wait_for(lambda s: len(s.requests) == 1 and s.inflight == 0)
    stopped_at = time.monotonic()
    stop.set()
    worker.join(timeout=5)
    assert time.monotonic() - stopped_at < 1.0
    [error] = outcome
    assert isinstance(error, ModelCancelled) and error.to_record()["kind"] == "cancelled"
    assert len(server.requests) == 1


def test_closed_client_sends_nothing(server, make_client):
    client = make_client(server)
    client.close()
    with pytest.raises(ModelCancelled):
        client.ask(card_question())
    assert server.requests == []


def test_slow_answer_is_cut_by_the_server_stopping(make_client):
    from tests.fakes.openai_server import FakeOpenAIServer

    server = FakeOpenAIServer().__enter__()
    server.script(Reply.answer(card_answer(1)).slow(30))
    client = make_client(server, timeout_s=20)
    outcome = []
    worker = threading.Thread(target=lambda: outcome.append(_catch(client, card_question())))
    worker.start()
    assert server.wait_for(lambda s: s.inflight == 1)
    server.stop()
    worker.join(timeout=5)
    [error] = outcome
    assert isinstance(error, ModelTransportError), error


def _catch(client, question):
    try:
        return client.ask(question)
    except Exception as exc:  # noqa: BLE001 - the test inspects it
        return exc


def test_stop_event_abandons_a_slow_answer_at_once(server, make_client):
    server.script(Reply.answer(card_answer(1)).slow(30))
    stop = threading.Event()
    client = make_client(server, stop_event=stop, timeout_s=20)
    outcome = []
    worker = threading.Thread(target=lambda: outcome.append(_catch(client, card_question())))
    worker.start()
    assert server.wait_for(lambda s: s.inflight == 1)
    stopped_at = time.monotonic()
    stop.set()
    worker.join(timeout=5)
    assert time.monotonic() - stopped_at < 1.0
    [error] = outcome
    assert isinstance(error, ModelCancelled)
    record = error.to_record()
    assert record["kind"] == "cancelled" and record["attempts"] == 1
    assert "discarded" in record["message"]
