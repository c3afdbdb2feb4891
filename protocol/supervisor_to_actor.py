"""What the supervisor sends to an actor over its control connection."""
from __future__ import annotations

from .message import Message, message


@message
class Welcome(Message):
    """Accepts an actor's hello and hands it the session's facts and its settings."""
    TYPE = "welcome"
    actor: str
    session_id: str
    session_dir: str
    capture_root: str
    endpoints: dict[str, str]
    profile: dict
    heartbeat_s: float


@message
class Refused(Message):
    """Refuses an actor's hello; the actor exits with this reason."""
    TYPE = "refused"
    reason: str


@message
class Ping(Message):
    """The supervisor's heartbeat; an actor that hears none for three intervals exits."""
    TYPE = "ping"


@message
class StopActor(Message):
    """Asks an actor to finish its current work and exit."""
    TYPE = "stop_actor"
    reason: str
