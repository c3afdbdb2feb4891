"""Evidence records of model calls, and the session's usage totals.

A successful call yields an evidence dict, stored with the proposal that used it::

    {"evidence_version": 1, "call_id": "<uuid4 hex>", "backend": "http" | "replay",
     "request": {"model", "base_url", "question_kind", "questions", "request_hash",
                 "parameters"},
     "answers": [{"question_index", "answer", "confidence", "reason", "gated",
                  "answer_gate_scope": "default_helper_not_policy_gate"}],
     "confidence_gate": 0.6,
     "usage": {"prompt_tokens", "completion_tokens", "total_tokens", "cached_tokens", "model",
               "latency_ms", "wall_ms", "cost_usd", "cost_unknown", "price"},
     "attempts": 1}

plus ``"cached_priced_as_input": true`` when the price set no cached-input rate (the cost is
then an upper bound). ``cost_usd`` is None (with ``cost_unknown`` saying why: ``no_price``,
``no_usage``) whenever it cannot be known; never 0 for an unknown cost (price.py).

A failed call yields ``ModelError.to_record()`` (the ``model_error`` dict) with the same
``request``. Neither is an HTTP transcript: no headers, no key, no raw bodies, no per-retry
ledger (only the attempt count). Token counts and the model name are as the server reported
them (``null`` when it did not). No record carries a correctness label: ``gated`` compares
the model's own confidence with the helper's default gate, nothing more.

``request_hash(kind, questions)`` is the canonical SHA-256 that keys replay.
``UsageTotals`` sums evidence and errors for the model client's own totals (its ``usage()``).
"""

from __future__ import annotations

import hashlib
import json
import threading
import uuid
from collections.abc import Sequence
from typing import Any

from .answers import Answer
from .config import ModelConfig
from .errors import redact  # noqa: F401  (re-exported: evidence and errors share it)

EVIDENCE_VERSION = 1


def canonical_json(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)


def request_hash(kind: str, questions: Sequence[dict]) -> str:
    """SHA-256 of the canonical JSON of ``{"kind", "questions"}`` (question states)."""
    normal = json.loads(json.dumps({"kind": kind, "questions": list(questions)}))
    return hashlib.sha256(canonical_json(normal).encode("utf-8")).hexdigest()


def request_state(config: ModelConfig, kind: str, questions: Sequence[dict], parameters: dict) -> dict:
    return {
        "model": config.model,
        "base_url": config.base_url,
        "question_kind": kind,
        "questions": list(questions),
        "request_hash": request_hash(kind, questions),
        "parameters": dict(parameters),
    }


def new_call_id() -> str:
    return uuid.uuid4().hex


def success_evidence(
    request: dict,
    answers: Sequence[Answer],
    usage: dict,
    *,
    gate: float,
    attempts: int,
    call_id: str,
    backend: str = "http",
) -> dict:
    return {
        "evidence_version": EVIDENCE_VERSION,
        "call_id": call_id,
        "backend": backend,
        "request": request,
        "answers": [a.to_record() for a in answers],
        "confidence_gate": gate,
        "usage": dict(usage),
        "attempts": attempts,
    }


class UsageTotals:
    """Thread-safe sums over a session's evidence and ``model_error`` records."""

    _TOKEN_KEYS = ("prompt_tokens", "completion_tokens", "total_tokens", "cached_tokens")

    def __init__(self):
        self._lock = threading.Lock()
        self.answered = 0
        self.replayed = 0
        self.errors: dict[str, int] = {}
        self.tokens = dict.fromkeys(self._TOKEN_KEYS, 0)
        self.requests = 0
        self.calls_without_usage = 0
        self.cost_usd = 0.0  # the sum of the known costs
        self.calls_cost_unknown = 0  # calls with usage whose cost_usd is None
        self.latency_ms_total = 0.0
        self.models: dict[str, int] = {}

    def add_evidence(self, evidence: dict) -> None:
        with self._lock:
            replayed = evidence.get("backend") == "replay"
            self.answered += 1
            self.replayed += int(replayed)
            self.requests += int(evidence.get("attempts") or 0)
            self._add_usage(evidence.get("usage") or {}, count_missing=not replayed)

    def add_error(self, record: dict) -> None:
        with self._lock:
            kind = str(record.get("kind"))
            self.errors[kind] = self.errors.get(kind, 0) + 1
            self.requests += int(record.get("attempts") or 0)
            if record.get("usage"):
                self._add_usage(record["usage"], count_missing=False)

    def _add_usage(self, usage: dict, count_missing: bool) -> None:
        reported = [usage.get(k) for k in self._TOKEN_KEYS]
        if all(v is None for v in reported) and count_missing:
            self.calls_without_usage += 1
        cost = usage.get("cost_usd")
        if isinstance(cost, (int, float)) and not isinstance(cost, bool):
            self.cost_usd += cost
        else:
            self.calls_cost_unknown += 1
        for key, value in zip(self._TOKEN_KEYS, reported):
            if isinstance(value, int):
                self.tokens[key] += value
        if isinstance(usage.get("latency_ms"), (int, float)):
            self.latency_ms_total += usage["latency_ms"]
        if isinstance(usage.get("model"), str):
            self.models[usage["model"]] = self.models.get(usage["model"], 0) + 1

    def to_dict(self) -> dict:
        """The model client's totals (``usage()``, its heartbeat status); ``session.json``'s
        ``model_usage`` sums the journal's rows the same way (actors/recorder/index.py)."""
        with self._lock:
            return {
                "answered": self.answered,
                "replayed": self.replayed,
                "errors": dict(sorted(self.errors.items())),
                "http_requests": self.requests,
                **self.tokens,
                "calls_without_usage": self.calls_without_usage,
                "cost_usd": round(self.cost_usd, 9),
                "calls_cost_unknown": self.calls_cost_unknown,
                "latency_ms_total": round(self.latency_ms_total, 3),
                "models_reported": dict(sorted(self.models.items())),
            }
