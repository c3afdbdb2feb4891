"""What a session asked of its model and what that cost, from its journal rows, one row at a time.

``ModelUse.add(row)`` counts answered calls, ``model_error`` rows, heuristic fallbacks, tokens
and known costs; ``model_spent`` is its part of a results row (``supervisor fleet report``,
``capture coverage``, ``CapturedSession.facts``); ``usd`` and ``short_count`` write a cost and a
token count as every display shows them (``supervisor start``'s last lines, the fleet report,
the viewer).
"""

from __future__ import annotations

import math
from typing import Any

from actors.model_client.errors import ANSWERED_KINDS
from protocol.events import ModelError, ModelLateAnswer, Proposal
from protocol.journal import is_int


class ModelUse:
    """What a session asked of its model, from its rows: answered calls (each ``model_evidence``
    entry of a proposal), ``model_error`` rows by kind, proposals the heuristic decided because
    the model gave no usable answer (``source: heuristic_fallback``, or an agent's
    ``agent_fallback``), and how many questions in a row went unanswered (an answer resets it,
    also one that could not be used: ``ANSWERED_KINDS``). ``supervisor start``'s last lines,
    ``capture audit``, ``capture coverage``, ``fleet report`` and ``supervisor view`` count with
    it.

    Tokens and cost: ``prompt_tokens``, ``completion_tokens``, ``cached_tokens`` and
    ``total_tokens`` sum the integers the server reported in the ``usage`` of every call that
    has one (each evidence entry, each ``model_error`` row with ``usage``, and each
    ``model_late_answer`` row: a reply the policy stopped waiting for was spent all the same).
    ``cost_usd`` sums the known costs (``usage.cost_usd``); ``cost_unknown_calls`` counts those
    calls whose cost is None, and ``cost_unknown_reasons`` says why (``no_usage``: the server
    reported no tokens; ``no_price``: the profile set no ``model.price``)."""

    TOKEN_KEYS = ("prompt_tokens", "completion_tokens", "cached_tokens", "total_tokens")

    def __init__(self):
        self.answers = 0
        self.errors = 0
        self.fallbacks = 0
        self.unanswered_in_a_row = 0
        self.error_kinds: dict[str, int] = {}
        self.prompt_tokens = 0
        self.completion_tokens = 0
        self.cached_tokens = 0
        self.total_tokens = 0
        self.cost_usd = 0.0
        self.cost_unknown_calls = 0
        self.cost_unknown_reasons: dict[str, int] = {}
        self.priced_calls = 0  # calls whose cost is known

    def add(self, row: dict[str, Any]) -> None:
        event = row.get("event")
        if event == Proposal.KIND:
            evidence = [e for e in row.get("model_evidence") or () if isinstance(e, dict)]
            if evidence:
                self.answers += len(evidence)
                self.unanswered_in_a_row = 0
            for e in evidence:
                self._add_usage(e.get("usage") if isinstance(e.get("usage"), dict) else {})
            if row.get("source") == "heuristic_fallback" or row.get("agent_fallback"):
                self.fallbacks += 1
        elif event == ModelError.KIND:
            self.errors += 1
            kind = str(row.get("kind"))
            # an answer that could not be used is an answer: the model is reachable
            self.unanswered_in_a_row = 0 if kind in ANSWERED_KINDS else self.unanswered_in_a_row + 1
            self.error_kinds[kind] = self.error_kinds.get(kind, 0) + 1
            if isinstance(row.get("usage"), dict):
                self._add_usage(row["usage"])
        elif event == ModelLateAnswer.KIND and isinstance(row.get("usage"), dict):
            self._add_usage(row["usage"])

    def _add_usage(self, usage: dict[str, Any]) -> None:
        """One call's tokens and cost; a cost that is not a number is unknown (never 0)."""
        for key in self.TOKEN_KEYS:
            if is_int(usage.get(key)):
                setattr(self, key, getattr(self, key) + usage[key])
        cost = usage.get("cost_usd")
        if isinstance(cost, (int, float)) and not isinstance(cost, bool) and math.isfinite(cost):
            self.cost_usd += float(cost)
            self.priced_calls += 1
            return
        self.cost_unknown_calls += 1
        why = usage.get("cost_unknown")
        if not isinstance(why, str):  # a record from before prices: say what it lacks
            reported = any(is_int(usage.get(k)) for k in self.TOKEN_KEYS)
            why = "no_price" if reported else "no_usage"
        self.cost_unknown_reasons[why] = self.cost_unknown_reasons.get(why, 0) + 1

    @property
    def asked(self) -> bool:
        return bool(self.answers or self.errors or self.fallbacks)

    @property
    def never_answered(self) -> bool:
        """Errors and no reply at all: a reply that could not be used (``ANSWERED_KINDS``) is
        an answer, and the server is there."""
        unusable = sum(n for k, n in self.error_kinds.items() if k in ANSWERED_KINDS)
        return self.errors > 0 and self.answers == 0 and unusable == 0

    def cost_short(self) -> str:
        """``$0.0123``, ``$0.0123+?`` when some calls' cost is unknown, ``$?`` when none is
        known."""
        if self.cost_unknown_calls and not self.priced_calls:
            return "$?"
        return usd(self.cost_usd) + ("+?" if self.cost_unknown_calls else "")

    def cost_words(self, runs: int | None = None) -> str:
        """``41,234 tokens (1,024 cached); cost $0.0123 ($0.0041 per run, 3 runs)``; when a
        cost is unknown it says why (``cost unknown: the server reported no usage on 2
        calls``) rather than showing 0. Empty when no call reported usage or cost."""
        calls = self.priced_calls + self.cost_unknown_calls
        if not calls:
            return ""
        unreported = self.cost_unknown_reasons.get("no_usage", 0) == calls and not self.total_tokens
        tokens = (
            "no tokens reported"
            if unreported
            else f"{self.total_tokens:,} tokens" + (f" ({self.cached_tokens:,} cached)" if self.cached_tokens else "")
        )
        why = "; ".join(
            f"{UNKNOWN_WORDS.get(k, k)} on {_calls(n)}" for k, n in sorted(self.cost_unknown_reasons.items())
        )
        if not self.cost_unknown_calls:
            cost = f"cost {usd(self.cost_usd)}"
            if runs:
                cost += f" ({usd(self.cost_usd / runs)} per run, {runs} run{'s' if runs != 1 else ''})"
        elif not self.priced_calls:
            cost = f"cost unknown: {why}"
        else:
            cost = (
                f"cost {usd(self.cost_usd)} on {_calls(self.priced_calls)}, unknown on "
                f"{_calls(self.cost_unknown_calls)} ({why})"
            )
        return f"{tokens}; {cost}"

    def line(self, runs: int | None = None) -> str:
        """``model 0 answers, 8 errors (transport 8), 8 fallbacks``, then tokens and
        cost in words (``cost_words``; ``runs``: runs that ended, for the cost per run); empty
        when the session asked no model."""
        if not self.asked:
            return ""
        kinds = ", ".join(f"{k} {n}" for k, n in sorted(self.error_kinds.items(), key=lambda kv: -kv[1]))
        words = self.cost_words(runs)
        return (
            f"model {self.answers} answers, {self.errors} errors"
            + (f" ({kinds})" if kinds else "")
            + f", {self.fallbacks} fallbacks"
            + (f"; {words}" if words else "")
        )

    def as_dict(self) -> dict[str, Any]:
        return {
            "answers": self.answers,
            "errors": self.errors,
            "fallbacks": self.fallbacks,
            "error_kinds": dict(self.error_kinds),
            "never_answered": self.never_answered,
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "cached_tokens": self.cached_tokens,
            "total_tokens": self.total_tokens,
            "cost_usd": round(self.cost_usd, 9),
            "cost_unknown_calls": self.cost_unknown_calls,
            "cost_unknown_reasons": dict(sorted(self.cost_unknown_reasons.items())),
        }


