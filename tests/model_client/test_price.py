"""What each call costs: ``model.price``, the cost in every answer's usage, the money budget.

The token counts a cost is checked against are read from the bytes the fake server sent
(``server.sent``), not from the client's records; the expected cost is worked out here from
the price and those counts.
"""

from __future__ import annotations

import json
import math

import pytest
import yaml

from actors.model_client import BudgetExhausted, ConfigError, ModelConfig, OffSchemaAnswer, ReplayBackend
from supervisor import cli
from tests.fakes.openai_server import Reply, completion_body, usage

from .conftest import card_answer, card_question

PRICE = {"model": "test-model", "input_per_mtok": 2.5, "output_per_mtok": 10.0, "cached_input_per_mtok": 1.25}
COST_KEYS = {"cached_tokens", "cost_usd", "cost_unknown", "price"}


def reported(server, i: int) -> dict:
    """The usage the server's i-th reply reported, as it went over the wire."""
    return json.loads(server.sent[i])["usage"]


def expected_cost(u: dict, price: dict) -> float:
    prompt, completion = u["prompt_tokens"], u["completion_tokens"]
    cached = (u.get("prompt_tokens_details") or {}).get("cached_tokens", 0)
    cached_rate = price.get("cached_input_per_mtok", price["input_per_mtok"])
    return (
        (prompt - cached) * price["input_per_mtok"] + cached * cached_rate + completion * price["output_per_mtok"]
    ) / 1e6


def priced(make_client, server, **overrides):
    price = overrides.pop("price", PRICE)
    return make_client(
        server,
        price=ModelConfig.from_mapping({"base_url": server.base_url, "model": "test-model", "price": price}).price,
        **overrides,
    )


def test_each_answer_carries_its_tokens_and_cost_from_the_reported_usage(server, make_client):
    server.script(
        Reply.answer(card_answer(1), usage=usage(1834, 77, cached=1280)),
        Reply.answer(card_answer(2), usage=usage(412, 31)),
    )
    client = priced(make_client, server)
    first = client.ask(card_question()).evidence["usage"]
    second = client.ask(card_question()).evidence["usage"]

    sent = reported(server, 0)
    assert first["cached_tokens"] == sent["prompt_tokens_details"]["cached_tokens"]
    assert first["prompt_tokens"] == sent["prompt_tokens"]
    assert math.isclose(first["cost_usd"], expected_cost(sent, PRICE), rel_tol=1e-12)
    assert first["cost_unknown"] is None and first["price"] == PRICE
    # a reply without prompt_tokens_details: nothing is known to be cached, all at the input price
    assert second["cached_tokens"] is None
    assert math.isclose(second["cost_usd"], expected_cost(reported(server, 1), PRICE), rel_tol=1e-12)
    totals = client.usage()
    assert math.isclose(totals["cost_usd"], first["cost_usd"] + second["cost_usd"], rel_tol=1e-9)
    assert totals["cached_tokens"] == 1280 and totals["calls_cost_unknown"] == 0
    assert totals["budget"]["usd_used"] == round(first["cost_usd"] + second["cost_usd"], 9)


def test_without_a_cached_price_cached_tokens_cost_the_input_price_and_say_so(server, make_client):
    server.script(Reply.answer(card_answer(1), usage=usage(2000, 100, cached=1500)))
    price = {k: v for k, v in PRICE.items() if k != "cached_input_per_mtok"}
    evidence = priced(make_client, server, price=price).ask(card_question()).evidence
    assert evidence["cached_priced_as_input"] is True
    assert evidence["usage"]["price"]["cached_input_per_mtok"] is None
    assert math.isclose(evidence["usage"]["cost_usd"], expected_cost(reported(server, 0), price))
    assert evidence["usage"]["cost_usd"] > expected_cost(reported(server, 0), PRICE)  # an upper bound


def test_a_server_that_reports_no_usage_leaves_the_cost_unknown_never_zero(server, make_client):
    server.script(
        Reply(body={k: v for k, v in completion_body(json.dumps(card_answer(1))).items() if k != "usage"}),
        Reply.answer(card_answer(1), usage={"total_tokens": 90}),
    )  # no split to price
    client = priced(make_client, server)
    for i in range(2):
        u = client.ask(card_question()).evidence["usage"]
        assert "prompt_tokens" not in (json.loads(server.sent[i]).get("usage") or {})
        assert u["cost_usd"] is None and u["cost_unknown"] == "no_usage", u
        assert u["price"] == PRICE
    totals = client.usage()
    assert totals["cost_usd"] == 0.0 and totals["calls_cost_unknown"] == 2
    assert client.usage()["budget"]["usd_used"] == 0.0


def test_without_a_price_every_cost_is_unknown(server, make_client):
    server.script(Reply.answer(card_answer(1), usage=usage(300, 20, cached=0)))
    u = make_client(server).ask(card_question()).evidence["usage"]
    assert set(u) >= COST_KEYS
    assert (u["cost_usd"], u["cost_unknown"], u["price"], u["cached_tokens"]) == (None, "no_price", None, 0)


