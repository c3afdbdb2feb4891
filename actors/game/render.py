"""The rendering rule: how a screen's fields become one state (McpMod.StateBuilder.cs
``BuildGameState``).

Interface for screens (``block(game)`` of a room or overlay, see ``model.Screen``):

- return a plain ``dict``: it is nested under a block named after the state type
  (``{"state_type": "shop", "shop": {...}, "run": ..., "player": ...}``);
- return a ``TopLevel`` dict: its fields go at the top level, next to ``state_type``, with
  no block (the "combat ended" state ``{"state_type": "monster", "message": ...}``,
  ``unknown`` with ``room_type``).

Inside a run ``run`` and ``player`` are appended after the screen's fields, as
``BuildGameState`` appends them. Menus, tutorials and popups replace the whole state
(``whole_state``): no block, no ``run``, no ``player``.
"""

from __future__ import annotations

from typing import Any


class TopLevel(dict):
    """A screen's fields that go at the top level of the state instead of in a block."""


def compose(state_type: str, block: dict, extra: dict | None = None, run_fields: dict | None = None) -> dict:
    """One in-run (or menu) state: ``state_type``, the screen's fields (nested under
    ``state_type`` unless ``block`` is a ``TopLevel``), ``extra`` top-level entries (the
    ``battle`` beside ``hand_select``), then ``run_fields`` (``run``, ``player``)."""
    view: dict[str, Any] = {"state_type": state_type}
    if isinstance(block, TopLevel):
        view.update(block)
    else:
        view[state_type] = block
    view.update(extra or {})
    view.update(run_fields or {})
    return view


def whole_state(fields: dict) -> dict:
    """A menu, tutorial or popup state: ``{"state_type": "menu", **fields}``."""
    return {"state_type": "menu", **fields}
