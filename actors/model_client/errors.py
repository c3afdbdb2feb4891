"""Every error the model-client library raises, under one root.

::

    ModelClientError                  root: ``except ModelClientError`` catches all of them
    ├── ConfigError                   a bad ``model:`` profile mapping (names key and problem)
    ├── QuestionError                 a question built wrongly by the caller (a programming error)
    ├── SchemaDefinitionError         an answer schema using a keyword the validator lacks
    └── ModelError                    a model call that produced no usable answer;
        │                             ``to_record()`` gives the ``model_error`` dict
        ├── ModelConfigError          kind "config": key env var unset, vision off, ...
        ├── ModelTimeout              kind "timeout": connect/read/write/pool/body timeout
        ├── ModelTransportError       kind "transport": refused, reset, protocol violation
        ├── ModelHTTPStatus           kind "http_status": 4xx, or 429/5xx after the retries
        ├── BudgetExhausted           kind "budget_exhausted": no call was made
        ├── ModelCancelled            kind "cancelled": the stop event was set
        ├── ReplayDivergence          kind "divergence": the replayed capture never asked this
        ├── ReplayedError             the recorded kind: the capture's call failed this way
        └── AnswerError               the server answered, the answer is unusable
            ├── MalformedAnswer       kind "malformed": no JSON / not chat-completions shape
            ├── RefusedAnswer         kind "refused": the ``refusal`` field was set
            ├── TruncatedAnswer       kind "truncated": ``finish_reason == "length"``
            └── OffSchemaAnswer       kind "off_schema": JSON that breaks the answer schema

Constructors take the offending values and build the message. A ``ModelError`` learns the
request it concerns, the attempt count and (for answer errors) the reported usage from the
client, at the one place where errors leave a call (``ModelClient.ask``). Messages are
redacted there as well: the API key never survives into ``str(error)`` or ``to_record()``.

The ``kind`` strings are a stable, append-only vocabulary recorded in captures.
"""

from __future__ import annotations

from typing import Any

#: Every ``model_error.kind`` the library can record (append-only).
ERROR_KINDS = (
    "timeout",
    "http_status",
    "transport",
    "malformed",
    "refused",
    "truncated",
    "off_schema",
    "budget_exhausted",
    "divergence",
    "cancelled",
    "config",
)


#: kinds of a reply that came but could not be used: the model answered, and asking again
#: with the reason may mend it (the agent policies do; a reachable model is not "unreachable")
ANSWERED_KINDS = frozenset({"off_schema", "malformed", "truncated", "refused"})
_MIN_PARTIAL = 12  # a cut-off copy of the key this long or longer is redacted too


