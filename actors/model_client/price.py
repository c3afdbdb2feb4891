"""What a model call costs: the profile's ``model.price`` and the cost of one call's usage.

A price is what the user set, in USD per million tokens, for the one model in use::

    model:
      model: gpt-4o-mini
      price: {model: gpt-4o-mini, input_per_mtok: 0.15, output_per_mtok: 0.60,
              cached_input_per_mtok: 0.075}     # optional

No price is ever guessed. ``cost_fields(usage, price)`` gives the keys every call's ``usage``
carries beside its token counts:

    cost_usd      ((prompt - cached) * input + cached * cached_input + completion * output) / 1e6,
                  or None when it cannot be known
    cost_unknown  None, or why ``cost_usd`` is None: ``"no_price"`` (no ``model.price``) or
                  ``"no_usage"`` (the server did not report prompt and completion tokens)
    price         the price used (``Price.to_record()``), or None

Cached prompt tokens are part of ``prompt_tokens`` (OpenAI's ``PromptTokensDetails.
cached_tokens``: "Cached tokens present in the prompt"). Without ``cached_input_per_mtok``
they are billed at the input price, an upper bound (``priced_cached_as_input`` says when).
A reported cached count above the prompt count is billed as the whole prompt cached.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

from .checks import number
from .errors import ConfigError

_NON_NEGATIVE = number(0, None)

PER = 1_000_000  # prices are per million tokens
PRICE_KEYS = ("model", "input_per_mtok", "output_per_mtok", "cached_input_per_mtok")
NO_PRICE = "no_price"
NO_USAGE = "no_usage"


@dataclasses.dataclass(frozen=True)
class Price:
    """USD per million tokens for one model, as the profile sets it."""

    model: str
    input_per_mtok: float
    output_per_mtok: float
    cached_input_per_mtok: float | None = None

    def to_record(self) -> dict:
        return dataclasses.asdict(self)

    def cost_usd(self, prompt: int, completion: int, cached: int | None) -> float:
        """The cost of one call's reported tokens."""
        cached = min(max(cached or 0, 0), prompt)
        cached_rate = self.input_per_mtok if self.cached_input_per_mtok is None else self.cached_input_per_mtok
        return (
            (prompt - cached) * self.input_per_mtok + cached * cached_rate + completion * self.output_per_mtok
        ) / PER


def check_price(key: str, value: Any) -> Price | None:
    """``model.price`` as a ``Price`` (None when null); ``ConfigError`` names the bad key.

    Whether ``price.model`` is the model in use is checked by ``ModelConfig``, which knows it.
    """
    if value is None:
        return None
    if not isinstance(value, Mapping):
        raise ConfigError(
            key,
            "must be a mapping with model, input_per_mtok, output_per_mtok "
            f"and optionally cached_input_per_mtok (USD per million tokens), "
            f"got {type(value).__name__}",
        )
    for name in value:
        if name not in PRICE_KEYS:
            raise ConfigError(f"{key}.{name}", f"unknown key (known: {', '.join(PRICE_KEYS)})")
    for name in ("model", "input_per_mtok", "output_per_mtok"):
        if name not in value:
            raise ConfigError(
                f"{key}.{name}",
                "required: a price is never guessed"
                if name != "model"
                else "required: the model this price is for (the same as model.model)",
            )
    model = value["model"]
    if not isinstance(model, str) or not model.strip():
        raise ConfigError(f"{key}.model", f"must be a non-empty model name string, got {model!r}")
    rates = {name: _rate(f"{key}.{name}", value[name]) for name in ("input_per_mtok", "output_per_mtok")}
    if value.get("cached_input_per_mtok") is not None:  # null: not set
        rates["cached_input_per_mtok"] = _rate(f"{key}.cached_input_per_mtok", value["cached_input_per_mtok"])
    return Price(model=model, **rates)


def _rate(key: str, value: Any) -> float:
    """A price: a finite number of USD per million tokens, >= 0."""
    return _NON_NEGATIVE(key, value)


def cost_fields(usage: Mapping[str, Any], price: Price | None) -> dict:
    """``cost_usd``, ``cost_unknown`` and ``price`` for one call's usage (see the module
    docstring): never 0 for what is not known."""
    prompt, completion = usage.get("prompt_tokens"), usage.get("completion_tokens")
    if price is None:
        return {"cost_usd": None, "cost_unknown": NO_PRICE, "price": None}
    if not (_count(prompt) and _count(completion)):
        return {"cost_usd": None, "cost_unknown": NO_USAGE, "price": price.to_record()}
    cached = usage.get("cached_tokens") if _count(usage.get("cached_tokens")) else None
    return {"cost_usd": price.cost_usd(prompt, completion, cached), "cost_unknown": None, "price": price.to_record()}


def priced_cached_as_input(usage: Mapping[str, Any]) -> bool:
    """True when the call's cost billed cached prompt tokens at the input price (its price
    sets no ``cached_input_per_mtok``): the cost is then an upper bound."""
    price = usage.get("price")
    return usage.get("cost_usd") is not None and isinstance(price, dict) and price.get("cached_input_per_mtok") is None


def _count(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0
