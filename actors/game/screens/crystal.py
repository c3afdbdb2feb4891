"""The ``crystal_sphere`` overlay (McpMod.StateBuilder.cs ``BuildCrystalSphereState``;
McpMod.Actions.cs ``ExecuteCrystalSphereSetTool``, ``...ClickCell``, ``...Proceed``).

A 5x4 grid hides four items of several cells each (relic 2x2, gold 2x1, potion 1x1 and a
bad one, a curse 1x2). Five divinations: the ``small`` tool reveals one cell for 1, the
``big`` tool the 3x3 around a cell for 2 (its button hides below 2 divinations, and the
tool falls back to ``small``). With no divination left both tools hide (``tool:
"none"``) and the proceed button shows (``can_proceed``). Hidden cells stay clickable
(``is_hidden`` and visible), so a click then is answered ``ok`` and reveals nothing.
``crystal_sphere_proceed`` grants every item with a revealed cell and opens the map: the
overlay lingers under the map (McpMod.StateBuilder.cs ``BuildGameState``, its comment beside
the crystal sphere branch), so the state is
``map`` while the sphere's actions still find it and refuse as the source words it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .. import rng
from ..content import POTION_POOL, RELIC_POOL
from ..errors import ActionRefused
from ..model import Screen, open_map
from ..registry import action
from ..world import World

if TYPE_CHECKING:
    from ..model import Run

WIDTH, HEIGHT = 5, 4
DIVINATIONS = 5
COST = {"small": 1, "big": 2}
ITEMS = (
    ("CrystalSphereRelic", 2, 2, True),
    ("CrystalSphereGold", 2, 1, True),
    ("CrystalSpherePotion", 1, 1, True),
    ("CrystalSphereCurse", 1, 2, False),
)
NOT_OPEN = "Crystal Sphere screen is not open"


class Item:
    def __init__(self, kind: str, x: int, y: int, w: int, h: int, good: bool) -> None:
        self.kind, self.x, self.y, self.w, self.h, self.good = kind, x, y, w, h, good

    def cells(self) -> set[tuple[int, int]]:
        return {(a, b) for a in range(self.x, self.x + self.w) for b in range(self.y, self.y + self.h)}

    def view(self) -> dict:
        return {
            "item_type": self.kind,
            "x": self.x,
            "y": self.y,
            "width": self.w,
            "height": self.h,
            "is_good": self.good,
        }


def place_items(run: Run) -> list[Item]:
    r = rng.stream(run.seed, "crystal", run.floor)
    taken: set[tuple[int, int]] = set()
    items: list[Item] = []
    for kind, w, h, good in ITEMS:
        spots = [(x, y) for x in range(WIDTH - w + 1) for y in range(HEIGHT - h + 1)]
        r.shuffle(spots)
        for x, y in spots:
            item = Item(kind, x, y, w, h, good)
            if not item.cells() & taken:
                taken |= item.cells()
                items.append(item)
                break
    return items


class CrystalSphere(Screen):
    state_type = "crystal_sphere"
    room_type = "NCrystalSphereScreen"

    def __init__(self, run: Run) -> None:
        self.items = place_items(run)
        self.revealed: set[tuple[int, int]] = set()
        self.tool = "big"
        self.left = DIVINATIONS
        self.proceeded = False

    def tool_visible(self, tool: str) -> bool:
        return not self.proceeded and self.left >= COST[tool]

    def item_at(self, cell: tuple[int, int]) -> Item | None:
        return next((i for i in self.items if cell in i.cells()), None)

    def block(self, game: World) -> dict:
        cells, clickable = [], []
        for y in range(HEIGHT):
            for x in range(WIDTH):
                hidden = (x, y) not in self.revealed
                view = {
                    "x": x,
                    "y": y,
                    "is_hidden": hidden,
                    "is_clickable": hidden,
                    "is_highlighted": False,
                    "is_hovered": False,
                }
                item = self.item_at((x, y))
                if not hidden and item is not None:
                    view.update(item_type=item.kind, is_good=item.good)
                cells.append(view)
                if hidden:
                    clickable.append({"x": x, "y": y})
        found = [i.view() for i in self.items if i.cells() & self.revealed]
        return {
            "instructions_title": "Crystal Sphere",
            "instructions_description": "Use your divinations to reveal what the "
            "sphere hides: the big tool shows a 3x3 area for 2, the small one a cell "
            "for 1.",
            "grid_width": WIDTH,
            "grid_height": HEIGHT,
            "cells": cells,
            "clickable_cells": clickable,
            "revealed_items": found,
            "tool": self.tool,
            "can_use_big_tool": self.tool_visible("big"),
            "can_use_small_tool": self.tool_visible("small"),
            "divinations_left_text": f"{self.left} divinations left",
            "can_proceed": self.can_proceed,
        }

    @property
    def can_proceed(self) -> bool:
        return self.left == 0 and not self.proceeded

    def divine(self, x: int, y: int) -> None:
        if self.tool == "none" or self.left < COST[self.tool]:
            return
        if self.tool == "small":
            area = {(x, y)}
        else:
            area = {
                (a, b) for a in range(x - 1, x + 2) for b in range(y - 1, y + 2) if 0 <= a < WIDTH and 0 <= b < HEIGHT
            }
        self.revealed |= area
        self.left -= COST[self.tool]
        if not self.tool_visible(self.tool):
            self.tool = "small" if self.tool_visible("small") else "none"

    def grant(self, game: World) -> None:
        run = game.run
        r = rng.stream(run.seed, "crystal_prizes", run.floor)
        for item in self.items:
            if not item.cells() & self.revealed:
                continue
            if item.kind == "CrystalSphereGold":
                run.gold += 30
            elif item.kind == "CrystalSphereRelic":
                run.add_relic(r.choice(RELIC_POOL))
            elif item.kind == "CrystalSpherePotion":
                run.add_potion(r.choice(POTION_POOL))
            else:
                run.add_card("DOUBT")


def _need(game: World) -> CrystalSphere:
    """The sphere on top of the overlay stack (or left under the open map)."""
    run = game.run
    top = run.top if run.top is not None else run.lingering
    if not isinstance(top, CrystalSphere):
        raise ActionRefused(NOT_OPEN)
    return top


@action("crystal_sphere_set_tool")
def set_tool(game: World, p):
    cs = _need(game)
    tool = p.str("tool", "Missing 'tool' (expected 'big' or 'small')")
    if tool not in COST:
        raise ActionRefused(f"Unknown Crystal Sphere tool: {tool}")
    if not cs.tool_visible(tool):
        raise ActionRefused(f"Crystal Sphere tool '{tool}' is not available")
    return f"Setting Crystal Sphere tool to {tool}", lambda: setattr(cs, "tool", tool)


@action("crystal_sphere_click_cell")
def click_cell(game: World, p):
    cs = _need(game)
    if not p.has("x"):
        raise ActionRefused("Missing 'x' (cell x-coordinate)")
    if not p.has("y"):
        raise ActionRefused("Missing 'y' (cell y-coordinate)")
    x, y = p.int("x", ""), p.int("y", "")
    if not (0 <= x < WIDTH and 0 <= y < HEIGHT):
        raise ActionRefused(f"Crystal Sphere cell ({x}, {y}) was not found")
    if (x, y) in cs.revealed or cs.proceeded:
        game.note_duplicate()
        raise ActionRefused(f"Crystal Sphere cell ({x}, {y}) is not clickable")
    return f"Clicking Crystal Sphere cell ({x}, {y})", lambda: cs.divine(x, y)


@action("crystal_sphere_proceed")
def crystal_proceed(game: World, p):
    cs = _need(game)
    if not cs.can_proceed:
        raise ActionRefused("Crystal Sphere proceed button is not enabled")

    def effect() -> None:
        cs.proceeded = True
        cs.grant(game)
        game.pop_overlay(cs)
        game.run.lingering = cs
        open_map(game)

    return "Proceeding from Crystal Sphere", effect
