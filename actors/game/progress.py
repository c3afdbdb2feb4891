"""The profile's progress, as ``GET /api/v1/profile`` and ``GET /api/v1/compendium``
report it (McpMod.Profile.cs ``BuildProfile``; McpMod.Compendium.cs
``BuildCompendiumSnapshot`` / ``BuildCompendiumResponse``).

The game records a run when it starts (its starting cards and relics are "discovered") and
when it ends (a win or a loss for its character; abandoning counts as a loss). Fight,
ancient and achievement statistics are not kept: their lists are empty. Run history has no
files: the ``exposed_empty`` variant.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .errors import ActionRefused
from .model import Run
from .world import World

SOURCE = "SaveManager.Progress and active-profile save files"


@dataclass
class Profile:
    profile_id: int = 1
    seen: set[str] = field(default_factory=set)  # tutorial keys this profile has seen
    tutorials: bool | None = None  # the answer to "Enable Tutorials?" (None: not asked)
    victories: int = 0
    defeats: int = 0
    runs: int = 0
    floors_climbed: int = 0
    by_character: dict[str, list[int]] = field(default_factory=dict)  # id → [wins, losses]
    cards: list[str] = field(default_factory=list)  # discovered, in order
    relics: list[str] = field(default_factory=list)
    potions: list[str] = field(default_factory=list)


def _discover(into: list[str], ids) -> None:
    for x in ids:
        if x not in into:
            into.append(x)


def record_start(game: World, run: Run) -> None:
    """A run began: count it; its starting cards and relics are discovered."""
    p = game.profile
    p.runs += 1
    _discover(p.cards, [c.cid for c in run.deck])
    _discover(p.relics, [r.rid for r in run.relics])


def record_end(game: World, run: Run, victory: bool) -> None:
    """A run ended (``victory`` False for a death or an abandon)."""
    p = game.profile
    if victory:
        p.victories += 1
    else:
        p.defeats += 1
    p.floors_climbed += run.floor
    stats = p.by_character.setdefault(run.character.upper(), [0, 0])
    stats[0 if victory else 1] += 1
    _discover(p.cards, [c.cid for c in run.deck])
    _discover(p.relics, [r.rid for r in run.relics])
    _discover(p.potions, [x for x in run.potions if x])


def _characters(p: Profile) -> list[dict]:
    return [
        {
            "id": cid,
            "max_ascension": 0,
            "preferred_ascension": 0,
            "total_wins": w,
            "total_losses": lost,
            "fastest_win_time": 0,
            "best_win_streak": min(w, 1),
            "current_win_streak": 0,
            "playtime": (w + lost) * 600,
        }
        for cid, (w, lost) in p.by_character.items()
    ]


def _card_stats(p: Profile) -> list[dict]:
    return [{"id": c, "times_picked": 0, "times_skipped": 0, "times_won": 0, "times_lost": 0} for c in p.cards]


def _totals(p: Profile) -> dict:
    return {
        "total_playtime": (p.victories + p.defeats) * 600,
        "total_unlocks": 0,
        "current_score": 0,
        "floors_climbed": p.floors_climbed,
        "architect_damage": 0,
        "total_wins": p.victories,
        "total_losses": p.defeats,
        "fastest_victory": 0,
        "best_win_streak": min(p.victories, 1),
        "number_of_runs": p.runs,
    }


def profile_body(game: World, epochs: list[dict]) -> dict:
    """``BuildProfile``'s answer."""
    p = game.profile
    return {
        "characters": _characters(p),
        "card_stats": _card_stats(p),
        "encounter_stats": [],
        "enemy_stats": [],
        "ancient_stats": [],
        "discovered_cards": list(p.cards),
        "discovered_relics": list(p.relics),
        "discovered_potions": list(p.potions),
        "discovered_events": [],
        "discovered_acts": [],
        "achievements": [],
        "epochs": [{"id": e["id"], "state": e["state"], "obtained": e["obtained"]} for e in epochs],
        **_totals(p),
    }


def compendium_body(game: World, current_run: dict | None) -> dict:
    """``BuildCompendiumResponse``'s answer around ``current_run``."""
    p = game.profile
    return {"profile_id": p.profile_id, "current_run": current_run, "source": SOURCE, "sections": _sections(p)}


