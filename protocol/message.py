"""The message base class and the registry of message types.

Every message is a small frozen dataclass with two class attributes: ``TYPE`` (its wire
name) and ``VERSION`` (its type version, bumped when fields are appended). The ``message``
decorator registers it; the registry is the one listing of the protocol (no if-chains).

An error reply (a peer refusing a request, with a stable ``code`` and a ``message``) sets
``ERROR_REPLY = True``; the request client raises it as a refusal without knowing which peer's
error type it is (``actors.runtime.transport``).
"""

from __future__ import annotations

import dataclasses
from typing import Any, ClassVar, TypeVar, dataclass_transform

from .errors import UnknownMessageType
from .fields import body_to_fields

_REGISTRY: dict[str, type[Message]] = {}
_new = object.__new__
#: per message class made by ``message`` with the generated ``__init__`` alone (none of its
#: own, no ``__post_init__``, no field outside ``__init__``, no default_factory): its fields'
#: defaults, so that ``from_body`` can fill a new instance's ``__dict__`` as ``__init__`` would
_PLAIN_INIT: dict[type, dict[str, Any]] = {}
#: per message class: its field names in declared order (``dataclasses.fields`` per frame is slow)
_NAMES: dict[type, tuple[str, ...]] = {}

M = TypeVar("M", bound="Message")


@dataclasses.dataclass(frozen=True)
class Message:
    TYPE: ClassVar[str] = ""
    VERSION: ClassVar[int] = 1
    ERROR_REPLY: ClassVar[bool] = False  # True: a refusal carrying ``code`` and ``message``

    def to_body(self) -> dict[str, Any]:
        """The fields by name, in their declared order (the wire's order)."""
        names = _NAMES.get(type(self))
        if names is None:
            names = _NAMES[type(self)] = tuple(f.name for f in dataclasses.fields(self))
        return {name: getattr(self, name) for name in names}

    @classmethod
    def from_body(cls: type[M], body: Any) -> M:
        fields = body_to_fields(cls, body)
        defaults = _PLAIN_INIT.get(cls)
        if defaults is None:
            return cls(**fields)
        msg = _new(cls)  # __init__ without its frozen __setattr__ per field (see _PLAIN_INIT)
        state = msg.__dict__
        state.update(defaults)
        state.update(fields)
        return msg

    def to_item(self) -> dict[str, Any]:
        """This message as one item of a batch message: ``{"type": TYPE, "body": {...}}``."""
        return {"type": self.TYPE, "body": self.to_body()}


@dataclass_transform(frozen_default=True)
def message(cls: type[M]) -> type[M]:
    """Class decorator: make ``cls`` a frozen dataclass and register its ``TYPE``."""
    own_init = "__init__" in cls.__dict__ or hasattr(cls, "__post_init__")
    cls = dataclasses.dataclass(frozen=True)(cls)
    fields = dataclasses.fields(cls)
    if not own_init and all(f.init and f.default_factory is dataclasses.MISSING for f in fields):
        _PLAIN_INIT[cls] = {f.name: f.default for f in fields if f.default is not dataclasses.MISSING}
    if not cls.TYPE:
        raise TypeError(f"{cls.__name__} has no TYPE")
    if cls.TYPE in _REGISTRY and _REGISTRY[cls.TYPE] is not cls:
        raise TypeError(f"message type {cls.TYPE!r} registered twice")
    _REGISTRY[cls.TYPE] = cls
    return cls


def lookup(type_name: Any) -> type[Message]:
    try:
        return _REGISTRY[type_name]
    except (KeyError, TypeError):
        raise UnknownMessageType(type_name) from None


def from_item(item: dict[str, Any]) -> Message:
    """A batch item (see ``Message.to_item``) back to its message; ``ProtocolError`` if it
    names no known type or its body does not fit."""
    return lookup(item.get("type")).from_body(item.get("body"))


def registered() -> dict[str, type[Message]]:
    """All registered message types by wire name (a copy)."""
    return dict(_REGISTRY)
