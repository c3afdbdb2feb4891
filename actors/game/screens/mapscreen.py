"""The map screen: ``map`` block and ``choose_map_node``.

``next_options[i]`` are the children of the current node (the row-0 nodes before the
first room); each carries ``leads_to``, the types and places of its own children.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..errors import ActionRefused
from ..mapgen import MapNode
from ..registry import action, index_in

if TYPE_CHECKING:
    from ..engine import Game
    from ..model import Run


def _pos(node: MapNode) -> dict:
    return {"col": node.col, "row": node.row, "type": node.type}


def map_block(run: "Run") -> dict:
    m = run.act_map
    options = []
    for i, node in enumerate(m.children_of(run.position)):
        options.append({"index": i, "col": node.col, "row": node.row, "type": node.type,
                        "leads_to": [_pos(c) for c in m.children_of(node.pos)]})
    nodes = [{"col": n.col, "row": n.row, "type": n.type,
              "children": [[c, r] for c, r in n.children]}
             for n in list(m.nodes.values()) + [m.boss]]
    current = None
    if run.position is not None:
        current = {"col": run.position[0], "row": run.position[1]}
    return {
        "current_position": current,
        "visited": [{"col": c, "row": r} for c, r in run.visited],
        "next_options": options,
        "nodes": nodes,
        "boss": _pos(m.boss),
        "bosses": [{"id": "HOLLOW_KING", "name": "Hollow King"}],
    }


@action("choose_map_node", ("index", int, True))
def choose_map_node(game: "Game", p: dict):
    from ..runflow import enter_node

    run = game.run
    assert run is not None
    if game.current_screen() != "map":
        raise ActionRefused("The map is not open")
    node = index_in(run.act_map.children_of(run.position), p["index"], "map node")
    return (f"Travelling to {node.type} at ({node.col}, {node.row})",
            lambda: enter_node(game, node))
