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


@message
class AttachRequest(Message):
    """A tap asks to join the session (needs the session token); ``transport`` is ``ipc``
    or ``tcp`` and picks which stream endpoint the reply names."""

    TYPE = "attach_request"
    token: str
    name: str
    pid: int = 0
    transport: str = "ipc"


@message
class DetachRequest(Message):
    """A tap leaves; ``token`` is the tap token from ``attach_reply``."""

    TYPE = "detach_request"
    token: str
    reason: str = "detach"
