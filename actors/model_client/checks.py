"""Checks of one setting's value, shared by the configuration and the price: each returns
the value, or raises ``ConfigError`` naming the key and what was wrong."""

from __future__ import annotations

import math
from typing import Any

from .errors import ConfigError


def number(low: float | None, high: float | None, *, strict_low: bool = False, nullable: bool = False):
    def check(key: str, value: Any) -> float | None:
        if value is None and nullable:
            return None
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise ConfigError(key, f"must be a number, got {type(value).__name__}")
        try:
            value = float(value)
        except OverflowError:
            raise ConfigError(key, f"must be a finite number, got {value}") from None
        if not math.isfinite(value):
            raise ConfigError(key, f"must be a finite number, got {value}")
        if low is not None and (value <= low if strict_low else value < low):
            bound = f"> {low:g}" if strict_low else f">= {low:g}"
            raise ConfigError(key, f"must be {bound}, got {value:g}")
        if high is not None and value > high:
            raise ConfigError(key, f"must be <= {high:g}, got {value:g}")
        return value

    return check
