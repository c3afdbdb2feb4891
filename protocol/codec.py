"""The one ``encode`` and the one strict ``decode``; nothing else touches msgpack.

Wire format of one frame (a msgpack array, in this order)::

    ["gamerig", major, minor, type, type_version, id, session, sender, sent_at, body]

``decode`` rejects: frames over ``MAX_FRAME_BYTES``, bytes that are not exactly one msgpack
value (trailing bytes included), an envelope of the wrong shape, another major version, an
unknown type, and a body whose fields are missing or ill-typed. It raises ``ProtocolError``
subclasses only.
"""

from __future__ import annotations

import dataclasses
import time
import uuid
from typing import Any

import msgpack

from .errors import BadEnvelope, FrameTooLarge, NotMsgpack, ProtocolError, VersionMismatch
from .message import Message, lookup

MAGIC = "gamerig"
PROTOCOL_MAJOR = 1
PROTOCOL_MINOR = 0
MAX_FRAME_BYTES = 16 * 1024 * 1024
_new = object.__new__


@dataclasses.dataclass(frozen=True)
class Envelope:
    """One frame. ``wrap`` and ``decode`` fill a new instance's ``__dict__`` as its generated
    ``__init__`` would, without the frozen per-field ``__setattr__`` (a third of a small
    frame's decoding): keep it a plain frozen dataclass, no ``__post_init__``, no
    ``__slots__``, and any field added here added to both."""

    type: str
    type_version: int
    id: str
    session: str
    sender: str
    sent_at: float
    body: Message
    major: int = PROTOCOL_MAJOR
    minor: int = PROTOCOL_MINOR


def new_id() -> str:
    return uuid.uuid4().hex


def wrap(
    body: Message, *, session: str, sender: str, msg_id: str | None = None, sent_at: float | None = None
) -> Envelope:
    """Put a message in an envelope with a fresh id and the current time."""
    env = _new(Envelope)  # as in decode: Envelope's __init__ minus its frozen __setattr__ calls
    env.__dict__.update(
        type=body.TYPE,
        type_version=body.VERSION,
        id=msg_id or new_id(),
        session=session,
        sender=sender,
        sent_at=time.time() if sent_at is None else sent_at,
        body=body,
        major=PROTOCOL_MAJOR,
        minor=PROTOCOL_MINOR,
    )
    return env


def encode(env: Envelope) -> bytes:
    frame = [
        MAGIC,
        env.major,
        env.minor,
        env.type,
        env.type_version,
        env.id,
        env.session,
        env.sender,
        float(env.sent_at),
        env.body.to_body(),
    ]
    data = msgpack.packb(frame, use_bin_type=True)
    if len(data) > MAX_FRAME_BYTES:
        raise FrameTooLarge(len(data), MAX_FRAME_BYTES)
    return data


def _field(frame: list[Any], index: int, name: str, kind: type | tuple[type, ...]) -> Any:
    value = frame[index]
    if not isinstance(value, kind) or isinstance(value, bool):
        raise BadEnvelope(f"{name} (position {index}) has type {type(value).__name__}")
    return value


def _checked_head(frame: list[Any]) -> tuple[int, int, str, int, str, str, str, float]:
    """The envelope's fields after the magic, checked in wire order: the first wrong one is
    the one named (``decode`` comes here when its one-line check finds anything unusual)."""
    if frame[0] != MAGIC:
        raise BadEnvelope(f"magic is {frame[0]!r}, expected {MAGIC!r}")
    major = _field(frame, 1, "major version", int)
    minor = _field(frame, 2, "minor version", int)
    if major != PROTOCOL_MAJOR:
        raise VersionMismatch(major, PROTOCOL_MAJOR)
    return (
        major,
        minor,
        _field(frame, 3, "type", str),
        _field(frame, 4, "type version", int),
        _field(frame, 5, "id", str),
        _field(frame, 6, "session", str),
        _field(frame, 7, "sender", str),
        float(_field(frame, 8, "sent_at", (int, float))),
    )


def decode(data: bytes) -> Envelope:
    if type(data) is not bytes and not isinstance(data, (bytes, bytearray, memoryview)):
        raise NotMsgpack(f"expected bytes, got {type(data).__name__}")
    if len(data) > MAX_FRAME_BYTES:
        raise FrameTooLarge(len(data), MAX_FRAME_BYTES)
    try:
        frame = msgpack.unpackb(data if type(data) is bytes else bytes(data), raw=False, strict_map_key=True)
    except msgpack.ExtraData:
        raise NotMsgpack("trailing bytes after the first value") from None
    except (ValueError, TypeError, msgpack.UnpackException) as exc:
        raise NotMsgpack(str(exc) or type(exc).__name__) from None
    if not isinstance(frame, list) or len(frame) != 10:
        raise BadEnvelope("expected an array of 10 items")
    magic, major, minor, type_name, type_version, msg_id, session, sender, sent_at, body = frame
    if not (
        magic == MAGIC
        and type(major) is int
        and major == PROTOCOL_MAJOR
        and type(minor) is int
        and type(type_name) is str
        and type(type_version) is int
        and type(msg_id) is str
        and type(session) is str
        and type(sender) is str
        and type(sent_at) is float
    ):
        major, minor, type_name, type_version, msg_id, session, sender, sent_at = _checked_head(frame)
    env = _new(Envelope)  # Envelope's own __init__ minus nine frozen __setattr__ calls
    env.__dict__.update(
        type=type_name,
        type_version=type_version,
        id=msg_id,
        session=session,
        sender=sender,
        sent_at=sent_at,
        body=lookup(type_name).from_body(body),
        major=major,
        minor=minor,
    )
    return env


__all__ = [
    "Envelope",
    "ProtocolError",
    "decode",
    "encode",
    "new_id",
    "wrap",
    "PROTOCOL_MAJOR",
    "PROTOCOL_MINOR",
    "MAX_FRAME_BYTES",
]
