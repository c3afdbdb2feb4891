"""``GET /api/v1/singleplayer?format=markdown``: a human-readable rendering of a state
(ours: the mod's ``FormatAsMarkdown`` text is not imitated; menus render their top-level
fields, blocks their keys)."""

from __future__ import annotations

import json
from typing import Any


def render(state: dict) -> str:
    st = state.get("state_type", "unknown")
    lines = [f"# {st}"]
    run = state.get("run")
    if run:
        lines.append(f"Act {run['act']} · Floor {run['floor']} · Ascension {run['ascension']}")
    player = state.get("player")
    if player:
        lines.append(
            f"**{player['character']}** HP {player['hp']}/{player['max_hp']} · "
            f"Block {player['block']} · Gold {player['gold']}"
            + (f" · Energy {player['energy']}/{player['max_energy']}" if "energy" in player else "")
        )
        for card in player.get("hand", []):
            lines.append(
                f"- [{card['index']}] {card['name']} ({card['cost']}): "
                f"{card['description']}" + ("" if card["can_play"] else f" — {card['unplayable_reason']}")
            )
    for key, value in state.items():
        if key in ("state_type", "run", "player"):
            continue
        lines.append(f"## {key}")
        lines.extend(_block(value))
    return "\n".join(lines) + "\n"


def _block(value: Any) -> list[str]:
    if isinstance(value, list):  # a top-level list (a menu's options)
        return [f"- {x if isinstance(x, str) else json.dumps(x, sort_keys=True)}" for x in value]
    if not isinstance(value, dict):
        return [str(value)]
    out = []
    for k, v in value.items():
        if isinstance(v, list):
            out.append(f"- **{k}**:")
            out.extend(f"  - {json.dumps(x, sort_keys=True)}" for x in v)
        else:
            out.append(f"- **{k}**: {json.dumps(v)}")
    return out
