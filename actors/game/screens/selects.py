"""``bundle_select`` (select_bundle, confirm_bundle_selection, cancel_bundle_selection)
and ``relic_select`` (select_relic, skip_relic_selection) overlays.

A bundle is a pack of cards; selecting one marks it (re-selecting the same bundle is a
counted duplicate), confirming adds its cards to the deck. Selecting a relic takes it at
once.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..errors import ActionRefused
from ..model import Card, Screen, top_screen
from ..registry import action, index_in
from ..views import card_view, relic_choice_view

if TYPE_CHECKING:
    from ..engine import Game


class BundleSelect(Screen):
    state_type = "bundle_select"

    def __init__(self, bundles: list[list[str]]) -> None:
        self.bundles = [[Card(0, cid) for cid in b] for b in bundles]
        self.selected: int | None = None

    def block(self, game: "Game") -> dict:
        return {"prompt": "Choose a bundle of cards to add to your deck.",
                "bundles": [{"index": i, "cards": [card_view(c, j) for j, c in enumerate(b)]}
                            for i, b in enumerate(self.bundles)],
                "preview_showing": self.selected is not None,
                "can_confirm": self.selected is not None, "can_cancel": True}


class RelicSelect(Screen):
    state_type = "relic_select"

    def __init__(self, relics: list[str], prompt: str = "Choose a relic.") -> None:
        self.relics = relics
        self.prompt = prompt

    def block(self, game: "Game") -> dict:
        return {"prompt": self.prompt,
                "relics": [relic_choice_view(r, i) for i, r in enumerate(self.relics)],
                "can_skip": True}


def _top(game: "Game", cls: type) -> Screen:
    return top_screen(game, cls, f"No {cls.state_type} screen is open")


@action("select_bundle", ("index", int, True))
def select_bundle(game: "Game", p: dict):
    bs = _top(game, BundleSelect)
    index_in(bs.bundles, p["index"], "bundle")
    if bs.selected == p["index"]:
        game.note_duplicate()
    return f"Selecting bundle {p['index']}", lambda: setattr(bs, "selected", p["index"])


@action("confirm_bundle_selection", confirm=True)
def confirm_bundle_selection(game: "Game", p: dict):
    bs = _top(game, BundleSelect)
    if bs.selected is None:
        raise ActionRefused("Select a bundle first")
    cards = bs.bundles[bs.selected]

    def effect() -> None:
        game.pop_overlay(bs)
        for card in cards:
            game.run.add_card(card.cid)
    return "Confirming bundle", effect


@action("cancel_bundle_selection")
def cancel_bundle_selection(game: "Game", p: dict):
    bs = _top(game, BundleSelect)
    return "Cancelling bundle selection", lambda: game.pop_overlay(bs)


@action("select_relic", ("index", int, True), confirm=True)
def select_relic(game: "Game", p: dict):
    rs = _top(game, RelicSelect)
    rid = index_in(rs.relics, p["index"], "relic")

    def effect() -> None:
        game.pop_overlay(rs)
        game.run.add_relic(rid)
    return f"Taking {rid}", effect


@action("skip_relic_selection")
def skip_relic_selection(game: "Game", p: dict):
    rs = _top(game, RelicSelect)
    return "Skipping relic selection", lambda: game.pop_overlay(rs)
