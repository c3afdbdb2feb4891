"""When to retry a model request, and how long to wait first.

Only HTTP 429 and 5xx are retried; every other status, timeouts and transport errors are
not (a model call that timed out may still be billed, and a retry would double the bill).
Waits:

* ``Retry-After`` in its seconds form is honoured exactly (decimal seconds are accepted too;
  an HTTP-date falls back to the backoff). A ``Retry-After`` beyond ``retry_after_max_s``
  ends the retries at once: waiting less than the server asked would only earn another 429.
* otherwise exponential backoff ``backoff_s * 2**(attempt-1)``, capped at ``backoff_max_s``.

``max_retries`` counts retries: a call sends at most ``1 + max_retries`` requests.
"""

from __future__ import annotations

import dataclasses
import re

from .config import ModelConfig

_SECONDS = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*$")


@dataclasses.dataclass(frozen=True)
class RetryDecision:
    """``wait_s`` before the next attempt, or ``None`` with ``why`` to give up."""

    wait_s: float | None
    why: str = ""


@dataclasses.dataclass(frozen=True)
class RetryPolicy:
    max_retries: int
    backoff_s: float
    backoff_max_s: float
    retry_after_max_s: float

    @classmethod
    def from_config(cls, config: ModelConfig) -> RetryPolicy:
        return cls(config.max_retries, config.backoff_s, config.backoff_max_s, config.retry_after_max_s)

    @staticmethod
    def retryable(status: int) -> bool:
        return status == 429 or 500 <= status <= 599

    def decide(self, status: int, attempts: int, retry_after: str | None) -> RetryDecision:
        """What to do after ``attempts`` requests, the last of which got ``status``."""
        if not self.retryable(status):
            return RetryDecision(None, "not retryable")
        if attempts > self.max_retries:
            return RetryDecision(None, f"gave up after {attempts} attempts")
        asked = parse_retry_after(retry_after)
        if asked is not None:
            if asked > self.retry_after_max_s:
                return RetryDecision(
                    None, f"Retry-After {asked:g}s exceeds model.retry_after_max_s {self.retry_after_max_s:g}"
                )
            return RetryDecision(asked)
        return RetryDecision(min(self.backoff_s * 2 ** (attempts - 1), self.backoff_max_s))


def parse_retry_after(value: str | None) -> float | None:
    """Seconds from a ``Retry-After`` header in its seconds form; None otherwise."""
    if value is None:
        return None
    match = _SECONDS.match(value)
    return float(match.group(1)) if match else None
