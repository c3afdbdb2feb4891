"""Button names and the held-set diff.

A step names the full set of buttons to hold; :func:`diff` turns it into the presses and
releases needed from the currently held set.
"""

from __future__ import annotations

from collections.abc import Iterable

from ..recording.errors import InvalidButton

BUTTONS = ("a", "b", "start", "select", "up", "down", "left", "right")


def normalize(buttons: Iterable[str]) -> frozenset[str]:
    """Validate names (case-insensitive) and return them as a frozenset of lower-case names."""
    if isinstance(buttons, str):
        raise InvalidButton(buttons, BUTTONS)
    held = set()
    for name in buttons:
        if not isinstance(name, str) or name.lower() not in BUTTONS:
            raise InvalidButton(name, BUTTONS)
        held.add(name.lower())
    return frozenset(held)


def ordered(buttons: Iterable[str]) -> list[str]:
    """Buttons in the canonical BUTTONS order (used in journals and replies)."""
    chosen = set(buttons)
    return [b for b in BUTTONS if b in chosen]


def diff(current: frozenset[str], wanted: frozenset[str]) -> tuple[list[str], list[str]]:
    """(to_press, to_release) that turn ``current`` into ``wanted``."""
    return ordered(wanted - current), ordered(current - wanted)
