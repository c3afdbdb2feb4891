"""The non-gameplay endpoints: ``/``, compendium and profile (bodies in ``progress``),
wiki and profiles, and the multiplayer route's view of a state.

Each function takes the game (under its lock) and returns ``(http_status, json_body)``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from . import progress
from .bestiary import MONSTERS
from .content import CARDS, CHARACTERS, POTIONS, RELICS
from .errors import json_kind, read_error
from .screens import saves

if TYPE_CHECKING:
    from .engine import Game

VERSION = "0.4.0-gamerig"
PROFILE_IDS = (1, 2, 3)
ITEM_TYPES = ("card", "relic", "potion", "monster", "character")


def multiplayer_view(state: dict) -> dict:
    """A run's state on the multiplayer route (knob ``multiplayer_run``): the metadata
    McpMod.MultiplayerState.cs ``BuildMultiplayerGameState`` puts first, then the
    singleplayer state (a simplification: its battle block is the singleplayer one)."""
    if state.get("state_type") == "menu" or "run" not in state:
        return state
    return {"game_mode": "multiplayer", "net_type": "Host", "player_count": 1,
            "local_player_slot": 0, **state}


def root() -> tuple[int, dict]:
    return 200, {"message": f"Hello from STS2 MCP v{VERSION}", "status": "ok"}


def _entries() -> list[dict]:
    out: list[dict] = []
    for c in CARDS.values():
        out.append({"item_type": "card", "id": c.id, "name": c.name, "type": c.type,
                    "rarity": c.rarity, "cost": "X" if c.cost == "X" else
                    str(c.cost if c.cost is not None else -1),
                    "description": c.description(False)})
    for r in RELICS.values():
        out.append({"item_type": "relic", "id": r.id, "name": r.name,
                    "description": r.description})
    for p in POTIONS.values():
        out.append({"item_type": "potion", "id": p.id, "name": p.name,
                    "description": p.description})
    for m in MONSTERS.values():
        out.append({"item_type": "monster", "id": m.id, "name": m.name,
                    "min_hp": m.hp[0], "max_hp": m.hp[1]})
    for ch in CHARACTERS.values():
        out.append({"item_type": "character", "id": ch.id, "name": ch.name,
                    "description": f"{ch.hp} HP, {ch.gold} gold"})
    return out


def compendium(game: "Game") -> tuple[int, dict]:
    """``HandleGetCompendium``: profile progress and ``current_run`` (run identity from the
    save metadata); knob ``identity_outage_every``: a 500 "Failed to build compendium"."""
    game.save.compendium_reads += 1
    n = game.knobs.identity_outage_every
    if n and game.save.compendium_reads % n == 0:
        return 500, {"error": "Failed to build compendium: save metadata unavailable "
                              "(knob identity_outage_every)"}
    return 200, progress.compendium_body(game, game.save.current_run())


def profile(game: "Game") -> tuple[int, dict]:
    """``HandleGetProfile`` (``BuildProfile``)."""
    return 200, progress.profile_body(game, saves.timeline_fields(game)["epochs"])


def wiki(game: "Game", query: dict[str, str]) -> tuple[int, dict]:
    text = query.get("query", "").lower()
    item_type = query.get("item_type", "")
    limit_raw = query.get("limit", "20")
    try:
        limit = int(limit_raw)
    except ValueError:
        return 400, {"error": f"Invalid limit '{limit_raw}'"}
    if item_type and item_type not in ITEM_TYPES:
        return 400, {"error": f"Invalid item_type '{item_type}' (valid: {list(ITEM_TYPES)})"}
    hits = [e for e in _entries()
            if (not item_type or e["item_type"] == item_type)
            and (text in e["name"].lower() or text in e["id"].lower()
                 or text in e.get("description", "").lower())]
    return 200, {"query": query.get("query", ""), "item_type": item_type or None,
                 "count": min(len(hits), max(0, limit)), "total": len(hits),
                 "results": hits[:max(0, limit)]}


def profiles_get(game: "Game") -> tuple[int, dict]:
    cur = game.profile.profile_id
    return 200, {"current_profile_id": cur,
                 "profiles": [{"id": i, "name": f"Profile {i}", "is_current": i == cur}
                              for i in PROFILE_IDS]}


def profiles_post(game: "Game", body: dict | None) -> tuple[int, dict]:
    """McpMod.Profile.cs ``HandlePostProfiles`` / ``ExecuteProfileAction``: ``switch`` or
    ``delete`` a profile (1-3). A switch takes effect at once here (the real game asks for
    a restart or goes through its profile screen)."""
    if body is None or "action" not in body:
        return 400, {"error": "Missing 'action' field. Use: switch, delete"}
    problem = read_error("String", body["action"])
    if problem:
        return 500, {"error": f"Internal error: {problem}"}
    action = body["action"] or ""
    pid = body.get("profile_id")
    if json_kind(pid) != "Number":
        pid = 0
    elif read_error("Number", pid):
        return 500, {"error": f"Profile action failed: {read_error('Number', pid)}"}
    if pid not in PROFILE_IDS:
        return 200, _error("profile_id must be 1-3")
    verb = action.strip().lower()
    if verb == "switch":
        if game.run is not None:
            return 200, _error("Cannot switch profiles during a run")
        game.profile.profile_id = pid
        return 200, {"status": "ok", "message": f"Switched to profile {pid} (requires restart)",
                     "current_profile_id": pid}
    if verb == "delete":
        if pid == game.profile.profile_id:
            return 200, _error("Cannot delete the active profile")
        return 200, {"status": "ok", "message": f"Deleted profile {pid}"}
    return 200, _error(f"Unknown action: {action}. Use: switch, delete")


def _error(message: str) -> dict:
    return {"status": "error", "error": message}
