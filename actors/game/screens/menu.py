"""Menus: main menu, singleplayer and multiplayer submenus, character select, timeline,
compendium and settings; ``menu_select`` everywhere (popups delegate to ``popups``).

States follow McpMod.StateBuilder.cs ``BuildGameState`` (menu branch) and
``AddCharacterSelectMenuState``; answers follow McpMod.Actions.cs ``ExecuteMenuSelect``
(its order: game over, tutorial prompt, tutorial, popup, timeline, character select,
submenus, main menu buttons, "Not on a menu screen") and
``ExecuteCharacterSelectMenuOption`` / ``ExecuteProfileSelectMenuOption``. Options are
matched case-insensitively. The profile screen opens from ``POST /api/v1/profiles``.

Way into a run: main menu ``singleplayer`` → ``standard`` → a character id →
``embark`` (or ``confirm``), with an optional ``seed``. What a seeded embark meets is the
character select's lobby (``ExecuteCharacterSelectMenuOption``: no lobby, the mod refuses; a
lobby's ``SetSeed`` throws, the mod refuses with the game's text; else the lobby keeps the
seed and the run is generated from it): knob ``char_select_lobby`` chooses which (0, 1, 2).
Screens the built-in game does not model (docs/game.md):
``multiplayer`` shows host/join disabled; ``compendium`` and ``settings`` have no
options (the mod offers none: only the /__gamerig/manual endpoint leaves them);
``timeline`` has nothing to advance; ``quit`` closes the server.
"""

from __future__ import annotations

from collections.abc import Callable

from ..content import CARDS, CHARACTERS, POTIONS, RELICS
from ..errors import ActionRefused, ParamTypeError, read_error
from ..progress import PROFILE_IDS, profile_action
from ..render import TopLevel
from ..world import World
from .gameover import GameOver
from .popups import maybe_first_run_warning
from .saves import TIMELINE_BLOCKED, ask_abandon, continue_run, embark, pending_epoch_ids, timeline_fields

MAIN_BUTTONS = ("continue", "abandon_run", "singleplayer", "multiplayer", "compendium", "timeline", "settings", "quit")
SUBMENU = (("standard", True), ("daily", False), ("custom", False))
MP_SUBMENU = (("host", False), ("join", False))  # no network play in the built-in game
MESSAGES = {
    "main": "Main menu.",
    "singleplayer": "Select game mode.",
    "multiplayer": "Multiplayer menu.",
    "compendium": "Compendium screen.",
    "settings": "Settings screen.",
    "timeline": "Timeline screen.",
    "character_select": "Select a character.",
    "profile_select": "Profile select screen.",
}
BLURBS = {"ironbound": "A warrior who mends between fights.", "wanderer": "A traveller with a lucky streak."}
# McpMod.Actions.cs ExecuteCharacterSelectMenuOption: a seeded embark without a lobby; one whose
# Lobby.SetSeed threw (the exception's message follows); one a lobby took
SEEDED = (
    "Seeded embark is not supported for standard singleplayer from this API. "
    "Seed was not applied and the run was not started."
)
SEED_FAILED = "Seeded embark failed before starting the run: "
# the message of the exception the game's standard-mode character select throws when its
# lobby's seed changes (NCharacterSelectScreen.SeedChanged: the game's code, not the mod's)
STANDARD_MODE = "Seed should not be changed in standard mode!"
NO_LOBBY, STANDARD_LOBBY, SEED_LOBBY = 0, 1, 2  # knob char_select_lobby
Reply = tuple  # (message, effect) or (message, effect, extra reply fields)


# ----- views -------------------------------------------------------------------------
def menu_view(game: World) -> TopLevel:
    """The menu state's fields (no run)."""
    screen = game.menu_screen
    view = TopLevel(menu_screen=screen, message=MESSAGES[screen])
    if screen == "main":
        options, blocked = main_options(game)
        if options:
            view["options"] = options
        if blocked:
            view["blocked_options"] = blocked
    elif screen in ("singleplayer", "multiplayer"):
        rows = SUBMENU if screen == "singleplayer" else MP_SUBMENU
        view["options"] = [{"name": n, "enabled": e} for n, e in rows] + [{"name": "back", "enabled": True}]
    elif screen == "character_select":
        view.update(character_select_view(game))
    elif screen == "profile_select":
        view["current_profile_id"] = game.profile.profile_id
        view["options"] = [{"name": f"profile_{i}", "enabled": True} for i in PROFILE_IDS] + [
            {"name": "back", "enabled": True}
        ]
    elif screen == "timeline":
        view["options"] = [{"name": "advance", "enabled": True}, {"name": "back", "enabled": True}]
        view.update(timeline_fields(game))
    return view


