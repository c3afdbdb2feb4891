"""RetryPolicy decisions and Retry-After parsing."""

from __future__ import annotations

import pytest

from actors.model_client.retry import RetryPolicy, parse_retry_after

POLICY = RetryPolicy(max_retries=3, backoff_s=0.5, backoff_max_s=1.5, retry_after_max_s=10)


@pytest.mark.parametrize("status", [400, 401, 403, 404, 409, 422, 200, 302])
def test_only_429_and_5xx_retry(status):
    assert POLICY.decide(status, 1, None).wait_s is None


def test_exponential_backoff_is_capped_and_bounded():
    waits = [POLICY.decide(500, n, None).wait_s for n in (1, 2, 3)]
    assert waits == [0.5, 1.0, 1.5]
    final = POLICY.decide(503, 4, None)
    assert final.wait_s is None and "gave up after 4 attempts" in final.why


def test_retry_after_is_honoured_and_capped():
    assert POLICY.decide(429, 1, "7").wait_s == 7.0
    assert POLICY.decide(503, 1, "0").wait_s == 0.0
    refused = POLICY.decide(429, 1, "11")
    assert refused.wait_s is None and "exceeds" in refused.why


@pytest.mark.parametrize(
    "value, seconds",
    [
        ("1", 1.0),
        (" 2 ", 2.0),
        ("0.25", 0.25),
        (None, None),
        ("", None),
        ("-1", None),
        ("Wed, 21 Oct 2015 07:28:00 GMT", None),
        ("soon", None),
    ],
)
def test_parse_retry_after(value, seconds):
    assert parse_retry_after(value) == seconds


def test_http_date_falls_back_to_backoff():
    assert POLICY.decide(429, 2, "Wed, 21 Oct 2015 07:28:00 GMT").wait_s == 1.0
