"""Tokens and cost of a session's model calls from its journal rows (``ModelUse``), as the
progress line, the last lines of ``supervisor start``, fleet results and the viewer show them."""

from __future__ import annotations

import pytest

from supervisor.capture.modeluse import ModelUse
from supervisor.progress import _model


def evidence(prompt, completion, cached=None, cost=None, why=None) -> dict:
    total = prompt + completion if prompt is not None and completion is not None else None
    return {
        "backend": "http",
        "usage": {
            "prompt_tokens": prompt,
            "completion_tokens": completion,
            "total_tokens": total,
            "cached_tokens": cached,
            "cost_usd": cost,
            "cost_unknown": why,
        },
    }


def fed(*rows: dict) -> ModelUse:
    use = ModelUse()
    for row in rows:
        use.add(row)
    return use


class Watch:
    def __init__(self, model: ModelUse):
        self.model = model


def test_tokens_and_known_costs_sum_over_answers_unusable_answers_and_late_answers():
    use = fed(
        {"event": "proposal", "model_evidence": [evidence(1000, 50, cached=400, cost=0.0125)]},
        {"event": "proposal", "model_evidence": [evidence(800, 40, cost=0.004), "not a dict"]},
        {"event": "model_error", "kind": "off_schema", **evidence(700, 30, cached=0, cost=0.002)},
        {"event": "model_error", "kind": "transport"},  # no reply: no usage
        {"event": "model_late_answer", "outcome": "answered", **evidence(600, 20, cost=0.001)},
        {"event": "proposal", "source": "heuristic_fallback"},
    )
    got = use.as_dict()
    assert (got["prompt_tokens"], got["completion_tokens"], got["cached_tokens"], got["total_tokens"]) == (
        3100,
        140,
        400,
        3240,
    )
    assert got["cost_usd"] == pytest.approx(0.0195) and got["cost_unknown_calls"] == 0
    assert (got["answers"], got["errors"], got["fallbacks"]) == (2, 2, 1)
    assert "3,240 tokens (400 cached); cost $0.0195 ($0.0098 per run, 2 runs)" in use.line(runs=2)
    assert _model(Watch(use)) == "  model 2 ok 2 err 1 fallback 3.2k tok $0.0195"


def test_a_cost_never_known_is_said_unknown_with_its_reason_never_zero():
    no_usage = fed({"event": "proposal", "model_evidence": [evidence(None, None, why="no_usage")] * 3})
    assert no_usage.cost_unknown_calls == 3 and no_usage.cost_usd == 0.0
    assert no_usage.line().endswith("no tokens reported; cost unknown: the server reported no usage on 3 calls")
    assert _model(Watch(no_usage)) == "  model 3 ok 0 err ? tok $?"
    no_price = fed(
        {"event": "proposal", "model_evidence": [evidence(90, 10, why="no_price")]},
        {"event": "model_error", "kind": "truncated", **evidence(90, 512, why="no_price")},
    )
    assert no_price.line().endswith("702 tokens; cost unknown: no price set (model.price) on 2 calls")
    assert no_price.as_dict()["cost_unknown_reasons"] == {"no_price": 2}
    # a journal written before prices: usage without cost keys is unknown too, not free
    old = fed(
        {
            "event": "proposal",
            "model_evidence": [{"usage": {"prompt_tokens": 5, "completion_tokens": 1, "total_tokens": 6}}],
        }
    )
    assert old.cost_unknown_calls == 1 and "cost unknown: no price set" in old.line()


def test_a_partly_known_cost_shows_the_known_part_and_what_is_missing():
    use = fed(
        {"event": "proposal", "model_evidence": [evidence(1000, 50, cost=0.0123), evidence(None, None, why="no_usage")]}
    )
    assert use.cost_unknown_calls == 1 and use.cost_usd == pytest.approx(0.0123)
    assert "cost $0.0123 on 1 call, unknown on 1 call (the server reported no usage on 1 call)" in use.line(runs=1)
    assert "per run" not in use.line(runs=1)  # a per-run figure would understate it
    assert _model(Watch(use)).endswith("1.1k tok $0.0123+?")


def test_replayed_answers_cost_a_known_zero_and_a_model_never_asked_shows_nothing():
    replayed = fed(
        {
            "event": "proposal",
            "model_evidence": [
                {"backend": "replay", "usage": {"prompt_tokens": None, "cost_usd": 0.0, "cost_unknown": None}}
            ],
        }
    )
    assert replayed.cost_unknown_calls == 0 and replayed.cost_short() == "$0.0000"
    unasked = fed({"event": "observation"})
    assert unasked.line() == "" and _model(Watch(unasked)) == ""
    assert unasked.as_dict()["cost_usd"] == 0 and unasked.as_dict()["cost_unknown_calls"] == 0


def test_a_reply_that_could_not_be_used_is_an_answer_not_silence():
    unusable = fed(
        *[{"event": "model_error", "kind": k} for k in ("off_schema", "malformed", "off_schema")],
        {"event": "proposal", "source": "heuristic_fallback", "agent_fallback": "off_schema: ..."},
    )
    assert not unusable.never_answered and unusable.unanswered_in_a_row == 0
    assert unusable.line().startswith("model 0 answers, 3 errors (off_schema 2, malformed 1), 1 fallbacks")
    silent = fed(*[{"event": "model_error", "kind": "transport"}] * 3)
    assert silent.never_answered and silent.unanswered_in_a_row == 3
    waited = fed({"event": "proposal", "source": "agent_wait", "agent_fallback": "timeout: ..."})
    assert waited.fallbacks == 1
