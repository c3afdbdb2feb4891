"""The act map: three seeded paths over a 4-column grid, one node type per node, a boss.

Row 0 holds the starting point (type ``Ancient``: the act's opening event, never counted
as visited); rows 1..8 hold rooms; the boss sits alone on row 9 and every row-8 node leads
to it. Row type menus keep each run varied yet always offer a shop, a treasure, rest
sites, an elite and "?" (Unknown) rooms somewhere along the way. Each act has its own map.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from . import rng

WIDTH = 4
ROWS = 8  # room rows, 1..ROWS
BOSS_ROW = ROWS + 1
BOSS_COL = 1
START_COL = 1

ROW_TYPES: tuple[tuple[str, ...], ...] = (
    ("Monster",),
    ("Unknown", "Monster"),
    ("Unknown", "Shop", "Monster"),
    ("Elite", "RestSite", "Monster"),
    ("Treasure",),
    ("Unknown", "Monster", "Shop"),
    ("Elite", "Monster", "Unknown"),
    ("RestSite",),
)


@dataclass
class MapNode:
    col: int
    row: int
    type: str
    children: list[tuple[int, int]] = field(default_factory=list)

    @property
    def pos(self) -> tuple[int, int]:
        return (self.col, self.row)


@dataclass
class ActMap:
    nodes: dict[tuple[int, int], MapNode]
    boss: MapNode
    start: MapNode

    def starts(self) -> list[MapNode]:
        return sorted((n for n in self.nodes.values() if n.row == 1), key=lambda n: n.col)

    def node(self, pos: tuple[int, int]) -> MapNode:
        if pos == self.boss.pos:
            return self.boss
        return self.nodes[pos]

    def children_of(self, pos: tuple[int, int] | None) -> list[MapNode]:
        if pos is None:
            return self.starts()
        node = self.node(pos)
        return [self.node(c) for c in sorted(node.children)]


def generate(seed: int | str, act: int = 1) -> ActMap:
    """Build the map of act ``act`` for ``seed``."""
    r = rng.stream(seed, "map") if act == 1 else rng.stream(seed, "map", act)
    starts = sorted(r.sample(range(WIDTH), 3))
    edges: set[tuple[tuple[int, int], tuple[int, int]]] = set()
    positions: set[tuple[int, int]] = set()
    for col in starts:
        for row in range(1, ROWS + 1):
            positions.add((col, row))
            if row < ROWS:
                nxt = min(WIDTH - 1, max(0, col + r.choice((-1, 0, 1))))
                edges.add(((col, row), (nxt, row + 1)))
                col = nxt
    nodes: dict[tuple[int, int], MapNode] = {}
    for col, row in sorted(positions, key=lambda p: (p[1], p[0])):
        nodes[(col, row)] = MapNode(col, row, r.choice(ROW_TYPES[row - 1]))
    for src, dst in sorted(edges):
        nodes[src].children.append(dst)
    boss = MapNode(BOSS_COL, BOSS_ROW, "Boss")
    for node in nodes.values():
        if node.row == ROWS:
            node.children.append(boss.pos)
        node.children.sort()
    start = MapNode(START_COL, 0, "Ancient", sorted(p for p in nodes if p[1] == 1))
    return ActMap(nodes, boss, start)
