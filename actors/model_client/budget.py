"""Per-session budgets of model calls, tokens and money.

``reserve()`` is called before a call sends anything: when the calls or tokens already used
reach their limit it raises ``BudgetExhausted`` and the call is never made. A call counts
once however many retries it needs (a 429 or 5xx is not normally billed). Tokens are
charged after each answer from the reported usage, so the token budget can be overrun by at
most the calls in flight; a server that reports no usage charges nothing (the evidence
shows ``null`` tokens, and the session summary counts such calls). The money budget
(``model.budget_usd``) works the same way on the known cost of each answered call (its
``usage.cost_usd``, from ``model.price``): the call that reaches it is not stopped, so the
spend may overshoot the budget by the calls in flight (one call's cost when they are asked
one at a time); a call whose cost is unknown charges nothing. ``None`` means unlimited.
"""

from __future__ import annotations

import threading

from .errors import BudgetExhausted


class Budget:
    """Thread-safe counters against optional limits."""

    def __init__(self, calls: int | None, tokens: int | None, usd: float | None = None):
        self.calls_limit = calls
        self.tokens_limit = tokens
        self.usd_limit = usd
        self.calls_used = 0
        self.tokens_used = 0
        self.usd_used = 0.0
        self._lock = threading.Lock()

    def reserve(self) -> None:
        """Count one call, or raise ``BudgetExhausted`` without counting it."""
        with self._lock:
            if self.calls_limit is not None and self.calls_used >= self.calls_limit:
                raise BudgetExhausted("calls", self.calls_used, self.calls_limit)
            if self.tokens_limit is not None and self.tokens_used >= self.tokens_limit:
                raise BudgetExhausted("tokens", self.tokens_used, self.tokens_limit)
            if self.usd_limit is not None and self.usd_used >= self.usd_limit:
                raise BudgetExhausted("usd", round(self.usd_used, 9), self.usd_limit)
            self.calls_used += 1

    def charge_tokens(self, tokens: int) -> None:
        with self._lock:
            self.tokens_used += max(0, tokens)

    def charge_usd(self, cost: float | None) -> None:
        """Charge a call's known cost (None, an unknown cost, charges nothing)."""
        if cost is None:
            return
        with self._lock:
            self.usd_used += max(0.0, cost)

    def to_dict(self) -> dict:
        with self._lock:
            return {
                "calls_used": self.calls_used,
                "calls_limit": self.calls_limit,
                "tokens_used": self.tokens_used,
                "tokens_limit": self.tokens_limit,
                "usd_used": round(self.usd_used, 9),
                "usd_limit": self.usd_limit,
            }
