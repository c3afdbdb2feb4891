"""Evidence helpers: redaction and the session's UsageTotals."""

from __future__ import annotations

from actors.model_client import UsageTotals
from actors.model_client.evidence import redact


def test_redact_reaches_every_string():
    value = {"a": ["x sk-1 y", {"sk-1": "sk-1"}], "b": 3, "c": None}
    assert redact(value, "sk-1") == {"a": ["x [REDACTED] y", {"[REDACTED]": "[REDACTED]"}], "b": 3, "c": None}
    assert redact(value, None) is value


def test_usage_totals_sum_evidence_and_errors():
    totals = UsageTotals()
    totals.add_evidence(
        {
            "backend": "http",
            "attempts": 2,
            "usage": {
                "prompt_tokens": 100,
                "completion_tokens": 20,
                "total_tokens": 120,
                "model": "m-1",
                "latency_ms": 50.5,
                "cached_tokens": 40,
                "cost_usd": 0.0021,
            },
        }
    )
    totals.add_evidence(
        {
            "backend": "http",
            "attempts": 1,
            "usage": {
                "prompt_tokens": None,
                "completion_tokens": None,
                "total_tokens": None,
                "model": None,
                "latency_ms": 10,
                "cost_usd": None,
                "cost_unknown": "no_usage",
            },
        }
    )
    totals.add_error(
        {
            "kind": "truncated",
            "attempts": 1,
            "usage": {
                "prompt_tokens": 5,
                "completion_tokens": 7,
                "total_tokens": 12,
                "model": "m-1",
                "cost_usd": 0.00001,
            },
        }
    )
    totals.add_error({"kind": "budget_exhausted", "attempts": 0})
    totals.add_evidence({"backend": "replay", "attempts": 0, "usage": {"model": "m-1", "cost_usd": 0.0}})
    assert totals.to_dict() == {
        "answered": 3,
        "replayed": 1,
        "errors": {"budget_exhausted": 1, "truncated": 1},
        "http_requests": 4,
        "prompt_tokens": 105,
        "completion_tokens": 27,
        "total_tokens": 132,
        "cached_tokens": 40,
        "calls_without_usage": 1,
        "cost_usd": 0.00211,
        "calls_cost_unknown": 1,  # the known costs; the no-usage call
        "latency_ms_total": 60.5,
        "models_reported": {"m-1": 3},
    }


def test_redact_catches_a_key_cut_off_by_truncation():
    secret = "sk-proj-" + "A1b2C3d4" * 10
    assert redact("key " + secret[:30] + "...", secret) == "key [REDACTED]..."
    assert redact(secret + secret, secret) == "[REDACTED][REDACTED]"
    assert redact("sk-proj-short", secret) == "sk-proj-short"  # under 12 chars of the key
