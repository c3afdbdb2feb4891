"""The action registry: one ``@action`` per STS2MCP action name, no if-chain.

A handler is ``handler(game, params) -> (message, effect)``. It must only *validate* and
must not mutate the game: it raises ``ActionRefused`` for an action the game refuses, and
returns the success message plus a zero-argument ``effect`` that performs the change.
The engine calls the handler when the POST arrives (to answer it) and again when the
queued effect comes due (to re-validate against the state at that time).

Parameters are read lazily, where McpMod.Actions.cs reads them: a handler checks its
screen first, then calls ``params.int("index", "Missing 'index' (...)")``. A missing key
refuses with the handler's own text; a wrongly typed value raises ``ParamTypeError`` with
System.Text.Json's message (HTTP 500 "Action failed: ..."), as ``GetInt32`` / ``GetString``
throw in the mod. JSON null is not "missing": ``GetInt32`` of null throws, ``GetString``
of null is null.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .errors import ActionRefused, ParamTypeError, read_int, read_str

Effect = Callable[[], None]
Handler = Callable[[Any, "Params"], "tuple[str, Effect]"]


class Params:
    """An action's body, read on demand (``TryGetValue`` + ``GetInt32``/``GetString``)."""

    def __init__(self, body: dict) -> None:
        self.body = body

    def has(self, name: str) -> bool:
        return name in self.body

    def int(self, name: str, missing: str) -> int:
        if name not in self.body:
            raise ActionRefused(missing)
        return read_int(self.body, name)

    def str(self, name: str, missing: str) -> str:
        """``GetString() ?? ""``: JSON null reads as the empty string."""
        if name not in self.body:
            raise ActionRefused(missing)
        return read_str(self.body, name) or ""


@dataclass(frozen=True)
class ActionSpec:
    name: str
    handler: Handler
    menu: bool = False  # allowed outside a run / while a popup shows
    confirm: bool = False  # slowed by the slow_confirm_reads knob

    def parse(self, body: dict) -> Params:
        return Params(body)


ACTIONS: dict[str, ActionSpec] = {}


def action(name: str, *, menu: bool = False, confirm: bool = False) -> Callable[[Handler], Handler]:
    """Register ``handler`` as the implementation of action ``name``."""

    def register(handler: Handler) -> Handler:
        if name in ACTIONS:
            raise RuntimeError(f"action {name!r} registered twice")

        def checked(game: Any, params: Params) -> tuple[str, Effect]:
            try:
                return handler(game, params)
            except ParamTypeError as exc:
                if game.validating:
                    raise
                # re-validating a queued effect: the state moved on; drop the effect
                raise ActionRefused(str(exc)) from exc

        ACTIONS[name] = ActionSpec(name, checked, menu, confirm)
        return handler

    return register


def in_range(items: list, index: int, error: str) -> Any:
    """``items[index]``, or ActionRefused with ``error`` (the mod's out-of-range text)."""
    if not 0 <= index < len(items):
        raise ActionRefused(error)
    return items[index]