def _sections(p: Profile) -> dict[str, Any]:
    return {
        "card_library": {
            "ui_label": "Card Library",
            "status": "exposed",
            "source": "/api/v1/profile card_stats and discovered_cards",
            "metadata_limitation": "This endpoint exposes profile-level discovery and "
            "aggregate card stats. Card rules text remains available through game state "
            "when cards are visible in a run.",
            "discovered_ids": list(p.cards),
            "stats": _card_stats(p),
        },
        "relic_collection": {
            "ui_label": "Relic Collection",
            "status": "partially_exposed",
            "source": "/api/v1/profile discovered_relics",
            "discovered_ids": list(p.relics),
            "limitation": "Profile exposes discovered relic IDs; per-relic descriptions and "
            "obtained counts are not exposed by a typed profile API here.",
        },
        "potion_lab": {
            "ui_label": "Potion Lab",
            "status": "partially_exposed",
            "source": "/api/v1/profile discovered_potions",
            "discovered_ids": list(p.potions),
            "limitation": "Profile exposes discovered potion IDs; per-potion rules text and "
            "lab UI metadata are not exposed by a typed profile API here.",
        },
        "bestiary": {
            "ui_label": "Bestiary",
            "status": "locked_in_ui",
            "source": "SaveManager.Progress encounter and enemy fight stats",
            "encounter_stats": [],
            "enemy_stats": [],
            "limitation": "The current game UI labels Bestiary as future/locked; this "
            "endpoint exposes profile fight stats when available, not a full enemy metadata "
            "catalog.",
        },
        "character_stats": {
            "ui_label": "Character Stats",
            "status": "exposed",
            "source": "/api/v1/profile characters and global totals",
            "characters": _characters(p),
            "global": _totals(p),
        },
        "run_history": {
            "ui_label": "Run History",
            "status": "exposed_empty",
            "source": "SaveManager.Progress reflected run-history members",
            "entries": {},
            "limitation": "No run-history files or typed run-history members were found for the active profile.",
        },
    }


# ----- profiles (McpMod.Profile.cs ExecuteProfileAction) ---------------------------------
PROFILE_IDS = (1, 2, 3)


def profile_action(game: World, action: str, pid: int) -> tuple[str, Any, dict]:
    """Validate ``switch`` / ``delete`` of profile ``pid``: (message, effect, extra reply
    fields); raises ActionRefused with the mod's texts. With no run, a switch first opens
    the profile screen (the main menu is showing), and a second switch picks the profile
    there; ``delete`` forgets a profile's progress."""
    if pid not in PROFILE_IDS:
        raise ActionRefused("profile_id must be 1-3")
    verb = action.strip().lower()
    if verb == "switch":
        if game.run is not None:
            raise ActionRefused("Cannot switch profiles during a run")
        if game.menu_screen != "profile_select":
            return (
                "Opened profile screen. Send switch again to select profile.",
                lambda: setattr(game, "menu_screen", "profile_select"),
                {},
            )

        def switch() -> None:
            game.profile = game.profiles[pid]
            game.menu_screen = "main"

        return (
            f"Switch requested for profile {pid} (via UI)",
            switch,
            {"target_profile_id": pid, "current_profile_id": game.profile.profile_id},
        )
    if verb == "delete":
        if pid == game.profile.profile_id:
            raise ActionRefused("Cannot delete the active profile")
        return (f"Deleted profile {pid}", lambda: game.profiles.__setitem__(pid, Profile(pid)), {})
    raise ActionRefused(f"Unknown action: {action}. Use: switch, delete")


def profiles_summary(game: World) -> dict:
    """``BuildProfilesSummary``."""
    cur = game.profile.profile_id
    return {
        "current_profile_id": cur,
        "profiles": [
            {
                "id": i,
                "is_current": i == cur,
                "has_data": game.profiles[i].runs > 0,
                "path": f"user://profile{i}/saves/progress.save",
                "resolved_path": f"/saves/modded/profile{i}/saves/progress.save",
            }
            for i in PROFILE_IDS
        ],
    }
