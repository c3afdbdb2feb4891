"""Exceptions of the built-in game, one root:

    GameError
    ├── ActionRefused     an action the game refuses: HTTP 200 ``{"status": "error"}``
    │                     (plus ``extra`` fields, e.g. ``pending_epoch_ids``)
    ├── ParamTypeError    a wrongly typed JSON value: HTTP 500 "Action failed: ..." (an
    │                     action), "Menu action failed: ..." (``menu_select``) or
    │                     "Internal error: ..." (the ``action`` field itself)
    └── StateBuildError   a state read that fails (knob ``state_error_every``): HTTP 500
                          ``{error, exception_type, stack_trace}``

``ParamTypeError``'s text is the exception message the real mod's ``JsonElement.GetInt32`` /
``GetString`` raise (System.Text.Json; McpMod.cs ``HandlePostAction`` puts it after its
prefix). The HTTP layer turns these into replies (``http.Handler``).
"""

from __future__ import annotations

from typing import Any

INT32 = (-(2**31), 2**31 - 1)
# System.Text.Json's messages (ThrowHelper: JsonElementHasWrongType; FormatException)
WRONG_KIND = "The requested operation requires an element of type '{0}', but the target element has type '{1}'."
BAD_FORMAT = "One of the identified items was in an invalid format."


class GameError(Exception):
    """Root of the built-in game's exceptions."""


class ActionRefused(GameError):
    """The action is valid JSON but the game refuses it; ``str(exc)`` is the error text and
    ``extra`` holds further reply fields (the mod adds some to a few errors)."""

    def __init__(self, message: str, extra: dict | None = None) -> None:
        super().__init__(message)
        self.extra = dict(extra or {})


def json_kind(value: Any) -> str:
    """The System.Text.Json ``JsonValueKind`` name of a decoded JSON value."""
    if value is None:
        return "Null"
    if value is True:
        return "True"
    if value is False:
        return "False"
    if isinstance(value, (int, float)):
        return "Number"
    if isinstance(value, str):
        return "String"
    return "Array" if isinstance(value, list) else "Object"


def read_error(expected: str, value: Any) -> str | None:
    """The message ``GetInt32`` (``expected`` "Number") or ``GetString`` ("String") would
    throw for ``value``, or None when the read succeeds (``GetString`` of null is null)."""
    kind = json_kind(value)
    if expected == "String":
        return None if kind in ("String", "Null") else WRONG_KIND.format("String", kind)
    if kind != "Number":
        return WRONG_KIND.format("Number", kind)
    if isinstance(value, float) or not INT32[0] <= value <= INT32[1]:
        return BAD_FORMAT
    return None


class ParamTypeError(GameError):
    """A JSON value of the wrong type for its read (the real mod answers HTTP 500)."""

    def __init__(self, name: str, expected: str, value: object) -> None:
        want = "String" if expected in ("String", "a string") else "Number"
        super().__init__(read_error(want, value) or WRONG_KIND.format(want, json_kind(value)))
        self.name = name
        self.value = value


def read_int(body: dict, name: str) -> int:
    """``body[name]`` read as the mod's ``GetInt32`` reads it (the key must be present)."""
    value = body[name]
    problem = read_error("Number", value)
    if problem:
        raise ParamTypeError(name, "Number", value)
    return int(value)


def read_str(body: dict, name: str) -> str | None:
    """``body[name]`` read as ``GetString`` reads it: a string, or None for JSON null."""
    value = body[name]
    if read_error("String", value):
        raise ParamTypeError(name, "String", value)
    return value


class StateBuildError(GameError):
    """A state read that fails on purpose (knob ``state_error_every``)."""