def test_an_answer_that_cannot_be_used_still_reports_what_it_cost(server, make_client):
    server.script(Reply.answer(card_answer(7), usage=usage(900, 40, cached=512)))  # no card 7
    with pytest.raises(OffSchemaAnswer) as info:
        priced(make_client, server).ask(card_question())
    record = info.value.to_record()
    assert set(record["usage"]) >= COST_KEYS and record["usage"]["cached_tokens"] == 512
    assert math.isclose(record["usage"]["cost_usd"], expected_cost(reported(server, 0), PRICE))


def test_a_spent_money_budget_stops_further_calls_with_nothing_sent(server, make_client):
    # 1000 prompt + 1000 completion at 2.5 / 10 per million: 0.0125 USD a call
    server.script(*[Reply.answer(card_answer(1), usage=usage(1000, 1000))] * 3)
    client = priced(make_client, server, budget_usd=0.02)
    client.ask(card_question())
    client.ask(card_question())  # 0.0125 < 0.02: sent, and it overshoots to 0.025
    assert len(server.requests) == 2
    with pytest.raises(BudgetExhausted) as info:
        client.ask(card_question())
    assert len(server.requests) == 2, "a call past the money budget sent a request"
    record = info.value.to_record()
    spent = sum(expected_cost(reported(server, i), PRICE) for i in range(2))
    assert record["kind"] == "budget_exhausted" and record["budget"] == "usd"
    assert math.isclose(record["used"], spent) and record["limit"] == 0.02
    assert record["attempts"] == 0 and "usage" not in record


def test_replayed_answers_cost_nothing_and_say_why(server, make_client):
    server.script(Reply.answer(card_answer(1), usage=usage(500, 50, cached=100)))
    original = priced(make_client, server).ask(card_question()).evidence
    backend = ReplayBackend([{"event": "proposal", "model_evidence": [original]}])
    u = backend.ask(card_question()).evidence["usage"]
    assert u["cost_usd"] == 0.0 and u["cost_unknown"] is None and "nothing was sent" in u["cost_note"]
    assert u["prompt_tokens"] is None and u["cached_tokens"] is None
    assert backend.usage()["cost_usd"] == 0.0 and backend.usage()["calls_cost_unknown"] == 0


BAD_PRICES = [
    ({"price": {**PRICE, "model": "gpt-4o"}}, "price.model", "'gpt-4o' is not the model in use ('test-model')"),
    ({"price": {**PRICE, "input_per_mtok": -0.1}}, "price.input_per_mtok", "must be >= 0"),
    ({"price": {**PRICE, "output_per_mtok": float("nan")}}, "price.output_per_mtok", "finite"),
    ({"price": {**PRICE, "input_per_mtok": "0.15"}}, "price.input_per_mtok", "must be a number"),
    ({"price": {**PRICE, "cached_input_per_mtok": True}}, "price.cached_input_per_mtok", "must be a number"),
    ({"price": {**PRICE, "per_request": 0.01}}, "price.per_request", "unknown key"),
    ({"price": {"model": "test-model", "output_per_mtok": 1}}, "price.input_per_mtok", "required"),
    ({"price": {"model": "test-model", "input_per_mtok": 1}}, "price.output_per_mtok", "required"),
    ({"price": {"input_per_mtok": 1, "output_per_mtok": 1}}, "price.model", "required"),
    ({"price": 0.15}, "price", "must be a mapping"),
    ({"budget_usd": 5}, "budget_usd", "needs model.price"),
    ({"budget_usd": -1, "price": PRICE}, "budget_usd", "must be >= 0"),
]


@pytest.mark.parametrize("keys,key,problem", BAD_PRICES, ids=[b[1] + ":" + b[2][:20] for b in BAD_PRICES])
def test_a_bad_price_is_refused_naming_the_key(keys, key, problem):
    with pytest.raises(ConfigError) as info:
        ModelConfig.from_profile({"base_url": "http://127.0.0.1:1/v1", "model": "test-model", **keys})
    assert info.value.key == key and str(info.value).startswith(f"model.{key}: ")
    assert problem in str(info.value), str(info.value)
    with pytest.raises(ConfigError) as nested:  # the same keys under model.settings
        ModelConfig.from_profile({"base_url": "http://127.0.0.1:1/v1", "model": "test-model", "settings": keys})
    assert str(nested.value).startswith(f"model.settings.{key}: ")


@pytest.mark.parametrize("keys,key,problem", BAD_PRICES, ids=[b[1] + ":" + b[2][:20] for b in BAD_PRICES])
def test_supervisor_validate_refuses_a_bad_price_in_a_profile_naming_the_key(keys, key, problem, tmp_path, capsys):
    path = tmp_path / "priced.yaml"
    path.write_text(
        yaml.safe_dump(
            {"name": "priced", "model": {"base_url": "http://127.0.0.1:1/v1", "model": "test-model", **keys}}
        ),
        encoding="utf-8",
    )
    assert cli.main(["validate", str(path)]) == 2
    err = capsys.readouterr().err
    assert f"{path}: model.{key}: " in err and problem in err, err
    path.write_text(
        yaml.safe_dump(
            {
                "name": "priced",
                "model": {
                    "base_url": "http://127.0.0.1:1/v1",
                    "model": "test-model",
                    "price": PRICE,
                    "budget_usd": 1.5,
                },
            }
        ),
        encoding="utf-8",
    )
    assert cli.main(["validate", str(path)]) == 0, capsys.readouterr().err
