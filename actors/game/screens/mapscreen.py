"""The map screen: ``map`` block (McpMod.StateBuilder.cs ``BuildMapState``,
``BuildMapNode``, ``BuildBossInfo``) and ``choose_map_node`` (McpMod.Actions.cs
``ExecuteChooseMapNode``).

``current_position`` (the last visited node) is absent before the first node; ``visited``
lists ``{col, row, type}``; ``next_options[i]`` are the children of the current node (the
children of the starting point before the first room), ordered by column, each with
``leads_to`` (its own children) only when it has any. ``nodes`` starts with the starting
point (type ``Ancient``), then every room, then the boss node, which - like ``boss`` and
``bosses`` - carries the boss encounter's ``id`` and ``name``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..bestiary import boss_of
from ..errors import ActionRefused
from ..mapgen import MapNode
from ..registry import action, in_range
from ..runflow import enter_node
from ..world import World

if TYPE_CHECKING:
    from ..model import Run


def _pos(node: MapNode) -> dict:
    return {"col": node.col, "row": node.row, "type": node.type}


def _node(node: MapNode) -> dict:
    return {"col": node.col, "row": node.row, "type": node.type, "children": [[c, r] for c, r in sorted(node.children)]}


def map_block(run: Run) -> dict:
    m = run.act_map
    view: dict = {}
    if run.visited:
        view["current_position"] = _pos(m.node(run.visited[-1]))
    view["visited"] = [_pos(m.node(p)) for p in run.visited]
    options = []
    for i, node in enumerate(m.children_of(run.position)):
        option = {"index": i, **_pos(node)}
        children = m.children_of(node.pos)
        if children:
            option["leads_to"] = [_pos(c) for c in children]
        options.append(option)
    view["next_options"] = options
    boss = boss_of(run.act)
    identity = {"id": boss.id, "name": boss.name}
    view["nodes"] = [_node(m.start)] + [_node(n) for n in m.nodes.values()] + [{**_node(m.boss), **identity}]
    info = {"col": m.boss.col, "row": m.boss.row, **identity}
    view["boss"] = info
    view["bosses"] = [dict(info)]
    return view


@action("choose_map_node")
def choose_map_node(game: World, p):
    run = game.run
    if not run.map_open:
        raise ActionRefused("Map screen is not open")
    index = p.int("index", "Missing 'index' (map node index from next_options)")
    options = run.act_map.children_of(run.position)
    if not options:
        raise ActionRefused("No travelable map nodes available")
    node = in_range(options, index, f"Map node index {index} out of range ({len(options)} options available)")
    return (f"Traveling to {node.type} at ({node.col},{node.row})", lambda: enter_node(game, node))
