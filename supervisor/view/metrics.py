"""Per-step figures read from one observation: what the charts of ``supervisor view`` plot.

The STS2MCP state (vendor/sts2mcp/, the mod's ``BuildGameState`` in McpMod.StateBuilder.cs)
carries ``player.hp``, ``player.max_hp`` and ``player.gold`` on every in-run screen, and
``run.act`` / ``run.floor`` in its ``run`` block. The deck is shown only in combat, as the
hand plus the counts of the draw, discard and exhaust piles (``draw_pile_count`` ...): the
chart calls it the combat deck, and it is absent on every other screen. An emulator state
(``state_type: pyboy``) carries its ``frame``.

A value the state does not show is ``MISSING`` (the chart leaves a gap), never a guess.
"""

from __future__ import annotations

from typing import Any

MISSING = -1
#: the columns, in the order ``figures`` returns them
NAMES = ("hp", "max_hp", "gold", "floor", "act", "deck", "frame")
LABELS = {
    "hp": "HP",
    "max_hp": "max HP",
    "gold": "gold",
    "floor": "floor",
    "act": "act",
    "deck": "combat deck (hand + piles)",
    "frame": "emulator frame",
}
PILES = ("draw_pile_count", "discard_pile_count", "exhaust_pile_count")


def _int(value: Any) -> int:
    if isinstance(value, bool):
        return MISSING
    if isinstance(value, int) and value >= 0:
        return value
    return MISSING


def figures(state: Any) -> tuple[int, ...]:
    """The ``NAMES`` columns of one observation (``MISSING`` where it does not show one)."""
    if not isinstance(state, dict):
        return (MISSING,) * len(NAMES)
    player = state.get("player") if isinstance(state.get("player"), dict) else {}
    run = state.get("run") if isinstance(state.get("run"), dict) else {}
    return (
        _int(player.get("hp")),
        _int(player.get("max_hp")),
        _int(player.get("gold")),
        _int(run.get("floor")),
        _int(run.get("act")),
        _deck(player),
        _int(state.get("frame")),
    )


def _deck(player: dict) -> int:
    hand = player.get("hand")
    counts = [player.get(k) for k in PILES]
    if not isinstance(hand, list) or not all(isinstance(c, int) and not isinstance(c, bool) for c in counts):
        return MISSING
    return len(hand) + sum(counts)
