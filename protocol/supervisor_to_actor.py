"""What the supervisor sends to an actor over its control connection."""

from __future__ import annotations

import dataclasses
from typing import Any

from .message import Message, message


@dataclasses.dataclass(frozen=True)
class SessionInfo:
    """The facts of a session that every actor is told in its ``welcome``, declared once:
    ``Welcome`` carries them after ``actor``, ``actors.runtime.actor.ActorContext`` inherits
    them, and the supervisor's ``Control`` is given them to welcome each actor with."""

    session_id: str
    session_dir: str
    capture_root: str
    endpoints: dict[str, str]  # endpoint name -> address ("control", "recorder", ...)
    profile: dict  # the resolved profile
    heartbeat_s: float

    def session_fields(self) -> dict[str, Any]:
        """These facts by field name (keyword arguments for ``SessionInfo`` or a subclass)."""
        return {f.name: getattr(self, f.name) for f in dataclasses.fields(SessionInfo)}


@dataclasses.dataclass(frozen=True)
class _ToActor:
    """``actor`` as a base class: it comes before the inherited facts in ``Welcome``'s fields,
    which are its wire order."""

    actor: str


@message
class Welcome(Message, SessionInfo, _ToActor):
    """Accepts an actor's hello and hands it the session's facts and its settings: ``actor``
    then the ``SessionInfo`` fields."""

    TYPE = "welcome"

    @classmethod
    def to(cls, actor: str, info: SessionInfo) -> Welcome:
        """The welcome for ``actor`` in the session ``info`` describes."""
        return cls(actor=actor, **info.session_fields())


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