def redact(value: Any, secret: str | None) -> Any:
    """``value`` with the key replaced in every string (or dict key) inside it.

    Also replaced: a *truncated* copy — any run of at least 12 characters that matches the
    start of the key — since messages cut long texts and a key may straddle the cut.
    """
    if not secret:
        return value
    if isinstance(value, str):
        return _redact_text(value, secret)
    if isinstance(value, dict):
        return {redact(k, secret): redact(v, secret) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [redact(v, secret) for v in value]
    return value


def _redact_text(text: str, secret: str) -> str:
    head = secret[:_MIN_PARTIAL]
    out, start = [], 0
    while (found := text.find(head, start)) != -1:
        end = found + len(head)
        while end < len(text) and end - found < len(secret) and text[end] == secret[end - found]:
            end += 1
        out.append(text[start:found] + "[REDACTED]")
        start = end
    out.append(text[start:])
    return "".join(out)


class ModelClientError(Exception):
    """Root of every error raised by ``actors.model_client``."""


class ConfigError(ModelClientError):
    """A ``model:`` profile value is missing, unknown or out of range."""

    def __init__(self, key: str, problem: str):
        self.key = key
        self.problem = problem
        super().__init__(f"model.{key}: {problem}")


class QuestionError(ModelClientError, ValueError):
    """A question (or a batch of questions) that cannot be asked as built."""


class SchemaDefinitionError(ModelClientError):
    """An answer schema uses a JSON Schema keyword this library does not implement."""

    def __init__(self, keyword: str, path: str):
        self.keyword = keyword
        self.path = path
        super().__init__(f"unsupported JSON Schema keyword {keyword!r} at {path}")


class ModelError(ModelClientError):
    """A model call that produced no usable answer.

    ``kind`` is one of ``ERROR_KINDS``. ``request`` is the request state (the same dict a
    successful call records), ``attempts`` the number of HTTP requests sent, ``usage`` the
    usage the server reported when it did answer (answer errors only).
    """

    kind = "model_error"

    def __init__(self, message: str, **details: Any):
        self.message = message
        self.details = details
        self.request: dict | None = None
        self.attempts = 0
        self.usage: dict | None = None
        self.backend = "http"
        self.call_id: str | None = None
        super().__init__(message)

    def bind(
        self,
        *,
        request: dict | None,
        attempts: int,
        usage: dict | None = None,
        backend: str = "http",
        call_id: str | None = None,
        secret: str | None = None,
    ) -> ModelError:
        """Attach the call's context and redact ``secret`` from the message. Returns self."""
        self.request = request
        self.attempts = attempts
        self.usage = usage
        self.backend = backend
        self.call_id = call_id
        if secret:
            self.message = redact(self.message, secret)
            self.details = redact(self.details, secret)
            self.args = (self.message,)
        return self

    def to_record(self) -> dict:
        """The ``model_error`` dict stored in the journal (JSON-serializable)."""
        record = {
            "kind": self.kind,
            "call_id": self.call_id,
            "message": self.message,
            "backend": self.backend,
            "request": self.request,
            "attempts": self.attempts,
        }
        record.update(self.details)
        if self.usage is not None:
            record["usage"] = self.usage
        return record


class ModelConfigError(ModelError):
    kind = "config"


class ModelTimeout(ModelError):
    kind = "timeout"

    def __init__(self, phase: str, timeout_s: float):
        super().__init__(f"model request timed out ({phase}) after {timeout_s:g}s", timeout_phase=phase)


class ModelTransportError(ModelError):
    kind = "transport"

    def __init__(self, error_type: str, detail: str):
        super().__init__(f"model request failed: {error_type}: {detail}", transport_error=error_type)


class ModelHTTPStatus(ModelError):
    kind = "http_status"

    def __init__(self, status: int, detail: str, why: str = ""):
        text = f"model server answered HTTP {status}"
        if why:
            text += f" ({why})"
        if detail:
            text += f": {detail}"
        super().__init__(text, http_status=status)
        self.status = status


class BudgetExhausted(ModelError):
    kind = "budget_exhausted"

    def __init__(self, resource: str, used: float, limit: float):
        super().__init__(
            f"session model budget exhausted: {resource} used {used} of {limit}; no call was made",
            budget=resource,
            used=used,
            limit=limit,
        )


class ModelCancelled(ModelError):
    kind = "cancelled"

    def __init__(self, where: str):
        super().__init__(f"model call cancelled ({where}): the client is stopping")


class ReplayDivergence(ModelError):
    kind = "divergence"

    def __init__(self, question_kind: str, request_hash: str, why: str):
        super().__init__(
            f"replay divergence for {question_kind} question {request_hash[:12]}: {why}", request_hash=request_hash
        )


class ReplayedError(ModelError):
    """A failure recorded in the replayed capture, raised again with its recorded kind."""

    def __init__(self, record: dict):
        super().__init__(f"replayed model_error: {record.get('message', '')}", replay_of=record.get("call_id"))
        kind = record.get("kind")
        self.kind = kind if isinstance(kind, str) and kind else "model_error"


class AnswerError(ModelError):
    """The server answered, but the answer cannot be used."""


class MalformedAnswer(AnswerError):
    kind = "malformed"

    def __init__(self, problem: str, excerpt: str = ""):
        text = f"malformed model answer: {problem}"
        if excerpt:
            text += f"; answer began {excerpt!r}"
        super().__init__(text)


class RefusedAnswer(AnswerError):
    kind = "refused"

    def __init__(self, refusal: str):
        super().__init__(f"model refused to answer: {refusal[:300]!r}")


class TruncatedAnswer(AnswerError):
    kind = "truncated"

    def __init__(self, max_tokens: int | None):
        super().__init__(f"model answer truncated (finish_reason 'length', max_tokens {max_tokens})")


class OffSchemaAnswer(AnswerError):
    kind = "off_schema"

    def __init__(self, problems: list[str]):
        shown = "; ".join(problems[:5])
        more = f" (+{len(problems) - 5} more)" if len(problems) > 5 else ""
        super().__init__(f"model answer does not match the schema: {shown}{more}", schema_problems=problems[:20])
