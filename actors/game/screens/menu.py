"""Menus and popups: main menu, singleplayer submenu, character select, tutorial popups.

Way into a run: main menu ``singleplayer`` → submenu ``standard`` → character select,
pick a character (``menu_select {"option": "ironbound"}``), then ``embark`` (optional
``seed``). The first embark of a profile shows a ``tutorial_prompt`` popup (``yes`` shows
a ``tutorial`` page, ``no`` closes it); the first card reward shows a ``popup``.
Popups are dismissed with ``menu_select`` naming one of their ``options``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..content import CARDS, CHARACTERS, RELICS
from ..errors import ActionRefused
from ..registry import action

if TYPE_CHECKING:
    from ..engine import Game
    from ..model import Run

MAIN_OPTIONS = ["singleplayer"]
BLOCKED_OPTIONS = ["multiplayer"]
SUBMENU = [("standard", True), ("daily", False), ("custom", False), ("back", True)]

POPUPS = {
    "card_reward": ("popup", "Card rewards",
                    "Picking a card adds it to your deck for the rest of the run.", ["ok"]),
}


def menu_block(game: "Game") -> dict:
    if game.menu_screen == "singleplayer":
        return {"menu_screen": "singleplayer",
                "options": [{"name": n, "enabled": e} for n, e in SUBMENU]}
    if game.menu_screen == "character_select":
        return {
            "menu_screen": "character_select",
            "characters": [character_view(c) for c in CHARACTERS],
            "options": [{"name": "embark", "enabled": game.selected_character is not None},
                        {"name": "back", "enabled": True}],
        }
    return {"menu_screen": "main", "options": list(MAIN_OPTIONS),
            "blocked_options": list(BLOCKED_OPTIONS)}


def character_view(cid: str) -> dict:
    c = CHARACTERS[cid]
    return {"name": c.name, "id": c.id, "locked": c.locked, "hp": c.hp, "gold": c.gold,
            "energy": c.energy, "starting_relics": [RELICS[r].name for r in c.starting_relics],
            "starting_deck": [CARDS[x].name for x in c.starting_deck]}


def find_character(option: str) -> str | None:
    low = option.lower()
    for c in CHARACTERS.values():
        if low in (c.id, c.name.lower(), c.name.lower().removeprefix("the ")):
            return c.id
    return None


@action("menu_select", ("option", str, True), ("seed", object, False), menu=True)
def menu_select(game: "Game", p: dict):
    option = p["option"]
    seed = p.get("seed")
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, (int, str))):
        from ..errors import ParamTypeError
        raise ParamTypeError("seed", "a string or an integer", seed)
    if game.popup is not None:
        return _popup_select(game, option)
    if game.run is not None:
        from .gameover import GameOver
        top = game.run.top
        if isinstance(top, GameOver):
            return top.menu_select(game, option)
        raise ActionRefused("menu_select is only available on menus and the game over "
                            "screen")
    return _menu_select(game, option, seed)


def _popup_select(game: "Game", option: str):
    popup = game.popup
    assert popup is not None
    if option not in popup.options:
        raise ActionRefused(f"Invalid option '{option}' (available: {popup.options})")

    def effect() -> None:
        game.popup = None
        popup.on_choose(option)
    return f"Selected '{option}'", effect


def _menu_select(game: "Game", option: str, seed):
    screen = game.menu_screen
    if screen == "main":
        if option in BLOCKED_OPTIONS:
            raise ActionRefused(f"Option '{option}' is blocked")
        if option != "singleplayer":
            raise ActionRefused(f"Invalid option '{option}' (available: {MAIN_OPTIONS})")
        return "Opening singleplayer", lambda: setattr(game, "menu_screen", "singleplayer")
    if screen == "singleplayer":
        enabled = {n for n, e in SUBMENU if e}
        if option not in enabled:
            raise ActionRefused(f"Option '{option}' is not available")
        if option == "back":
            return "Back", lambda: setattr(game, "menu_screen", "main")
        return "Opening character select", lambda: _to_char_select(game)
    return _char_select(game, option, seed)


def _to_char_select(game: "Game") -> None:
    game.menu_screen = "character_select"
    game.selected_character = None


def _char_select(game: "Game", option: str, seed):
    if option == "back":
        return "Back", lambda: setattr(game, "menu_screen", "singleplayer")
    if option == "embark":
        character = game.selected_character
        if character is None:
            raise ActionRefused("Embark is disabled: pick a character first")
        run_seed = game.seed if seed is None else seed
        return f"Embarking as {CHARACTERS[character].name}", lambda: embark(
            game, character, run_seed)
    cid = find_character(option)
    if cid is None:
        raise ActionRefused(f"Unknown character or option '{option}'")
    if CHARACTERS[cid].locked:
        raise ActionRefused(f"Character '{cid}' is locked")
    return f"Selected {CHARACTERS[cid].name}", lambda: setattr(
        game, "selected_character", cid)


def embark(game: "Game", character: str, seed) -> None:
    from ..runflow import start_run

    game.menu_screen = "main"
    game.selected_character = None
    start_run(game, character, seed)
    if "tutorial_prompt" not in game.profile.seen:
        game.profile.seen.add("tutorial_prompt")
        _show(game, "tutorial_prompt", "Tutorial", "Would you like a short tutorial?",
              ["yes", "no"], lambda opt: _tutorial(game) if opt == "yes" else None)


def _tutorial(game: "Game") -> None:
    _show(game, "tutorial", "How to play",
          "Play cards with energy, block incoming attacks, and reach the boss.",
          ["continue"], lambda opt: None)


def _show(game: "Game", screen: str, title: str, message: str, options, on_choose) -> None:
    from ..engine import Popup

    game.popup = Popup(screen, title, message, list(options), on_choose)


def maybe_popup(game: "Game", key: str) -> None:
    if key in game.profile.seen or key not in POPUPS:
        return
    game.profile.seen.add(key)
    screen, title, message, options = POPUPS[key]
    _show(game, screen, title, message, options, lambda opt: None)


def return_to_menu(game: "Game") -> None:
    game.run = None
    game.menu_screen = "main"
    game.pending.clear()
    game.timers.clear()


def replace_run(game: "Game", run: "Run") -> None:
    """Knob ``replace_run_after_actions``: a new run with the same seed replaces ``run``."""
    from ..runflow import start_run

    start_run(game, run.character, run.seed)
