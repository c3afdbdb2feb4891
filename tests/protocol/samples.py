"""Deterministic sample instances of every registered message type (for golden vectors)."""

from __future__ import annotations

import dataclasses
import types
import typing
from typing import Any

import protocol
from protocol.message import registered


def sample_value(tp: Any) -> Any:
    origin = typing.get_origin(tp)
    if origin in (typing.Union, types.UnionType):
        return sample_value(next(a for a in typing.get_args(tp) if a is not type(None)))
    if origin is list:
        return [sample_value((typing.get_args(tp) or (str,))[0])]
    if origin is dict:
        return {"k": sample_value((typing.get_args(tp) or (str, int))[1])}
    return {str: "x", int: 7, float: 1.5, bool: True, bytes: b"\x00\x01", dict: {"k": 1}, list: [1, "a"]}.get(tp, "any")


def sample(cls):
    hints = typing.get_type_hints(cls)
    return cls(**{f.name: sample_value(hints[f.name]) for f in dataclasses.fields(cls)})


def golden_frame(cls) -> bytes:
    env = protocol.wrap(
        sample(cls),
        session="20261129T000000Z-0",
        sender="golden",
        msg_id="00000000000000000000000000000001",
        sent_at=1.25,
    )
    return protocol.encode(env)


def all_types() -> dict:
    return dict(sorted(registered().items()))
