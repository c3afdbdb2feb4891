"""Tutorials and popups: states that replace the whole state, even mid-run.

Shapes follow McpMod.Helpers.cs ``BuildVisibleFtueState`` / ``BuildVisiblePopupState``;
their ``menu_select`` answers follow McpMod.Actions.cs ``ExecuteMenuSelect`` and
``ExecutePopupOption``. While one shows, every other action is refused with the
"Blocking popup active..." error (engine), and the run underneath is untouched.

When they occur:
- ``tutorial_prompt`` ("Enable Tutorials?"): at the first embark of a profile.
  ``yes`` turns the profile's tutorials on, ``no`` off.
- ``tutorial`` (a first-time FTUE): with tutorials on, the first time a profile sees
  each in-run screen (map, combat, rewards, card reward, shop, rest site, event,
  treasure). Knob ``ftue_unready_reads``: its advance/proceed buttons stay disabled for
  its first N reads.
- ``popup`` (a vertical popup): knob ``popup_every_reads``: every Nth state read inside a
  run opens one of a few invented notices; knob ``first_run_warning``: over a fresh
  profile's first character select; also the main menu's "abandon run?" question.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from .. import rng
from ..errors import ActionRefused
from ..world import World

FTUE_SCREENS = ("map", "monster", "elite", "boss", "rewards", "card_reward", "shop", "rest_site", "event", "treasure")
PROMPT_MESSAGE = "Enable Tutorials? Choose yes or no."
FTUE_MESSAGE = "Tutorial popup active. Use advance to dismiss."
NO_ADVANCE = (
    "Tutorial popup visible but no actionable advance/proceed control is available; retry after the next state poll"
)
# invented notices (title, body, options as (name, enabled)); a disabled option included
NOTICES = (
    ("Cloud Sync", "Your progress could not be synced. It will be retried later.", (("ok", True),)),
    ("Popup active.", None, (("ok", True),)),  # loose popup buttons, no NVerticalPopup
    ("Feedback", "Would you like to tell us about this run?", (("yes", True), ("no", True))),
    ("Early Access", "This content is still in development.", (("ignore", True), ("report", False))),
)


FIRST_RUN = ("Early Access", "Content, balance and save data may change between updates.", (("continue", True),))


@dataclass
class Popup:
    kind: str  # tutorial_prompt | tutorial | popup
    message: str
    body: str | None = None
    options: tuple[tuple[str, bool], ...] = ()
    on_choose: Callable[[str], None] = lambda option: None
    unready_reads: int = 0  # tutorial: advance/proceed disabled while > 0

    def view(self) -> dict:
        """The state's fields (``state_type`` is added by the engine)."""
        if self.kind == "tutorial_prompt":
            return {
                "menu_screen": "tutorial_prompt",
                "message": PROMPT_MESSAGE,
                "options": [{"name": "no", "enabled": True}, {"name": "yes", "enabled": True}],
            }
        if self.kind == "tutorial":
            can = self.unready_reads <= 0
            return {
                "menu_screen": "tutorial",
                "message": FTUE_MESSAGE,
                "options": [{"name": "advance", "enabled": can}, {"name": "proceed", "enabled": can}],
            }
        return {
            "menu_screen": "popup",
            "message": self.message,
            "body": self.body,
            "options": [{"name": n, "enabled": e} for n, e in self.options],
        }

    def select(self, game: World, option: str) -> tuple[str, Callable[[], None]]:
        """Validate ``menu_select`` of ``option``; return (message, effect)."""
        low = option.lower()
        if self.kind == "tutorial_prompt":
            if low not in ("yes", "no"):
                raise ActionRefused(f"Unknown tutorial prompt option: {option}. Use: yes, no")
            return (f"Tutorials: {'enabled' if low == 'yes' else 'disabled'}", lambda: self._close(game, low))
        if self.kind == "tutorial":
            if low not in ("advance", "proceed"):
                raise ActionRefused(f"Unknown tutorial option: {option}. Use: advance, proceed")
            if self.unready_reads > 0:
                raise ActionRefused(NO_ADVANCE)
            return "Dismissed tutorial popup", lambda: self._close(game, low)
        for name, enabled in self.options:
            if name.lower() == low:
                if not enabled:
                    raise ActionRefused(f"Popup option '{name}' is disabled")
                return f"Selected popup option: {name}", lambda: self._close(game, name)
        names = ", ".join(n for n, _ in self.options)
        raise ActionRefused(f"Popup option '{option}' is not actionable. Use: {names}")

    def _close(self, game: World, option: str) -> None:
        if game.popup is self:
            game.popup = None
            self.on_choose(option)


def show_tutorial_prompt(game: World) -> None:
    """The "Enable Tutorials?" prompt of a fresh profile (once per profile)."""
    game.profile.seen.add("tutorial_prompt")

    def answer(option: str) -> None:
        game.profile.tutorials = option == "yes"

    game.popup = Popup("tutorial_prompt", PROMPT_MESSAGE, on_choose=answer)


def maybe_ftue(game: World, state_type: str) -> None:
    """Open the first-time tutorial for ``state_type`` when it is due."""
    key = "combat" if state_type in ("monster", "elite", "boss") else state_type
    if not game.profile.tutorials or state_type not in FTUE_SCREENS or key in game.profile.seen:
        return
    game.profile.seen.add(key)
    game.popup = Popup("tutorial", FTUE_MESSAGE, unready_reads=game.knobs.ftue_unready_reads)


def show_popup(
    game: World,
    title: str,
    body: str | None,
    options: tuple[tuple[str, bool], ...],
    on_choose: Callable[[str], None] = lambda option: None,
) -> None:
    game.popup = Popup("popup", title, body, options, on_choose)


def maybe_first_run_warning(game: World) -> None:
    """Knob ``first_run_warning``: a fresh profile's first character select opens a popup
    (the "first-run warning" McpMod.Actions.cs ``ExecuteMenuSelect`` mentions; our text)."""
    if game.knobs.first_run_warning and "first_run_warning" not in game.profile.seen:
        game.profile.seen.add("first_run_warning")
        show_popup(game, *FIRST_RUN)


def on_read(game: World) -> None:
    """Per state read: count down a tutorial's disabled buttons; maybe open a notice."""
    popup = game.popup
    if popup is not None and popup.unready_reads > 0:
        popup.unready_reads -= 1
        return
    n = game.knobs.popup_every_reads
    if n and popup is None and game.run is not None and game.waiting == 0 and game.reads % n == 0:
        title, body, options = rng.stream(game.seed, "popup", game.reads).choice(NOTICES)
        show_popup(game, title, body, options)
