"""What the command line (status, stop, attach) sends to a running supervisor."""
from __future__ import annotations

from .message import Message, message


@message
class StatusRequest(Message):
    TYPE = "status_request"
    token: str


@message
class StopRequest(Message):
    TYPE = "stop_request"
    token: str
    reason: str = "stop_command"
