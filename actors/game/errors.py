"""Exceptions of the built-in game, one root:

    GameError
    ├── ActionRefused     an action the game refuses: HTTP 200 ``{"status": "error"}``
    ├── ParamTypeError    a wrongly typed parameter: HTTP 500 ``"Action failed: ..."``
    └── StateBuildError   a state read that fails (knob ``state_error_every``): HTTP 500
                          ``{error, exception_type, stack_trace}``

The HTTP layer turns them into replies (``http.Handler._post_action`` for actions,
``http.Handler._get_state`` for reads).
"""

from __future__ import annotations


class GameError(Exception):
    """Root of the built-in game's exceptions."""


class ActionRefused(GameError):
    """The action is valid JSON but the game refuses it; ``str(exc)`` is the error text."""


class ParamTypeError(GameError):
    """A parameter has the wrong JSON type (the real mod answers 500 "Action failed")."""

    def __init__(self, name: str, expected: str, value: object) -> None:
        super().__init__(
            f"parameter '{name}' must be {expected}, got {type(value).__name__} {value!r}"
        )
        self.name = name
        self.value = value


class StateBuildError(GameError):
    """A state read that fails on purpose (knob ``state_error_every``)."""