def main_options(game: World) -> tuple[list[str], list[dict]]:
    """The visible main-menu buttons, and ``timeline`` blocked while epochs wait."""
    options: list[str] = []
    blocked: list[dict] = []
    pending = pending_epoch_ids(game)
    for label in MAIN_BUTTONS:
        if label in ("continue", "abandon_run") and game.saved is None:
            continue
        if label == "timeline" and pending:
            blocked.append(
                {
                    "name": "timeline",
                    "enabled": False,
                    "reason": "manual_epoch_reveal_required",
                    "pending_epoch_ids": pending,
                }
            )
            continue
        options.append(label)
    return options, blocked


def character_select_view(game: World) -> dict:
    chosen = game.selected_character is not None
    options = [{"name": c.id.upper(), "enabled": not c.locked} for c in CHARACTERS.values()]
    options += [
        {"name": "confirm", "enabled": chosen},
        {"name": "embark", "enabled": chosen},
        {"name": "back", "enabled": True},
    ]
    return {"characters": [character_view(cid) for cid in CHARACTERS], "options": options}


def character_view(cid: str) -> dict:
    c = CHARACTERS[cid]
    view = {
        "name": c.name,
        "id": c.id.upper(),
        "locked": c.locked,
        "hp": c.hp,
        "gold": c.gold,
        "energy": c.energy,
        "description": BLURBS.get(cid),
    }
    if c.starting_relics:
        view["starting_relics"] = [
            {"name": RELICS[r].name, "description": RELICS[r].description} for r in c.starting_relics
        ]
    if c.starting_deck:
        view["starting_deck"] = [CARDS[x].name for x in c.starting_deck]
    view["total_cards"] = sum(1 for d in CARDS.values() if d.type not in ("Status", "Curse"))
    view["total_relics"] = len(RELICS)
    view["total_potions"] = len(POTIONS)
    return view


# ----- menu_select -------------------------------------------------------------------
def read_menu_params(body: dict) -> tuple[str, str | None]:
    """``option`` and ``seed`` as McpMod.cs ``HandlePostAction`` reads them (``GetString``:
    absent or null → "" / None; any other non-string → HTTP 500 "Menu action failed")."""
    values = []
    for name in ("option", "seed"):
        value = body.get(name)
        if read_error("String", value):
            raise ParamTypeError(name, "String", value)
        values.append(value)
    return values[0] or "", values[1]


def menu_select(game: World, option: str, seed: str | None) -> Reply:
    """Validate ``menu_select``; return (message, effect[, extra])."""
    option = option.strip()
    if not option:
        raise ActionRefused("Missing menu option")
    run = game.run
    if run is not None and isinstance(run.top, GameOver):
        return run.top.menu_select(game, option)
    if game.popup is not None:
        return game.popup.select(game, option)
    if game.run is None and game.menu_screen == "timeline":
        return _timeline(game, option)
    if game.run is None and game.menu_screen == "character_select":
        return _char_select(game, option, seed)
    if game.run is None and game.menu_screen == "profile_select":
        return _profile_select(game, option)
    if game.run is None:
        return _submenus(game, option)
    raise ActionRefused("Not on a menu screen")


def _goto(game: World, screen: str) -> Callable[[], None]:
    def effect() -> None:
        game.menu_screen = screen
        if screen == "character_select":
            game.selected_character = None
            maybe_first_run_warning(game)
        game.lobby_seed = None  # a lobby lives while its character select is shown

    return effect


