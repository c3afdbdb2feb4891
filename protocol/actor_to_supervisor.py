"""What an actor may send to the supervisor's control endpoint."""

from __future__ import annotations

from .message import Message, message


@message
class Hello(Message):
    """First message of every actor: who it is and which protocol it speaks."""

    TYPE = "hello"
    actor: str
    pid: int
    protocol_major: int
    protocol_minor: int


@message
class Heartbeat(Message):
    """Sent every heartbeat interval; three missed ones declare the actor dead."""

    TYPE = "heartbeat"
    actor: str
    counters: dict | None = None


@message
class RequestStop(Message):
    """An actor asks the supervisor to end the session (e.g. the run ended)."""

    TYPE = "request_stop"
    actor: str
    reason: str
    detail: str = ""
