"""The model-client's replies to the policy."""

from __future__ import annotations

from .message import Message, message


@message
class ModelAnswer(Message):
    """Parsed answers with the evidence to store with the proposal that uses them."""

    TYPE = "model_answer"
    reply_to: str
    answers: list
    evidence: dict


@message
class ModelFailure(Message):
    """No usable answer; ``error`` is the ``model_error`` record (kind, message, request)."""

    TYPE = "model_failure"
    reply_to: str
    error: dict
