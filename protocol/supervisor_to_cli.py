"""The supervisor's replies to the command line."""

from __future__ import annotations

from .message import Message, message


@message
class StatusReply(Message):
    TYPE = "status_reply"
    reply_to: str
    status: dict


@message
class StopReply(Message):
    TYPE = "stop_reply"
    reply_to: str
    accepted: bool
    detail: str = ""


@message
class ControlError(Message):
    """A refused or failed control request, with a stable error code."""

    TYPE = "control_error"
    ERROR_REPLY = True
    reply_to: str
    code: str
    message: str


@message
class AttachReply(Message):
    """Welcome to a tap: its id, its read-only token, the recorder's stream endpoint, and how
    often it must be heard (any request with its token) before it is declared lost."""

    TYPE = "attach_reply"
    reply_to: str
    tap_id: str
    tap_token: str
    stream: str
    keepalive_s: float


@message
class DetachReply(Message):
    TYPE = "detach_reply"
    reply_to: str
    tap_id: str
