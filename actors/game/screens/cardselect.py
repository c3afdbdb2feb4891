"""The ``card_select`` overlay and ``select_card`` / ``confirm_selection`` /
``cancel_selection``.

Screen types: ``transform`` and ``upgrade`` (pick 1; a preview then shows), ``select``
(pick exactly N), ``simple_select`` (pick 1..N), ``choose`` (``select_card`` picks at
once). On grids ``select_card`` *toggles*: selecting a selected card deselects it. As in
the real mod, the block never says which cards are selected or how many are needed —
a bot has to remember its own toggles (a repeated toggle is a counted duplicate).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable

from ..errors import ActionRefused
from ..model import Card, Screen, top_screen
from ..registry import action, index_in
from ..views import card_view

if TYPE_CHECKING:
    from ..engine import Game

OnConfirm = Callable[["Game", list[Card]], None]


class CardSelect(Screen):
    state_type = "card_select"

    def __init__(self, screen_type: str, prompt: str, cards: list[Card], count: int,
                 on_confirm: OnConfirm, can_cancel: bool = False,
                 can_skip: bool | None = None,
                 on_cancel: Callable[["Game"], None] | None = None) -> None:
        self.screen_type = screen_type
        self.prompt = prompt
        self.cards = cards
        self.count = count
        self.on_confirm = on_confirm
        self.can_cancel = can_cancel
        self.can_skip = can_skip
        self.on_cancel = on_cancel
        self.selected: list[int] = []
        self.preview_showing = False

    @property
    def can_confirm(self) -> bool:
        if self.screen_type == "choose":
            return False
        if self.screen_type == "simple_select":
            return 1 <= len(self.selected) <= self.count
        return len(self.selected) == self.count

    def block(self, game: "Game") -> dict:
        view = {"screen_type": self.screen_type, "prompt": self.prompt,
                "cards": [card_view(c, i) for i, c in enumerate(self.cards)],
                "preview_showing": self.preview_showing, "can_confirm": self.can_confirm,
                "can_cancel": self.can_cancel or self.preview_showing}
        if self.can_skip is not None:
            view["can_skip"] = self.can_skip
        return view

    def finish(self, game: "Game", chosen: list[Card]) -> None:
        game.pop_overlay(self)
        self.on_confirm(game, chosen)

    @classmethod
    def choose_into_hand(cls, cids: list[str]) -> "CardSelect":
        def add(game: "Game", chosen: list[Card]) -> None:
            combat = game.run.combat if game.run else None
            if combat is not None:
                for card in chosen:
                    combat.add_to_hand(card.cid)
        return cls("choose", "Choose a card to add to your hand.",
                   [Card(0, c) for c in cids], 1, add, can_skip=True,
                   on_cancel=lambda game: None)


def _need(game: "Game") -> CardSelect:
    return top_screen(game, CardSelect, "No card selection in progress")


@action("select_card", ("index", int, True))
def select_card(game: "Game", p: dict):
    cs = _need(game)
    i = p["index"]
    card = index_in(cs.cards, i, "card")
    if cs.screen_type == "choose":
        return f"Choosing '{card.name}'", lambda: cs.finish(game, [card])
    if cs.preview_showing:
        raise ActionRefused("A preview is showing; confirm or cancel it first")
    if i in cs.selected:
        game.note_duplicate()
        return f"Deselecting '{card.name}'", lambda: cs.selected.remove(i)
    if len(cs.selected) >= cs.count:
        game.note_duplicate()
        raise ActionRefused("Selection is full; confirm or deselect a card")

    def effect() -> None:
        cs.selected.append(i)
        if cs.screen_type in ("transform", "upgrade") and len(cs.selected) == cs.count:
            cs.preview_showing = True
    return f"Selecting '{card.name}'", effect


@action("confirm_selection", confirm=True)
def confirm_selection(game: "Game", p: dict):
    cs = _need(game)
    if not cs.can_confirm:
        raise ActionRefused("Cannot confirm: the selection is incomplete")
    chosen = [cs.cards[i] for i in cs.selected]
    return "Confirming selection", lambda: cs.finish(game, chosen)


@action("cancel_selection")
def cancel_selection(game: "Game", p: dict):
    cs = _need(game)
    if cs.preview_showing:
        def back() -> None:
            cs.preview_showing = False
            cs.selected.clear()
        return "Closing the preview", back
    if not (cs.can_cancel or cs.can_skip):
        raise ActionRefused("This selection cannot be cancelled")

    def effect() -> None:
        game.pop_overlay(cs)
        if cs.on_cancel is not None:
            cs.on_cancel(game)
    return "Cancelling selection", effect
