"""The model-client library: typed questions to an OpenAI-compatible model, with evidence.

Process-free: the ``model_client`` actor (``__main__.py``) wraps it. Modules, from the
outside in:

    __main__.py   the actor: the ``model`` endpoint's socket loop
    service.py    ModelService — answers ``AskModel`` on a thread pool, errors as replies
    settings.py   ModelSettings — the profile's ``model:`` with ``replay`` (no HTTP client)
    backends.py   open_backend — the ModelClient or ReplayBackend a ModelSettings names
    client.py     ModelClient — one call: budget, concurrency slots, retries, fallback,
                  error binding and redaction (the only place errors leave a call)
    replay.py     ReplayBackend — the same interface, answering from a capture's evidence
    backend.py    ModelBackend (the interface) and ModelAnswer (answers + evidence)
    questions.py  the typed questions (card reward, event option, map node, buttons)
    answers.py    Answer, the batch envelope schema, answer parsing and ``gated``
    evidence.py   evidence dicts, request state and hash, redaction, UsageTotals
    wire.py       chat-completions request bodies and reply parsing
    jsontext.py   tolerant extraction of JSON from free text
    schema.py     the JSON Schema subset validator
    retry.py      RetryPolicy: which statuses retry, Retry-After, backoff
    budget.py     per-session call and token budgets
    transport.py  HttpTransport — the one module that imports httpx
    config.py     ModelConfig from the profile's ``model:`` mapping
    errors.py     the exception tree (root ``ModelClientError``)

The names below are imported lazily (on first use), so that a
submodule's importer -- the supervisor's profile check reads ``settings.py`` -- loads only
what it names; ``ModelClient`` is not re-exported at all: import it from ``client.py``
(it pulls in httpx through ``transport.py``).

See ``docs/models.md`` for the profile keys and what a record does and does not prove.
"""

from __future__ import annotations

import importlib

_MODULES = {
    "answers": ("ANSWER_GATE_SCOPE", "Answer"),
    "backend": ("ModelAnswer", "ModelBackend"),
    "config": ("ModelConfig",),
    "errors": (
        "ERROR_KINDS",
        "AnswerError",
        "BudgetExhausted",
        "ConfigError",
        "MalformedAnswer",
        "ModelCancelled",
        "ModelClientError",
        "ModelConfigError",
        "ModelError",
        "ModelHTTPStatus",
        "ModelTimeout",
        "ModelTransportError",
        "OffSchemaAnswer",
        "QuestionError",
        "RefusedAnswer",
        "ReplayDivergence",
        "ReplayedError",
        "SchemaDefinitionError",
        "TruncatedAnswer",
    ),
    "evidence": ("UsageTotals", "request_hash"),
    "questions": (
        "GAMEBOY_BUTTONS",
        "QUESTION_KINDS",
        "ButtonsQuestion",
        "CardRewardQuestion",
        "EventOptionQuestion",
        "MapNodeQuestion",
        "Question",
        "build_questions",
    ),
    "replay": ("ReplayBackend",),
}
_EXPORTS = {name: module for module, names in _MODULES.items() for name in names}
__all__ = sorted(_EXPORTS)  # noqa: PLE0605 - the lazy names of _MODULES, listed once there


def __getattr__(name: str):
    if name in _EXPORTS:
        return getattr(importlib.import_module(f".{_EXPORTS[name]}", __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
