"""The ``event`` screen (McpMod.StateBuilder.cs ``BuildEventState``) and its actions
``choose_event_option`` / ``advance_dialogue`` (McpMod.Actions.cs
``ExecuteChooseEventOption``, ``ExecuteAdvanceDialogue``).

State: ``{event_id, event_name, is_ancient, in_dialogue, body, options[{index, title,
description, is_locked, is_proceed, was_chosen, [relic_name, relic_description],
keywords}]}``. Only an ancient (an act's opening event) has dialogue; while it runs the
option buttons are not shown (``options: []``). Choosing an option applies it and turns
the page: ``body`` becomes the outcome and a single ``Proceed`` option
(``is_proceed: true``) is left - unless the event grants more picks (``picks``, the act-2
ancient: two), when the options stay, the chosen one ``was_chosen`` and locked; a proceed
option opens the map (events do not take the ``proceed`` action: ``ExecuteProceed`` has no
event branch). An option that opens a
selection (bundle, relic, card select, crystal sphere) puts it on top; while it is open
the event shows no option buttons.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from ..content import RELICS
from ..errors import ActionRefused
from ..model import Screen, open_map, room_of
from ..registry import action, in_range
from ..views import hover_tips
from ..world import World

PROCEED_TITLE = "Proceed"


@dataclass
class Option:
    title: str
    description: str
    apply: Callable[[World, EventRoom], None] | None  # None: a proceed option
    locked: bool = False
    relic: str | None = None  # the relic the option gives (relic_name/_description)
    keywords: tuple[str, ...] = ()
    was_chosen: bool = False

    def view(self, index: int) -> dict:
        view = {
            "index": index,
            "title": self.title,
            "description": self.description,
            "is_locked": self.locked,
            "is_proceed": self.apply is None,
            "was_chosen": self.was_chosen,
        }
        if self.relic is not None:
            view["relic_name"] = RELICS[self.relic].name
            view["relic_description"] = RELICS[self.relic].description
        view["keywords"] = hover_tips(self.keywords)
        return view


def proceed_option() -> Option:
    return Option(PROCEED_TITLE, "Proceed.", None)


@dataclass(eq=False)
class EventRoom(Screen):
    event_id: str
    name: str
    body: str
    options: list[Option]
    dialogue: list[str] = field(default_factory=list)
    is_ancient: bool = False
    picks: int = 1  # options to choose before the page turns to Proceed
    dialogue_pos: int = 0

    state_type = "event"
    room_type = "EventRoom"

    @property
    def in_dialogue(self) -> bool:
        return self.is_ancient and self.dialogue_pos < len(self.dialogue)

    def buttons(self, game: World) -> list[Option]:
        """The option buttons a player can click now (none during the dialogue, under an
        open selection or once the map is open)."""
        run = game.run
        if self.in_dialogue or run.overlays or run.map_open:
            return []
        return self.options

    def block(self, game: World) -> dict:
        return {
            "event_id": self.event_id,
            "event_name": self.name,
            "is_ancient": self.is_ancient,
            "in_dialogue": self.in_dialogue,
            "body": self.body,
            "options": [o.view(i) for i, o in enumerate(self.buttons(game))],
        }

    def turn_page(self, body: str) -> None:
        self.body = body
        if self.picks <= 0:
            self.options = [proceed_option()]


def _need_event(game: World) -> Screen:
    room = room_of(game)
    if not (isinstance(room, EventRoom) or getattr(room, "room_type", "") == "EventRoom"):
        raise ActionRefused("Event room is not open")
    return room


@action("choose_event_option")
def choose_event_option(game: World, p):
    room = _need_event(game)
    index = p.int("index", "Missing 'index' (event option index)")
    buttons = room.buttons(game) if isinstance(room, EventRoom) else []
    if not buttons:
        raise ActionRefused("No event options available")
    opt = in_range(buttons, index, f"Event option index {index} out of range ({len(buttons)} options)")
    if opt.locked:
        raise ActionRefused(f"Event option {index} is locked")

    def effect() -> None:
        opt.was_chosen = True
        if opt.apply is None:
            open_map(game)
            return
        room.picks -= 1
        opt.locked = room.picks > 0
        opt.apply(game, room)

    return f"Choosing event option: {opt.title}", effect


@action("advance_dialogue")
def advance_dialogue(game: World, p):
    room = _need_event(game)
    if not (isinstance(room, EventRoom) and room.is_ancient):
        raise ActionRefused("No ancient dialogue active")
    if not room.in_dialogue:
        raise ActionRefused("Dialogue hitbox not available - dialogue may have ended")
    return "Advancing dialogue", lambda: setattr(room, "dialogue_pos", room.dialogue_pos + 1)