#: why a call's cost is unknown (``usage.cost_unknown``), in words
UNKNOWN_WORDS = {"no_usage": "the server reported no usage", "no_price": "no price set (model.price)"}


def _calls(n: int) -> str:
    return f"{n} call{'s' if n != 1 else ''}"


def usd(amount: float) -> str:
    """``$0.0123`` under a dollar (``$0.000012`` under a hundredth of a cent), ``$12.35`` above."""
    if amount >= 1:
        return f"${amount:,.2f}"
    if 0 < amount < 0.0001:
        return f"${amount:.6f}"
    return f"${amount:.4f}"


def short_count(n: int) -> str:
    """``950``, ``41k``, ``4.1k``, ``1.2M``: a token count for a one-line display."""
    if n < 1000:
        return str(n)
    if n < 10_000:
        return f"{n / 1000:.1f}k"
    if n < 1_000_000:
        return f"{n // 1000}k"
    return f"{n / 1_000_000:.1f}M"


def model_spent(m: ModelUse) -> dict[str, Any]:
    """What one session's model calls spent, as results rows and ``capture coverage`` give it:
    ``model_calls`` (calls that may have spent tokens), ``model_tokens`` and
    ``model_cached_tokens`` (None when calls were made and none reported usage),
    ``model_cost_usd`` (the sum of the known costs; None when calls were made and none had a
    known cost: an unknown cost is never 0), ``model_cost_unknown_calls``, ``model_fallbacks``."""
    calls = m.priced_calls + m.cost_unknown_calls
    reported = calls - m.cost_unknown_reasons.get("no_usage", 0)
    tokens_known = reported > 0 or calls == 0
    return {
        "model_calls": calls,
        "model_tokens": m.total_tokens if tokens_known else None,
        "model_cached_tokens": m.cached_tokens if tokens_known else None,
        "model_cost_usd": round(m.cost_usd, 9) if m.priced_calls or calls == 0 else None,
        "model_cost_unknown_calls": m.cost_unknown_calls,
        "model_fallbacks": m.fallbacks,
    }
