"""What the policy may ask of the model-client."""

from __future__ import annotations

from .message import Message, message


@message
class AskModel(Message):
    """A typed question (``kind``) with its question items and optional PNG images."""

    TYPE = "ask_model"
    kind: str
    questions: list
    context: dict | None = None
    images: list[bytes] | None = None
    deadline_ms: int = 30000
