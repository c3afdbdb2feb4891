"""Checking a tool's arguments, and the shape of a tool's answer.

:class:`Args` refuses (``invalid-argument``) an unknown field, a missing required one and a
value of the wrong kind, naming the tool, the field and what it got. :class:`Answer` is a
JSON object plus images (PNG bytes), which the server sends as MCP text and image content.
"""

from __future__ import annotations

import dataclasses

from .errors import ToolRefused

MISSING = object()


@dataclasses.dataclass
class Answer:
    """``data`` (JSON) and images; with ``text``, the answer's first content is that text as it
    is (a game tool's answer in the mod server's words) and ``data`` follows it as JSON."""

    data: dict
    images: list[bytes] = dataclasses.field(default_factory=list)
    text: str | None = None


class Args:
    def __init__(self, tool: str, arguments: object, known: tuple[str, ...]):
        if arguments is None:
            arguments = {}
        if not isinstance(arguments, dict):
            raise ToolRefused("invalid-argument", f"{tool}: arguments must be an object, got {arguments!r}")
        unknown = sorted(set(arguments) - set(known))
        if unknown:
            raise ToolRefused(
                "invalid-argument", f"{tool}: unknown argument {unknown[0]!r} (known: {', '.join(known) or 'none'})"
            )
        self.tool, self.values = tool, arguments

    def _bad(self, name: str, value: object, wanted: str) -> ToolRefused:
        return ToolRefused("invalid-argument", f"{self.tool}: {name} must be {wanted}, got {value!r}")

    def has(self, name: str) -> bool:
        return name in self.values

    def get(self, name: str, default: object = MISSING) -> object:
        if name not in self.values:
            if default is MISSING:
                raise ToolRefused("invalid-argument", f"{self.tool}: {name} is required")
            return default
        return self.values[name]

    def integer(self, name: str, default: object = MISSING, low: int = 0, high: int | None = None) -> int | None:
        value = self.get(name, default)
        if value is default and default is not MISSING:
            return value
        wanted = f"an integer {low}..{high}" if high is not None else f"an integer >= {low}"
        if isinstance(value, bool) or not isinstance(value, int) or value < low or (high is not None and value > high):
            raise self._bad(name, value, wanted)
        return value

    def text(self, name: str, default: object = MISSING, choices: tuple[str, ...] = ()) -> str | None:
        value = self.get(name, default)
        if value is default and default is not MISSING:
            return value
        if not isinstance(value, str) or (choices and value not in choices):
            raise self._bad(name, value, f"one of {', '.join(choices)}" if choices else "a string")
        return value

    def flag(self, name: str, default: bool) -> bool:
        value = self.get(name, default)
        if not isinstance(value, bool):
            raise self._bad(name, value, "true or false")
        return value

    def names(self, name: str, default: list) -> list[str]:
        value = self.get(name, default)
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise self._bad(name, value, "a list of button names")
        return value

    def mapping(self, name: str, default: object = None) -> dict | None:
        value = self.get(name, default)
        if value is default:
            return value
        if not isinstance(value, dict):
            raise self._bad(name, value, "an object")
        return value

    def only(self, *allowed: str) -> None:
        """Refuse any field beyond ``allowed`` (for actions that take fewer than the tool)."""
        extra = sorted(set(self.values) - set(allowed))
        if extra:
            raise ToolRefused(
                "invalid-argument",
                f"{self.tool} {self.values.get('action')!r} accepts no {extra[0]!r} (it takes {', '.join(allowed)})",
            )
