"""``ModelClient``: asks typed questions of an OpenAI-compatible chat-completions server.

    client = ModelClient(ModelConfig.from_mapping(profile["model"]), stop_event=ctx.stopping)
    try:
        result = client.ask([CardRewardQuestion(cards=..., evidence=...)])
        result.answer.choice, result.answer.confidence, result.answer.gated, result.evidence
    except ModelError as err:
        err.to_record()            # the model_error dict to journal; fall back to a heuristic
    client.usage()                 # totals for session.json
    client.close()

One call, in order: check the batch (``QuestionError`` for a caller's mistake), check vision,
read the key from the environment, reserve the budget (``BudgetExhausted``: nothing sent),
then send — holding one of ``max_concurrent`` slots per request — retrying 429/5xx per
``RetryPolicy``. In ``structured: auto`` an error answer (any 4xx or 5xx: a LiteLLM proxy
answers 500) whose text mentions ``response_format`` or ``json_schema`` switches this client
to text parsing for the rest of the session and the call is re-sent at once (not counted as
a retry; the rejection is recorded in the request parameters as
``response_format_rejected``). In ``structured: json_schema`` the same answer ends the call
at once: re-sending a request the server refuses by its shape cannot succeed. The answer is
then interpreted (``wire.interpret``). Before that, the reported usage is priced with
``model.price`` (``price.cost_fields``: ``cost_usd``, ``cost_unknown``, ``price``) and
charged to the token and money budgets: an answer that cannot be used was paid for all the
same, and its ``model_error`` record carries that usage.

``ask`` is thread-safe and the one place where errors leave a call: every ``ModelError`` is
bound to its request state and attempt count, redacted of the key, and counted in the usage
totals before it propagates. Waits between retries end early, with ``ModelCancelled``, when
``close()`` is called or the caller's ``stop_event`` is set. So does the wait for a request
already on the wire: each request runs on its own daemon thread, and an abandoned one ends
within ``timeout_s`` with its answer discarded (the server may still bill it).
"""

from __future__ import annotations

import dataclasses
import threading
import time
from collections.abc import Mapping, Sequence
from concurrent.futures import Future
from concurrent.futures import TimeoutError as FutureTimeout

from .answers import check_batch, envelope_schema
from .backend import ModelAnswer
from .budget import Budget
from .config import ModelConfig
from .errors import MalformedAnswer, ModelCancelled, ModelConfigError, ModelError, ModelHTTPStatus
from .evidence import UsageTotals, new_call_id, redact, request_state, success_evidence
from .price import cost_fields, priced_cached_as_input
from .questions import Question
from .retry import RetryPolicy
from .transport import HttpReply, HttpTransport, Transport
from .wire import Completion, build_body, interpret, parse_completion, request_parameters

_POLL_S = 0.05  # how often a wait re-checks an external stop event


@dataclasses.dataclass
class _Call:
    """The mutable state of one ``ask``."""

    questions: tuple[Question, ...]
    kind: str
    schema: dict
    structured: bool
    started: float
    call_id: str = dataclasses.field(default_factory=new_call_id)
    attempts: int = 0
    failures: int = 0
    usage: dict | None = None
    rejected: dict | None = None  # the server's refusal of response_format, when it fell back


