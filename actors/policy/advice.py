"""Asking the model-client actor for advice, and turning advice into candidate proposals.

    advisor = Advisor.from_context(ctx, policy.settings)  # None: no model, or consult_model off
    advice = advisor.ask("card_reward", {"cards": [...], "evidence": {...}, "can_skip": True},
                         observation_id="o-000031")
    advice.ok, advice.choice, advice.confidence, advice.evidence, advice.error

    consult(policy, kind, question, heuristic, to_proposal)  -> candidate proposals

A model is *configured* when ``model.base_url`` or ``model.replay`` is set; the policy then
consults it unless ``policy.settings.consult_model`` is false. One ask is one ``AskModel``
sent once (never re-sent: a repeat could be a second paid call) and awaited until
``policy.settings.model_deadline_s`` (default ``model.timeout_s`` + 5 s) or the actor's stop.
No answer in time is a ``timeout`` (``timeout_phase: policy_deadline``); the stop is
``cancelled``. Every failure is recorded as a ``model_error`` row (``RecordEvent``, keyed by
its call id) with the request state, so a replay falls back exactly where this session did.

``consult`` applies the policy's gate (``model.confidence_gate``): an answer whose
confidence is below it is not used. Sources recorded on the proposal:

    model               the model's choice, first candidate
    heuristic           the heuristic's choice although the model answered (gated answer,
                        or the model's choice was already refused on this very state)
    heuristic_fallback  the heuristic's choice because the model gave no usable answer

Proposals made with an answer carry ``model_evidence=[evidence]`` (the library's evidence,
with its per-answer ``gated`` and ``answer_gate_scope``); every consulted proposal carries
``model_advice`` (question kind, outcome, the policy's gate, the choice and confidence, or
the error kind and call id). The policy only asks for the newest unanswered observation, so
replaying the journal after a restart never calls the model.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import time
from collections.abc import Callable
from typing import Any

import zmq

import protocol
from actors.model_client.errors import QuestionError
from actors.model_client.evidence import request_hash
from actors.model_client.questions import QUESTION_KINDS, build_questions
from actors.model_client.settings import DEFAULT_GATE
from actors.runtime.transport import RequestFailed, connect_dealer, decode_or_count
from protocol import events as ev
from protocol.model_to_policy import ModelAnswer, ModelFailure
from protocol.policy_to_model import AskModel

from .base import Proposal

log = logging.getLogger("policy.advice")
_POLL_MS = 20


@dataclasses.dataclass(frozen=True)
class Advice:
    """One ask's outcome: an answer record with its evidence, or a ``model_error`` dict."""

    kind: str
    answer: dict | None = None
    evidence: dict | None = None
    error: dict | None = None

    @property
    def ok(self) -> bool:
        return self.answer is not None

    @property
    def choice(self) -> Any:
        return (self.answer.get("answer") or {}).get(QUESTION_KINDS[self.kind].choice_field)

    @property
    def confidence(self) -> float:
        return float(self.answer.get("confidence") or 0.0)


