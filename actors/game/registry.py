"""The action registry: one ``@action`` per STS2MCP action name, no if-chain.

A handler is ``handler(game, params) -> (message, effect)``. It must only *validate* and
must not mutate the game: it raises ``ActionRefused`` for an action the game refuses, and
returns the success message plus a zero-argument ``effect`` that performs the change.
The engine calls the handler when the POST arrives (to answer it) and again when the
queued effect comes due (to re-validate against the state at that time).

Parameters are declared as ``("card_index", int, True)`` — name, type, required. A
parameter of the wrong JSON type raises ``ParamTypeError`` (HTTP 500 "Action failed").
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

from .errors import ActionRefused, ParamTypeError

Effect = Callable[[], None]
Handler = Callable[[Any, dict], "tuple[str, Effect]"]


@dataclass(frozen=True)
class ActionSpec:
    name: str
    handler: Handler
    params: tuple[tuple[str, type, bool], ...] = ()
    menu: bool = False  # allowed outside a run / while a popup shows
    confirm: bool = False  # slowed by the slow_confirm_reads knob

    def parse(self, body: dict) -> dict:
        out: dict[str, Any] = {}
        for name, kind, required in self.params:
            if name not in body or body[name] is None:
                if required:
                    raise ActionRefused(f"Missing required parameter '{name}'")
                continue
            value = body[name]
            if kind is int and (isinstance(value, bool) or not isinstance(value, int)):
                raise ParamTypeError(name, "an integer", value)
            if kind is str and not isinstance(value, str):
                raise ParamTypeError(name, "a string", value)
            out[name] = value
        return out


ACTIONS: dict[str, ActionSpec] = {}


def action(name: str, *params: tuple[str, type, bool], menu: bool = False,
           confirm: bool = False) -> Callable[[Handler], Handler]:
    """Register ``handler`` as the implementation of action ``name``."""

    def register(handler: Handler) -> Handler:
        if name in ACTIONS:
            raise RuntimeError(f"action {name!r} registered twice")
        ACTIONS[name] = ActionSpec(name, handler, tuple(params), menu, confirm)
        return handler

    return register


def index_in(items: list, index: int, what: str) -> Any:
    """``items[index]`` or ActionRefused naming the bad index and the valid range."""
    if not 0 <= index < len(items):
        raise ActionRefused(f"Invalid {what} index {index} (valid: 0..{len(items) - 1})"
                            if items else f"Invalid {what} index {index} (none available)")
    return items[index]
