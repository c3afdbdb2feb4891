"""Events (``event`` and ``fake_merchant`` screens): dialogue, options, the opening event.

An event may open with dialogue lines (``in_dialogue: true``, no options) that
``advance_dialogue`` steps through. Choosing an option applies it and leaves a single
``Proceed`` option (``is_proceed: true``), which opens the map — events do not take the
``proceed`` action. Options that open a selection screen (bundle, relic, card select,
crystal sphere) push it on top; the event shows ``Proceed`` once it closes.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Callable

from ..errors import ActionRefused
from ..model import Screen
from ..registry import action, index_in

if TYPE_CHECKING:
    from ..engine import Game


@dataclass
class Option:
    title: str
    description: str
    apply: Callable[["Game", "EventRoom"], None]
    locked: bool = False


@dataclass(eq=False)
class EventRoom(Screen):
    event_id: str
    name: str
    body: str
    options: list[Option]
    dialogue: list[str] = field(default_factory=list)
    is_ancient: bool = False
    kind: str = "event"  # event | fake_merchant
    dialogue_pos: int = 0
    done: bool = False
    result: str = ""

    @property
    def state_type(self) -> str:  # type: ignore[override]
        return self.kind

    @property
    def room_type(self) -> str:  # type: ignore[override]
        return "EventRoom"

    @property
    def in_dialogue(self) -> bool:
        return self.dialogue_pos < len(self.dialogue)

    def visible_options(self) -> list[dict]:
        if self.in_dialogue:
            return []
        if self.done:
            return [{"index": 0, "title": "Proceed", "description": "Continue onward.",
                     "is_locked": False, "is_proceed": True}]
        return [{"index": i, "title": o.title, "description": o.description,
                 "is_locked": o.locked, "is_proceed": False}
                for i, o in enumerate(self.options)]

    def block(self, game: "Game") -> dict:
        view = {"event_id": self.event_id, "name": self.name,
                "description": self.result or self.body, "is_ancient": self.is_ancient,
                "in_dialogue": self.in_dialogue, "options": self.visible_options()}
        if self.in_dialogue:
            view["dialogue"] = {"line": self.dialogue_pos, "lines": len(self.dialogue),
                                "text": self.dialogue[self.dialogue_pos]}
        return view


def _need_event(game: "Game") -> EventRoom:
    run = game.run
    assert run is not None
    room = run.room
    if not isinstance(room, EventRoom) or game.current_screen() != room.kind:
        raise ActionRefused("Not in an event")
    return room


@action("choose_event_option", ("index", int, True))
def choose_event_option(game: "Game", p: dict):
    from ..runflow import open_map

    room = _need_event(game)
    if room.in_dialogue:
        raise ActionRefused("Dialogue in progress; use advance_dialogue")
    if room.done:
        index_in([0], p["index"], "event option")
        return "Proceeding", lambda: open_map(game)
    opt = index_in(room.options, p["index"], "event option")
    if opt.locked:
        raise ActionRefused(f"Option '{opt.title}' is locked")

    def effect() -> None:
        room.done = True
        opt.apply(game, room)
    return f"Choosing '{opt.title}'", effect


@action("advance_dialogue")
def advance_dialogue(game: "Game", p: dict):
    room = _need_event(game)
    if not room.in_dialogue:
        raise ActionRefused("No dialogue to advance")
    return "Advancing dialogue", lambda: setattr(room, "dialogue_pos", room.dialogue_pos + 1)


def open_opening_event(game: "Game") -> None:
    from .events_content import opening_event

    run = game.run
    assert run is not None
    run.room = opening_event(game)
