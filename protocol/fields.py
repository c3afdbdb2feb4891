"""Field checking for message bodies: the dataclass annotations are the schema.

Supported annotations: ``str``, ``int``, ``float``, ``bool``, ``bytes``, ``dict``, ``list``,
``Any``, ``X | None``, ``list[X]`` and ``dict[str, X]``. Unknown body keys are ignored, so a
newer sender may append fields (habit 4: only append, readers skip what they do not know).

Every frame's body is checked, so the checks are compiled once per annotation (``compiled``):
a value whose exact type the annotation accepts as it is passes by one set lookup, and a
``list[X]``, ``dict[str, X]`` or ``float`` goes through a small closure. Whatever the
compiled check does not pass goes the long way (``_check_value``, the checks as written
before compiling, the one place that words refusals): a refused value gets the same
``BadBody`` either way, and a value the fast path is unsure of (a subclass, an ``X | Y``)
gets the long way's answer.
"""

from __future__ import annotations

import dataclasses
import types
import typing
from collections.abc import Callable
from typing import Any

from .errors import BadBody

_MISSING = dataclasses.MISSING
_ABSENT = object()

#: what a compiled check's ``convert`` returns for a value it will not pass: ``check_value``
#: then decides (and words the refusal, if it is one)
UNSURE = object()

#: a compiled check: the exact types that fit as they are (None: any value), and the closure
#: for the rest (None: there is none), which returns the checked value or ``UNSURE``
Check = tuple[frozenset[type] | None, Callable[[Any], Any] | None]

_PLAIN = (str, int, bool, bytes, dict, list)
_NONE = frozenset((type(None),))
_STR = frozenset((str,))
_COMPILED: dict[Any, Check] = {}


def _type_name(tp: Any) -> str:
    return getattr(tp, "__name__", None) or str(tp)


def check_value(type_name: str, field: str, tp: Any, value: Any) -> Any:
    """Return ``value`` if it fits ``tp``; raise ``BadBody`` naming the field otherwise."""
    accept, convert = compiled(tp)
    if accept is None or type(value) in accept:
        return value
    if convert is not None:
        got = convert(value)
        if got is not UNSURE:
            return got
    return _check_value(type_name, field, tp, value)


def compiled(tp: Any) -> Check:
    """The compiled check of annotation ``tp`` (see ``Check``), built once per annotation."""
    try:
        return _COMPILED[tp]
    except KeyError:
        pass
    except TypeError:  # an unhashable annotation: check_value decides every value
        return frozenset(), None
    found = _COMPILED[tp] = _compile(tp)
    return found


def _compile(tp: Any) -> Check:
    if tp is Any:
        return None, None
    if any(tp is plain for plain in _PLAIN):
        return frozenset((tp,)), None
    if tp is float:
        return frozenset((float,)), _int_to_float
    origin, args = typing.get_origin(tp), typing.get_args(tp)
    if origin in (typing.Union, types.UnionType):
        rest = [arg for arg in args if arg is not type(None)]
        if len(rest) != 1 or len(rest) == len(args):
            return frozenset(), None  # X | Y: check_value tries each in turn
        accept, convert = compiled(rest[0])
        return (None if accept is None else accept | _NONE), convert
    if origin is list:
        (item,) = args or (Any,)
        return frozenset(), _list_of(*compiled(item))
    if origin is dict:
        _, item = args or (str, Any)
        return frozenset(), _map_of(*compiled(item))
    return frozenset(), None  # unsupported: check_value raises its TypeError


def _int_to_float(value: Any) -> Any:
    return float(value) if type(value) is int else UNSURE


def _list_of(accept: frozenset[type] | None, convert: Callable[[Any], Any] | None) -> Callable[[Any], Any]:
    """``list[X]``: a new list of the checked items, as ``check_value`` returns."""

    def check_list(value: Any) -> Any:
        if type(value) is not list:
            return UNSURE
        if accept is None or accept.issuperset(map(type, value)):
            return list(value)
        if convert is None:
            return UNSURE
        out = []
        for item in value:
            if type(item) not in accept:
                item = convert(item)
                if item is UNSURE:
                    return UNSURE
            out.append(item)
        return out

    return check_list


