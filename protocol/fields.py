"""Field checking for message bodies: the dataclass annotations are the schema.

Supported annotations: ``str``, ``int``, ``float``, ``bool``, ``bytes``, ``dict``, ``list``,
``Any``, ``X | None``, ``list[X]`` and ``dict[str, X]``. Unknown body keys are ignored, so a
newer sender may append fields (habit 4: only append, readers skip what they do not know).
"""
from __future__ import annotations

import dataclasses
import types
import typing
from typing import Any

from .errors import BadBody

_MISSING = dataclasses.MISSING


def _type_name(tp: Any) -> str:
    return getattr(tp, "__name__", None) or str(tp)


def check_value(type_name: str, field: str, tp: Any, value: Any) -> Any:
    """Return ``value`` if it fits ``tp``; raise ``BadBody`` naming the field otherwise."""
    if tp is Any:
        return value
    origin = typing.get_origin(tp)
    if origin in (typing.Union, types.UnionType):
        args = typing.get_args(tp)
        if value is None and type(None) in args:
            return None
        errors = []
        for arg in args:
            if arg is type(None):
                continue
            try:
                return check_value(type_name, field, arg, value)
            except BadBody as exc:
                errors.append(exc.problem)
        raise BadBody(type_name, field, "; ".join(errors) or "null is not allowed")
    if origin is list:
        if not isinstance(value, list):
            raise BadBody(type_name, field, f"expected a list, got {type(value).__name__}")
        (item,) = typing.get_args(tp) or (Any,)
        return [check_value(type_name, f"{field}[{i}]", item, v) for i, v in enumerate(value)]
    if origin is dict:
        if not isinstance(value, dict):
            raise BadBody(type_name, field, f"expected a map, got {type(value).__name__}")
        _, item = typing.get_args(tp) or (str, Any)
        for k, v in value.items():
            if not isinstance(k, str):
                raise BadBody(type_name, field, f"map key {k!r} is not a string")
            check_value(type_name, f"{field}.{k}", item, v)
        return value
    if tp is float:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise BadBody(type_name, field, f"expected a number, got {type(value).__name__}")
        return float(value)
    if tp is int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise BadBody(type_name, field, f"expected an integer, got {type(value).__name__}")
        return value
    if tp in (str, bool, bytes, dict, list):
        if not isinstance(value, tp) or (tp is not bool and isinstance(value, bool)):
            raise BadBody(type_name, field, f"expected {_type_name(tp)}, got {type(value).__name__}")
        return value
    raise TypeError(f"unsupported annotation {tp!r} on {type_name}.{field}")


_SCHEMAS: dict[type, tuple[tuple[str, Any, bool], ...]] = {}


def schema(cls: type) -> tuple[tuple[str, Any, bool], ...]:
    """``(field, annotation, required)`` for each field of ``cls``, resolved once per class
    (``typing.get_type_hints`` compiles string annotations: far too slow for every frame)."""
    found = _SCHEMAS.get(cls)
    if found is None:
        hints = typing.get_type_hints(cls)
        found = tuple((f.name, hints[f.name], f.default is _MISSING and f.default_factory is _MISSING)
                      for f in dataclasses.fields(cls))
        _SCHEMAS[cls] = found
    return found


def body_to_fields(cls: type, body: Any) -> dict[str, Any]:
    """Validate a decoded body map against ``cls``'s dataclass fields."""
    name = cls.TYPE
    if not isinstance(body, dict):
        raise BadBody(name, "<body>", f"expected a map, got {type(body).__name__}")
    out: dict[str, Any] = {}
    for field, hint, required in schema(cls):
        if field in body:
            out[field] = check_value(name, field, hint, body[field])
        elif required:
            raise BadBody(name, field, "missing")
    return out
