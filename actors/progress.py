"""What an observation row says of a Slay the Spire 2 run's progress (its ``progress`` field).

    progress_of(state) -> {"act", "floor", "hp", "max_hp", "gold", "deck"} or None

Taken by the recorder from the state it stores, so that a run's score (floor reached, bosses
and elites beaten, HP at the end) is read from the journal without opening every observation
file. Only what the state shows is kept, each value a whole number: ``act`` and ``floor`` from
the ``run`` block, ``hp``, ``max_hp`` and ``gold`` from the ``player`` block (the mod's
``BuildPlayerState``), and ``deck`` in combat only, as the cards of the four piles (hand, draw,
discard, exhaust: the mod shows no deck outside combat, so there is none to count). A state
with neither block (a menu, a Game Boy frame) has no progress.
"""

from __future__ import annotations

from typing import Any

PILE_COUNTS = ("draw_pile_count", "discard_pile_count", "exhaust_pile_count")


def _whole(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def progress_of(state: Any) -> dict | None:
    if not isinstance(state, dict):
        return None
    run, player = state.get("run"), state.get("player")
    run = run if isinstance(run, dict) else {}
    player = player if isinstance(player, dict) else {}
    out = {k: run[k] for k in ("act", "floor") if _whole(run.get(k))}
    out.update({k: player[k] for k in ("hp", "max_hp", "gold") if _whole(player.get(k))})
    if isinstance(player.get("hand"), list) and all(_whole(player.get(k)) for k in PILE_COUNTS):
        out["deck"] = len(player["hand"]) + sum(player[k] for k in PILE_COUNTS)
    return out or None


__all__ = ["progress_of"]