def _submenus(game: World, option: str) -> Reply:
    low = option.lower()
    screen = game.menu_screen
    if screen in ("singleplayer", "multiplayer"):
        if low == "back":
            return "Going back", _goto(game, "main")
        rows = dict(SUBMENU if screen == "singleplayer" else MP_SUBMENU)
        names = [n for n, _ in (SUBMENU if screen == "singleplayer" else MP_SUBMENU)]
        if screen == "multiplayer":
            names += ["load", "abandon"]
        if low not in names:
            use = ", ".join(names + ["back"])
            raise ActionRefused(f"Unknown {screen} option: {option}. Use: {use}")
        if not rows.get(low, False):
            raise ActionRefused(
                f"Option '{option}' is not available" + (" (locked)" if screen == "singleplayer" else "")
            )
        return f"Selected {option}", _goto(game, "character_select")
    return _main_button(game, option)


def _main_button(game: World, option: str) -> Reply:
    low = option.lower()
    pending = pending_epoch_ids(game)
    if low == "timeline" and pending:
        raise ActionRefused(TIMELINE_BLOCKED, {"pending_epoch_ids": pending, "manual_action_required": True})
    if low not in MAIN_BUTTONS:
        raise ActionRefused(f"Unknown menu option: {option}")
    if game.menu_screen != "main" or low not in main_options(game)[0]:
        raise ActionRefused(f"Option '{option}' is not available")
    if low == "continue":
        return f"Selected {option}", lambda: continue_run(game)
    if low == "abandon_run":
        return f"Selected {option}", lambda: ask_abandon(game)
    if low == "quit":
        return f"Selected {option}", lambda: setattr(game, "quit_requested", True)
    return f"Selected {option}", _goto(game, low)


def _timeline(game: World, option: str) -> Reply:
    low = option.lower()
    if low in ("advance", "proceed"):
        return "No more epochs to advance", lambda: None, {"done": True}
    if low == "back":
        return "Going back from timeline", _goto(game, "main")
    raise ActionRefused(f"Unknown timeline option: {option}. Use: advance, back")


def _profile_select(game: World, option: str) -> Reply:
    """``ExecuteProfileSelectMenuOption``: back, or ``profile_N`` / ``slot_N`` / ``N``."""
    low = option.lower()
    if low == "back":
        return "Going back from profile select", _goto(game, "main")
    number = low.removeprefix("profile_") if low.startswith("profile_") else low.removeprefix("slot_")
    if not number.strip().lstrip("+-").isdigit():
        raise ActionRefused(f"Unknown profile select option: {option}. Use: profile_1, profile_2, profile_3, back")
    return profile_action(game, "switch", int(number))


def _char_select(game: World, option: str, seed: str | None) -> Reply:
    low = option.lower()
    if low == "back":
        return "Going back", _goto(game, "singleplayer")
    if low == "unready":
        raise ActionRefused("Unready button not available — you have not confirmed yet")
    if low in ("confirm", "embark"):
        lobby_seed = game.lobby_seed
        if seed is not None and seed.strip():
            seed = lobby_seed = _set_lobby_seed(game, seed.strip())
        character = game.selected_character
        if character is None:
            # the lobby took the seed before the embark button was looked at: it keeps it
            game.lobby_seed = lobby_seed
            raise ActionRefused("Embark button not available — select a character first")
        # the reply names the seed as sent (a blank one too: the source tests it for
        # IsNullOrEmpty, untrimmed); the run takes the lobby's seed, if it has one
        message = "Embarking on run" if not seed else f"Embarking on run (seed: {seed})"
        return message, lambda: embark(game, character, lobby_seed)
    for c in CHARACTERS.values():
        if low in (c.id.lower(), c.name.lower()):
            if c.locked:
                raise ActionRefused(f"Character '{option}' is locked")
            return (f"Selected {c.name}. Use 'confirm' to embark.", lambda: setattr(game, "selected_character", c.id))
    available = ", ".join(c.id.upper() for c in CHARACTERS.values() if not c.locked)
    raise ActionRefused(f"Character '{option}' not found. Available: {available}")


def _set_lobby_seed(game: World, seed: str) -> str:
    """``charSelect.Lobby.SetSeed(seed)``, before the embark button is looked at: refused
    without a lobby, or when ``SetSeed`` throws; a lobby that takes it holds it (the caller
    keeps it on the lobby, also when the embark is then refused for want of a character)."""
    lobby = game.knobs.char_select_lobby
    if lobby == NO_LOBBY:
        raise ActionRefused(SEEDED)
    if lobby == STANDARD_LOBBY:
        raise ActionRefused(SEED_FAILED + STANDARD_MODE)
    return seed
