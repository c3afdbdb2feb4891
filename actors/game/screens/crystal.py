"""The ``crystal_sphere`` overlay: a small divination minigame.

A 5x5 grid hides four prizes. ``crystal_sphere_set_tool`` picks ``small`` (reveals one
cell, costs 1 divination) or ``big`` (reveals the 3x3 around the cell, costs 3).
``crystal_sphere_click_cell`` with ``x``, ``y``; ``crystal_sphere_proceed`` ends the game
and shows the prizes found as ``rewards``. Clicking an already revealed cell (or, with the
big tool, an area with nothing left to reveal) is refused and counted as a duplicate.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .. import rng
from ..content import POTION_POOL, RELIC_POOL
from ..errors import ActionRefused
from ..model import Screen, top_screen
from ..registry import action
from .rewards import Rewards

if TYPE_CHECKING:
    from ..engine import Game
    from ..model import Run

SIZE = 5
DIVINATIONS = 6
COST = {"small": 1, "big": 3}


class CrystalSphere(Screen):
    state_type = "crystal_sphere"

    def __init__(self, run: "Run") -> None:
        r = rng.stream(run.seed, "crystal", run.floor)
        cells = r.sample([(x, y) for x in range(SIZE) for y in range(SIZE)], 4)
        kinds = [{"type": "gold", "gold": 30}, {"type": "gold", "gold": 20},
                 {"type": "potion", "potion": r.choice(POTION_POOL)},
                 {"type": "relic", "relic": r.choice(RELIC_POOL)}]
        self.prizes = dict(zip(cells, kinds))
        self.revealed: set[tuple[int, int]] = set()
        self.tool = "small"
        self.remaining = DIVINATIONS

    def block(self, game: "Game") -> dict:
        cells = []
        for y in range(SIZE):
            for x in range(SIZE):
                shown = (x, y) in self.revealed
                prize = self.prizes.get((x, y))
                cells.append({"x": x, "y": y, "revealed": shown,
                              "content": (prize["type"] if prize else "empty") if shown
                              else None})
        return {"grid_width": SIZE, "grid_height": SIZE, "tool": self.tool,
                "tool_costs": dict(COST), "clicks_remaining": self.remaining,
                "cells": cells, "can_proceed": True}

    def area(self, x: int, y: int) -> set[tuple[int, int]]:
        if self.tool == "small":
            return {(x, y)}
        return {(a, b) for a in range(x - 1, x + 2) for b in range(y - 1, y + 2)
                if 0 <= a < SIZE and 0 <= b < SIZE}


def _need(game: "Game") -> CrystalSphere:
    return top_screen(game, CrystalSphere, "No crystal sphere is open")


@action("crystal_sphere_set_tool", ("tool", str, True))
def set_tool(game: "Game", p: dict):
    cs = _need(game)
    if p["tool"] not in COST:
        raise ActionRefused(f"Unknown tool '{p['tool']}' (valid: big, small)")
    return f"Using the {p['tool']} tool", lambda: setattr(cs, "tool", p["tool"])


@action("crystal_sphere_click_cell", ("x", int, True), ("y", int, True))
def click_cell(game: "Game", p: dict):
    cs = _need(game)
    x, y = p["x"], p["y"]
    if not (0 <= x < SIZE and 0 <= y < SIZE):
        raise ActionRefused(f"Cell ({x}, {y}) is outside the {SIZE}x{SIZE} grid")
    area = cs.area(x, y)
    if area <= cs.revealed:
        game.note_duplicate()
        raise ActionRefused(f"Cell ({x}, {y}) is already revealed")
    if cs.remaining < COST[cs.tool]:
        raise ActionRefused(f"Not enough divinations for the {cs.tool} tool "
                            f"({cs.remaining} left)")

    def effect() -> None:
        cs.remaining -= COST[cs.tool]
        cs.revealed |= area
    return f"Divining ({x}, {y})", effect


@action("crystal_sphere_proceed")
def crystal_proceed(game: "Game", p: dict):
    cs = _need(game)

    def effect() -> None:
        found = [dict(v) for k, v in sorted(cs.prizes.items()) if k in cs.revealed]
        game.pop_overlay(cs)
        game.push_overlay(Rewards(found))
    return "Leaving the crystal sphere", effect
