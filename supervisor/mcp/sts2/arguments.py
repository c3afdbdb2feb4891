"""The argument checking of ``supervisor mcp --game``: a call's arguments against its tool's
parameters (:mod:`.schemas`), with the mod's defaults filled in; a refusal
(``invalid-argument``) names the tool, the argument and the value, and nothing is sent.
"""

from __future__ import annotations

import math

from ..shared.errors import ToolRefused
from .schemas import REQUIRED, GameTool, known_args

MAX_WAIT_S = 600.0
CHOICES = {"format": ("markdown", "json"), "item_type": ("all", "card", "relic"), "tool": ("big", "small")}


def check_args(tool: GameTool, arguments: object) -> dict:
    """The call's arguments, checked against the tool's parameters (types, required, choices),
    with the mod's defaults filled in; a refusal names the tool, the argument and the value."""
    if arguments is None:
        arguments = {}
    if not isinstance(arguments, dict):
        raise ToolRefused("invalid-argument", f"{tool.name}: arguments must be an object, got {arguments!r}")
    known = known_args(tool)
    unknown = sorted(set(arguments) - set(known))
    if unknown:
        raise ToolRefused(
            "invalid-argument",
            f"{tool.name}: unknown argument {unknown[0]!r} (known: {', '.join(known) or 'none'}); nothing was sent",
        )
    out = {}
    for p in tool.params:
        if p.name not in arguments or (arguments[p.name] is None and p.default is None):
            if p.default is REQUIRED:
                raise ToolRefused("invalid-argument", f"{tool.name}: {p.name} is required; nothing was sent")
            if p.default is not None:
                out[p.name] = p.default
            continue
        value = arguments[p.name]
        out[p.name] = _checked(tool, p.name, p.kind, value)
    if arguments.get("reason") is not None:
        if not isinstance(arguments["reason"], str) or len(arguments["reason"]) > 2000:
            raise ToolRefused(
                "invalid-argument", f"{tool.name}: reason must be a string of at most 2000 characters; nothing was sent"
            )
        out["reason"] = arguments["reason"]
    return out


def _checked(tool: GameTool, name: str, kind: type, value: object) -> object:
    def bad(wanted: str) -> ToolRefused:
        return ToolRefused("invalid-argument", f"{tool.name}: {name} must be {wanted}, got {value!r}; nothing was sent")

    if kind is int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise bad("an integer")
        if name == "profile_id" and value not in (1, 2, 3):
            raise bad("1, 2 or 3")
        if value < (1 if name == "limit" else 0):
            raise bad(f"an integer >= {1 if name == 'limit' else 0}")
        return value
    if kind is float:
        if (
            isinstance(value, bool)
            or not isinstance(value, (int, float))
            or not math.isfinite(value)
            or not 0 < value <= MAX_WAIT_S
        ):
            raise bad(f"a number of seconds in (0, {MAX_WAIT_S:g}]")
        return float(value)
    if not isinstance(value, str):
        raise bad("a string")
    if name in CHOICES and value not in CHOICES[name]:
        raise bad("one of " + ", ".join(repr(c) for c in CHOICES[name]))
    return value
