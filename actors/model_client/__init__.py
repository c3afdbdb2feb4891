"""The model-client library: typed questions to an OpenAI-compatible model, with evidence.

Process-free: the ``model_client`` actor (``__main__.py``) wraps it. Modules, from the
outside in:

    __main__.py   the actor: the ``model`` endpoint's socket loop
    service.py    ModelService — answers ``AskModel`` on a thread pool, errors as replies
    settings.py   ModelSettings — the profile's ``model:`` with ``replay``; opens the backend
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

See ``docs/models.md`` for the profile keys and what a record does and does not prove.
"""
from .answers import ANSWER_GATE_SCOPE, Answer
from .backend import ModelAnswer, ModelBackend
from .client import ModelClient
from .config import ModelConfig
from .errors import (ERROR_KINDS, AnswerError, BudgetExhausted, ConfigError, MalformedAnswer,
                     ModelCancelled, ModelClientError, ModelConfigError, ModelError,
                     ModelHTTPStatus, ModelTimeout, ModelTransportError, OffSchemaAnswer,
                     QuestionError, RefusedAnswer, ReplayDivergence, ReplayedError,
                     SchemaDefinitionError, TruncatedAnswer)
from .evidence import UsageTotals, request_hash
from .questions import (GAMEBOY_BUTTONS, QUESTION_KINDS, ButtonsQuestion, CardRewardQuestion,
                        EventOptionQuestion, MapNodeQuestion, Question, build_questions)
from .replay import ReplayBackend

__all__ = [
    "ANSWER_GATE_SCOPE", "Answer", "ModelAnswer", "ModelBackend", "ModelClient", "ModelConfig",
    "ERROR_KINDS", "AnswerError", "BudgetExhausted", "ConfigError", "MalformedAnswer",
    "ModelCancelled", "ModelClientError", "ModelConfigError", "ModelError", "ModelHTTPStatus",
    "ModelTimeout", "ModelTransportError", "OffSchemaAnswer", "QuestionError", "RefusedAnswer",
    "ReplayDivergence", "ReplayedError", "SchemaDefinitionError", "TruncatedAnswer",
    "UsageTotals", "request_hash", "GAMEBOY_BUTTONS", "QUESTION_KINDS", "ButtonsQuestion",
    "CardRewardQuestion", "EventOptionQuestion", "MapNodeQuestion", "Question", "build_questions",
    "ReplayBackend",
]
