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
    reply_to: str
    code: str
    message: str
