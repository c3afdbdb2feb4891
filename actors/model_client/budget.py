"""Per-session budgets of model calls and tokens.

``reserve()`` is called before a call sends anything: when the calls or tokens already used
reach their limit it raises ``BudgetExhausted`` and the call is never made. A call counts
once however many retries it needs (a 429 or 5xx is not normally billed). Tokens are
charged after each answer from the reported usage, so the token budget can be overrun by at
most the calls in flight; a server that reports no usage charges nothing (the evidence
shows ``null`` tokens, and the session summary counts such calls). ``None`` means unlimited.
"""
from __future__ import annotations

import threading

from .errors import BudgetExhausted


class Budget:
    """Thread-safe counters against optional limits."""

    def __init__(self, calls: int | None, tokens: int | None):
        self.calls_limit = calls
        self.tokens_limit = tokens
        self.calls_used = 0
        self.tokens_used = 0
        self._lock = threading.Lock()

    def reserve(self) -> None:
        """Count one call, or raise ``BudgetExhausted`` without counting it."""
        with self._lock:
            if self.calls_limit is not None and self.calls_used >= self.calls_limit:
                raise BudgetExhausted("calls", self.calls_used, self.calls_limit)
            if self.tokens_limit is not None and self.tokens_used >= self.tokens_limit:
                raise BudgetExhausted("tokens", self.tokens_used, self.tokens_limit)
            self.calls_used += 1

    def charge_tokens(self, tokens: int) -> None:
        with self._lock:
            self.tokens_used += max(0, tokens)

    def to_dict(self) -> dict:
        with self._lock:
            return {"calls_used": self.calls_used, "calls_limit": self.calls_limit,
                    "tokens_used": self.tokens_used, "tokens_limit": self.tokens_limit}
