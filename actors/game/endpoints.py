"""The non-gameplay endpoints: ``/``, compendium and profile (bodies in ``progress``),
profiles, and the multiplayer route's view of a state (the wiki: ``wiki``).

Each function takes the game (under its lock) and returns ``(http_status, json_body)``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from . import progress
from .errors import ActionRefused, json_kind, read_error
from .screens import saves

if TYPE_CHECKING:
    from .engine import Game

VERSION = "0.4.0-gamerig"


def multiplayer_view(state: dict) -> dict:
    """A run's state on the multiplayer route (knob ``multiplayer_run``): the metadata
    McpMod.MultiplayerState.cs ``BuildMultiplayerGameState`` puts first, then the
    singleplayer state (a simplification: its battle block is the singleplayer one)."""
    if state.get("state_type") == "menu" or "run" not in state:
        return state
    return {"game_mode": "multiplayer", "net_type": "Host", "player_count": 1, "local_player_slot": 0, **state}


def root() -> tuple[int, dict]:
    return 200, {"message": f"Hello from STS2 MCP v{VERSION}", "status": "ok"}


def compendium(game: Game) -> tuple[int, dict]:
    """``HandleGetCompendium``: profile progress and ``current_run`` (run identity from the
    save metadata); knob ``identity_outage_every``: a 500 "Failed to build compendium"."""
    game.save.compendium_reads += 1
    n = game.knobs.identity_outage_every
    if n and game.save.compendium_reads % n == 0:
        return 500, {"error": "Failed to build compendium: save metadata unavailable (knob identity_outage_every)"}
    return 200, progress.compendium_body(game, game.save.current_run())


def profile(game: Game) -> tuple[int, dict]:
    """``HandleGetProfile`` (``BuildProfile``)."""
    return 200, progress.profile_body(game, saves.timeline_fields(game)["epochs"])


def profiles_get(game: Game) -> tuple[int, dict]:
    """``HandleGetProfiles``."""
    return 200, progress.profiles_summary(game)


def profiles_post(game: Game, body: dict | None) -> tuple[int, dict]:
    """McpMod.Profile.cs ``HandlePostProfiles`` / ``ExecuteProfileAction``: ``switch`` or
    ``delete`` a profile (1-3); applied at once (``progress.profile_action``)."""
    if body is None or "action" not in body:
        return 400, {"error": "Missing 'action' field. Use: switch, delete"}
    problem = read_error("String", body["action"])
    if problem:
        return 500, {"error": f"Internal error: {problem}"}
    pid = body.get("profile_id")
    if json_kind(pid) != "Number":
        pid = 0
    elif read_error("Number", pid):
        return 500, {"error": f"Profile action failed: {read_error('Number', pid)}"}
    try:
        message, effect, extra = progress.profile_action(game, body["action"] or "", pid)
    except ActionRefused as exc:
        return 200, _error(str(exc))
    effect()
    return 200, {"status": "ok", "message": message, **extra}


def _error(message: str) -> dict:
    return {"status": "error", "error": message}
