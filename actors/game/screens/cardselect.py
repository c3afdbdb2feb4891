"""The ``card_select`` overlay and ``select_card`` / ``confirm_selection`` /
``cancel_selection`` (McpMod.Actions.cs ``ExecuteSelectCard``, ``ExecuteConfirmSelection``,
``ExecuteCancelSelection``).

Grid screens (McpMod.StateBuilder.cs ``BuildCardSelectState``): ``transform``,
``upgrade`` and ``select`` (pick exactly N; a preview with its own confirm/cancel then
shows), ``simple_select`` (pick 1..N; the main confirm button). ``select_card`` toggles:
selecting a selected card deselects it (a counted duplicate); a click while the preview
covers the grid, or beyond N, changes nothing. As in the mod, the block never says which
cards are selected. The ``choose`` screen (``BuildChooseCardState``) picks at once.
"""

from __future__ import annotations

from collections.abc import Callable

from ..errors import ActionRefused
from ..model import Card, Screen
from ..registry import action, in_range
from ..views import card_view
from ..world import World

OnConfirm = Callable[[World, list[Card]], None]
PREVIEWED = ("transform", "upgrade", "select")
NOT_OPEN = "No card selection screen is open"


class CardSelect(Screen):
    state_type = "card_select"

    def __init__(
        self,
        screen_type: str,
        prompt: str,
        cards: list[Card],
        count: int,
        on_confirm: OnConfirm,
        can_cancel: bool = False,
        can_skip: bool = False,
    ) -> None:
        self.screen_type = screen_type
        self.prompt = prompt
        self.cards = cards
        self.count = count
        self.on_confirm = on_confirm
        self.can_cancel = can_cancel  # the grid's close button
        self.can_skip = can_skip  # the choose screen's skip button
        self.selected: list[int] = []

    @property
    def preview_showing(self) -> bool:
        return self.screen_type in PREVIEWED and len(self.selected) == self.count

    @property
    def can_confirm(self) -> bool:
        if self.screen_type == "choose":
            return False
        if self.screen_type == "simple_select":
            return 1 <= len(self.selected) <= self.count
        return self.preview_showing

    def block(self, game: World) -> dict:
        cards = [card_view(c, i) for i, c in enumerate(self.cards)]
        if self.screen_type == "choose":
            return {
                "screen_type": "choose",
                "prompt": "Choose a card.",
                "cards": cards,
                "can_skip": self.can_skip,
                "preview_showing": False,
                "can_confirm": False,
                "can_cancel": self.can_skip,
            }
        return {
            "screen_type": self.screen_type,
            "prompt": self.prompt,
            "cards": cards,
            "preview_showing": self.preview_showing,
            "can_cancel": self.preview_showing or self.can_cancel,
            "can_confirm": self.can_confirm,
        }

    def finish(self, game: World, chosen: list[Card]) -> None:
        game.pop_overlay(self)
        self.on_confirm(game, chosen)

    def toggle(self, i: int) -> None:
        if self.preview_showing:
            return
        if i in self.selected:
            self.selected.remove(i)
        elif len(self.selected) < self.count:
            self.selected.append(i)

    @classmethod
    def choose_into_hand(cls, cids: list[str]) -> CardSelect:
        def add(game: World, chosen: list[Card]) -> None:
            combat = game.run.combat if game.run else None
            if combat is not None:
                for card in chosen:
                    combat.add_to_hand(card.cid)

        return cls("choose", "Choose a card.", [Card(0, c) for c in cids], 1, add, can_skip=True)


def _top(game: World) -> CardSelect | None:
    top = game.run.top
    return top if isinstance(top, CardSelect) else None


@action("select_card")
def select_card(game: World, p):
    cs = _top(game)
    i = p.int("index", "Missing 'index' (card index in the grid)")
    if cs is None:
        raise ActionRefused(NOT_OPEN)
    card = in_range(cs.cards, i, f"Card index {i} out of range ({len(cs.cards)} cards available)")
    if cs.screen_type == "choose":
        return f"Choosing card: {card.name}", lambda: cs.finish(game, [card])
    if i in cs.selected or len(cs.selected) >= cs.count:
        game.note_duplicate()
    return f"Toggling card selection: {card.name}", lambda: cs.toggle(i)


@action("confirm_selection", confirm=True)
def confirm_selection(game: World, p):
    cs = _top(game)
    if cs is not None and cs.screen_type == "choose":
        raise ActionRefused("Choose-a-card screen requires no confirmation - use select_card(index) to pick directly")
    if cs is None:
        raise ActionRefused(NOT_OPEN)
    if not cs.can_confirm:
        raise ActionRefused("No confirm button is currently enabled - select more cards first")
    chosen = [cs.cards[i] for i in cs.selected]
    message = "Confirming selection from preview" if cs.preview_showing else "Confirming selection"
    return message, lambda: cs.finish(game, chosen)


@action("cancel_selection")
def cancel_selection(game: World, p):
    cs = _top(game)
    if cs is not None and cs.screen_type == "choose":
        if not cs.can_skip:
            raise ActionRefused("No skip option available - a card must be chosen")
        return "Skipping card choice", lambda: game.pop_overlay(cs)
    if cs is None:
        raise ActionRefused(NOT_OPEN)
    if cs.preview_showing:
        return ("Cancelling preview - returning to card selection", cs.selected.clear)
    if not cs.can_cancel:
        raise ActionRefused("No cancel/close button is currently enabled - selection may be mandatory")
    return "Closing card selection screen", lambda: game.pop_overlay(cs)