class ModelClient:
    """The HTTP ``ModelBackend``. See the module docstring for the life of one call."""

    def __init__(
        self,
        config: ModelConfig,
        *,
        stop_event: threading.Event | None = None,
        environ: Mapping[str, str] | None = None,
        transport: Transport | None = None,
    ):
        self.config = config
        self._environ = environ
        self._external_stop = stop_event
        self._closed = threading.Event()
        self._transport = transport or HttpTransport(config.timeout_s, config.max_concurrent)
        self._slots = threading.BoundedSemaphore(config.max_concurrent)
        self._retry = RetryPolicy.from_config(config)
        self._budget = Budget(config.budget_calls, config.budget_tokens, config.budget_usd)
        self._totals = UsageTotals()
        self._structured_supported = True

    def __repr__(self) -> str:
        return (
            f"ModelClient(model={self.config.model!r}, base_url={self.config.base_url!r}, "
            f"api_key_env={self.config.api_key_env!r})"
        )

    def __enter__(self) -> ModelClient:
        return self

    def __exit__(self, *exc_info) -> None:
        self.close()

    @property
    def structured_supported(self) -> bool:
        """False once the server rejected ``response_format`` (``structured: auto``)."""
        return self._structured_supported

    def ask(self, questions: Question | Sequence[Question]) -> ModelAnswer:
        """Ask one question or a batch of one kind; ``ModelError`` when no usable answer."""
        batch = (questions,) if isinstance(questions, Question) else tuple(questions)
        kind = check_batch(batch)
        call = _Call(batch, kind, envelope_schema(batch), self._use_structured(), time.monotonic())
        secret = None
        try:
            self._check_open("before the call")
            self._check_vision(call)
            secret = self.config.read_api_key(self._environ)
            self._budget.reserve()
            return self._answer(call, secret)
        except ModelError as err:
            err.bind(
                request=self._request(call),
                attempts=call.attempts,
                usage=call.usage,
                call_id=call.call_id,
                secret=secret,
            )
            if call.usage is not None and priced_cached_as_input(call.usage):
                err.details["cached_priced_as_input"] = True
            self._totals.add_error(redact(err.to_record(), secret))
            raise

    def usage(self) -> dict:
        """Usage totals and budget state, for the session summary."""
        return {**self._totals.to_dict(), "budget": self._budget.to_dict()}

    def close(self) -> None:
        """Stop: calls in progress end with ``ModelCancelled``; no new request is sent."""
        self._closed.set()
        self._transport.close()

    # -- one call -----------------------------------------------------------------------------

    def _answer(self, call: _Call, secret: str | None) -> ModelAnswer:
        completion, latency_ms = self._exchange(call, secret)
        call.usage = {
            **completion.usage,
            "latency_ms": latency_ms,
            "wall_ms": round((time.monotonic() - call.started) * 1000, 3),
            **cost_fields(completion.usage, self.config.price),
        }
        self._budget.charge_tokens(completion.billed_tokens())
        self._budget.charge_usd(call.usage["cost_usd"])
        answers = interpret(completion, call.questions, self.config.confidence_gate, self.config.max_output_tokens)
        evidence = success_evidence(
            self._request(call),
            answers,
            call.usage,
            gate=self.config.confidence_gate,
            attempts=call.attempts,
            call_id=call.call_id,
        )
        if priced_cached_as_input(call.usage):
            evidence["cached_priced_as_input"] = True
        evidence = redact(evidence, secret)
        self._totals.add_evidence(evidence)
        return ModelAnswer(tuple(answers), evidence)

    def _exchange(self, call: _Call, secret: str | None) -> tuple[Completion, float]:
        """Send until a 2xx reply (or give up); the completion and its request's latency."""
        headers = {"Authorization": f"Bearer {secret}"} if secret else {}
        while True:
            body = build_body(self.config, call.questions, call.schema, call.structured)
            reply, latency_ms = self._send(call, body, headers)
            if 200 <= reply.status < 300:
                if reply.json is None:
                    raise MalformedAnswer("the reply body is not JSON", reply.text[:80])
                return parse_completion(reply.json), latency_ms
            if call.structured and _rejects_response_format(reply):
                if self.config.structured != "auto":
                    raise ModelHTTPStatus(
                        reply.status,
                        _error_detail(reply),
                        "the server refuses response_format; model.structured json_schema never falls back",
                    )
                self._structured_supported = False
                call.structured = False
                call.rejected = {"http_status": reply.status, "message": _error_detail(reply)[:200]}
                continue
            call.failures += 1
            decision = self._retry.decide(reply.status, call.failures, reply.retry_after)
            if decision.wait_s is None:
                why = decision.why if self._retry.retryable(reply.status) else ""
                raise ModelHTTPStatus(reply.status, _error_detail(reply), why)
            if self._wait(decision.wait_s):
                raise ModelCancelled("waiting to retry")

    def _send(self, call: _Call, body: dict, headers: dict) -> tuple[HttpReply, float]:
        """One request on its own daemon thread, holding a concurrency slot until it ends.

        The caller waits for it but gives up at once when stopping (``ModelCancelled``); an
        abandoned request keeps its slot until it finishes (bounded by ``timeout_s``).
        """
        while not self._slots.acquire(timeout=_POLL_S):
            self._check_open("waiting for a concurrency slot")
        if self._stopping():
            self._slots.release()
            raise ModelCancelled("before a request")
        call.attempts += 1
        future: Future = Future()
        threading.Thread(target=self._post, args=(future, body, headers), daemon=True, name="model-request").start()
        while True:
            try:
                return future.result(timeout=_POLL_S)
            except FutureTimeout:
                if self._stopping():
                    raise ModelCancelled("a request was in flight; its answer, if any, is discarded") from None

    def _post(self, future: Future, body: dict, headers: dict) -> None:
        sent = time.monotonic()
        try:
            reply = self._transport.post_json(self.config.chat_url(), body, headers)
            future.set_result((reply, round((time.monotonic() - sent) * 1000, 3)))
        except BaseException as exc:  # noqa: BLE001 - handed to the waiting caller, never lost
            future.set_exception(exc)
        finally:
            self._slots.release()

    # -- helpers ------------------------------------------------------------------------------

    def _use_structured(self) -> bool:
        if self.config.structured == "off":
            return False
        return self.config.structured == "json_schema" or self._structured_supported

    def _request(self, call: _Call) -> dict:
        parameters = request_parameters(self.config, call.structured)
        if call.rejected is not None:
            parameters["response_format_rejected"] = call.rejected
        return request_state(self.config, call.kind, [q.state() for q in call.questions], parameters)

    def _check_vision(self, call: _Call) -> None:
        if not self.config.vision and any(q.images() for q in call.questions):
            raise ModelConfigError(
                f"{call.kind} questions send a screenshot but model.vision "
                "is false; set it true for a vision-capable model"
            )

    def _stopping(self) -> bool:
        return self._closed.is_set() or bool(self._external_stop and self._external_stop.is_set())

    def _check_open(self, where: str) -> None:
        if self._stopping():
            raise ModelCancelled(where)

    def _wait(self, seconds: float) -> bool:
        """Sleep ``seconds`` unless stopping; True if asked to stop."""
        deadline = time.monotonic() + seconds
        while not self._stopping():
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return False
            self._closed.wait(min(remaining, _POLL_S))
        return True


def _rejects_response_format(reply: HttpReply) -> bool:
    """An error answer that names the structured-output parameter: whatever its status
    (OpenAI-style servers send 400 or 422; a LiteLLM proxy relays its backend's refusal as
    a 500), retrying the same body cannot succeed."""
    text = reply.text.lower()
    return reply.status >= 400 and ("response_format" in text or "json_schema" in text)


def _error_detail(reply: HttpReply) -> str:
    """The server's own error message when it sent one, else the start of the body."""
    body = reply.json
    if isinstance(body, dict):
        error = body.get("error")
        if isinstance(error, dict) and isinstance(error.get("message"), str):
            return error["message"][:300]
        if isinstance(error, str):
            return error[:300]
    return reply.text[:300]