class Advisor:
    """The policy actor's client for the ``model`` endpoint (see the module docstring)."""

    def __init__(self, ctx, *, gate: float, deadline_s: float):
        self.ctx, self.gate, self.deadline_s = ctx, gate, deadline_s
        self._sock: zmq.Socket | None = None
        self._recorder = None

    @classmethod
    def from_context(cls, ctx, settings: dict) -> Advisor | None:
        model = ctx.setting("model") or {}
        flat = {**model, **(model.get("settings") or {})}
        if flat.get("base_url") is None and flat.get("replay") is None:
            return None
        if not settings.get("consult_model", True):
            return None
        gate = flat.get("confidence_gate")
        deadline = settings.get("model_deadline_s") or float(flat.get("timeout_s") or 30) + 5
        return cls(ctx, gate=DEFAULT_GATE if gate is None else float(gate), deadline_s=float(deadline))

    def close(self) -> None:
        if self._sock is not None:
            self._sock.close(0)
            self._sock = None
        if self._recorder is not None:
            self._recorder.close()

    def ask(self, kind: str, question: dict, observation_id: str | None = None) -> Advice:
        """Ask one question; a failure is recorded as a ``model_error`` row and returned."""
        try:
            questions = build_questions(kind, [question])
        except QuestionError as exc:
            return self._failed(
                kind, {"kind": "bad_question", "message": str(exc), "request": None, "attempts": 0}, observation_id
            )
        reply = self._request(AskModel(kind=kind, questions=[question], deadline_ms=int(self.deadline_s * 1000)))
        if isinstance(reply, ModelAnswer) and reply.answers:
            return Advice(kind, answer=dict(reply.answers[0]), evidence=reply.evidence)
        if isinstance(reply, ModelFailure):
            error = dict(reply.error)
        elif self.ctx.stopping.is_set():
            error = {"kind": "cancelled", "message": "the policy is stopping"}
        else:
            error = {
                "kind": "timeout",
                "timeout_phase": "policy_deadline",
                "message": f"no answer from the model_client within {self.deadline_s:g}s",
            }
        error.setdefault("backend", "policy")
        error.setdefault("attempts", 0)
        if error.get("request") is None:  # what was asked, stated only when it failed
            states = [q.state() for q in questions]
            error["request"] = {"question_kind": kind, "questions": states, "request_hash": request_hash(kind, states)}
        return self._failed(kind, error, observation_id)

    # -- the model endpoint -------------------------------------------------------------------

    def _request(self, ask: AskModel):
        """Send once; the reply to it, or None at the deadline or the stop."""
        if self._sock is None:
            self._sock = connect_dealer(self.ctx.zctx, self.ctx.endpoints["model"])
        env = protocol.wrap(ask, session=self.ctx.session_id, sender=self.ctx.name)
        self._sock.send(protocol.encode(env))
        end = time.monotonic() + self.deadline_s
        while not self.ctx.stopping.is_set() and time.monotonic() < end:
            if not self._sock.poll(_POLL_MS):
                continue
            got = decode_or_count(self._sock.recv(), self.ctx.counters, "model")
            if got is not None and getattr(got.body, "reply_to", None) == env.id:
                return got.body
        return None  # a late reply is discarded by reply_to on the next ask

    # -- recording a failure ------------------------------------------------------------------

    def _failed(self, kind: str, error: dict, observation_id: str | None) -> Advice:
        fields = {**error, "question_kind": kind, "observation_id": observation_id}
        key = f"model_error-{error.get('call_id') or protocol.new_id()}"
        if self._recorder is None:
            self._recorder = self.ctx.recorder()
        try:
            self._recorder.record(ev.ModelError.from_fields(fields), key)
        except RequestFailed as exc:
            log.error("model_error not recorded: %s", exc)
        log.info("model_error %s on %s: %s", error.get("kind"), kind, error.get("message"))
        return Advice(kind, error=error)


def consult(
    policy, kind: str, question: dict, heuristic: list[Proposal], to_proposal: Callable[[Any], Proposal | None]
) -> list[Proposal]:
    """Candidates for a consulted decision: the model's choice first when it is usable."""
    advisor: Advisor | None = getattr(policy, "advisor", None)
    if advisor is None:
        return heuristic
    obs = getattr(policy, "deciding", None)
    advice = advisor.ask(kind, question, getattr(obs, "observation_id", None))
    info: dict = {"question_kind": kind, "policy_gate": advisor.gate}
    if not advice.ok:
        info.update(outcome="error", error_kind=advice.error.get("kind"), call_id=advice.error.get("call_id"))
        return _mark(heuristic, "heuristic_fallback", None, info)
    evidence = [advice.evidence]
    info.update(choice=advice.choice, confidence=advice.confidence, call_id=advice.evidence.get("call_id"))
    if advice.confidence < advisor.gate:
        return _mark(heuristic, "heuristic", evidence, {**info, "outcome": "gated"})
    chosen = to_proposal(advice.choice)
    if chosen is None:
        return _mark(heuristic, "heuristic", evidence, {**info, "outcome": "not_applicable"})
    rest = [p for p in heuristic if _key(p) != _key(chosen)]
    return _mark([chosen], "model", evidence, {**info, "outcome": "used"}) + _mark(
        rest, "heuristic", evidence, {**info, "outcome": "model_choice_refused_here"}
    )


def _mark(candidates: list[Proposal], source: str, evidence: list | None, info: dict) -> list[Proposal]:
    for p in candidates:
        p.source = source
        p.model_evidence = evidence
        p.extra["model_advice"] = dict(info)
    return candidates


def _key(p: Proposal) -> str:
    return json.dumps([p.action, p.parameters], sort_keys=True)


__all__ = ["Advice", "Advisor", "consult"]