def _map_of(accept: frozenset[type] | None, convert: Callable[[Any], Any] | None) -> Callable[[Any], Any]:
    """``dict[str, X]``: the map itself, as ``check_value`` returns (values unconverted)."""

    def check_map(value: Any) -> Any:
        if type(value) is not dict or not _STR.issuperset(map(type, value)):
            return UNSURE
        if accept is None or accept.issuperset(map(type, value.values())):
            return value
        if convert is None:
            return UNSURE
        for item in value.values():
            if type(item) not in accept and convert(item) is UNSURE:
                return UNSURE
        return value

    return check_map


def _check_value(type_name: str, field: str, tp: Any, value: Any) -> Any:
    """``check_value`` the long way: the one place that decides and words every refusal."""
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
                return _check_value(type_name, field, arg, value)
            except BadBody as exc:
                errors.append(exc.problem)
        raise BadBody(type_name, field, "; ".join(errors) or "null is not allowed")
    if origin is list:
        if not isinstance(value, list):
            raise BadBody(type_name, field, f"expected a list, got {type(value).__name__}")
        (item,) = typing.get_args(tp) or (Any,)
        return [_check_value(type_name, f"{field}[{i}]", item, v) for i, v in enumerate(value)]
    if origin is dict:
        if not isinstance(value, dict):
            raise BadBody(type_name, field, f"expected a map, got {type(value).__name__}")
        _, item = typing.get_args(tp) or (str, Any)
        for k, v in value.items():
            if not isinstance(k, str):
                raise BadBody(type_name, field, f"map key {k!r} is not a string")
            _check_value(type_name, f"{field}.{k}", item, v)
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
#: ``(field, annotation, required, accept, convert)``: a schema entry and its compiled check
Planned = tuple[str, Any, bool, frozenset[type] | None, Callable[[Any], Any] | None]
_PLANS: dict[type, tuple[Planned, ...]] = {}


def schema(cls: type) -> tuple[tuple[str, Any, bool], ...]:
    """``(field, annotation, required)`` for each field of ``cls``, resolved once per class
    (``typing.get_type_hints`` compiles string annotations: far too slow for every frame)."""
    found = _SCHEMAS.get(cls)
    if found is None:
        hints = typing.get_type_hints(cls)
        found = tuple(
            (f.name, hints[f.name], f.default is _MISSING and f.default_factory is _MISSING)
            for f in dataclasses.fields(cls)
        )
        _SCHEMAS[cls] = found
    return found


def _plan(cls: type) -> tuple[Planned, ...]:
    """``schema(cls)`` with each field's compiled check appended, built once per class."""
    found = _PLANS.get(cls)
    if found is None:
        found = _PLANS[cls] = tuple((*entry, *compiled(entry[1])) for entry in schema(cls))
    return found


class _Typed(typing.Protocol):
    """A message class as ``body_to_fields`` sees it: a dataclass with its wire name."""

    TYPE: typing.ClassVar[str]


def body_to_fields(cls: type[_Typed], body: Any) -> dict[str, Any]:
    """Validate a decoded body map against ``cls``'s dataclass fields."""
    name = cls.TYPE
    if not isinstance(body, dict):
        raise BadBody(name, "<body>", f"expected a map, got {type(body).__name__}")
    out: dict[str, Any] = {}
    for field, hint, required, accept, convert in _PLANS.get(cls) or _plan(cls):
        value = body.get(field, _ABSENT)
        if value is _ABSENT:
            if required:
                raise BadBody(name, field, "missing")
        elif accept is None or type(value) in accept:
            out[field] = value
        else:
            got = UNSURE if convert is None else convert(value)
            out[field] = _check_value(name, field, hint, value) if got is UNSURE else got
    return out
