"""``bundle_select`` (select_bundle, confirm_bundle_selection, cancel_bundle_selection) and
``relic_select`` (select_relic, skip_relic_selection) overlays.

Bundles (McpMod.StateBuilder.cs ``BuildBundleSelectState``; McpMod.Actions.cs
``ExecuteSelectBundle`` ...): selecting a bundle opens its preview (``preview_showing``,
``preview_cards``), whose confirm adds the cards to the deck and whose cancel returns to
the choice; a second ``select_bundle`` while the preview shows is refused (a counted
duplicate). Relics (``BuildRelicSelectState``, ``ExecuteSelectRelic``): picking is
immediate; skipping takes nothing.
"""

from __future__ import annotations

from ..errors import ActionRefused
from ..model import Card, Screen
from ..registry import action, in_range
from ..views import card_view, relic_choice_view
from ..world import World


class BundleSelect(Screen):
    state_type = "bundle_select"

    def __init__(self, bundles: list[list[str]]) -> None:
        self.bundles = [[Card(0, cid) for cid in b] for b in bundles]
        self.selected: int | None = None

    def block(self, game: World) -> dict:
        preview = self.bundles[self.selected] if self.selected is not None else []
        return {
            "screen_type": "bundle",
            "prompt": "Choose a bundle.",
            "bundles": [
                {"index": i, "card_count": len(b), "cards": [card_view(c, j) for j, c in enumerate(b)]}
                for i, b in enumerate(self.bundles)
            ],
            "preview_showing": self.selected is not None,
            "preview_cards": [card_view(c, j) for j, c in enumerate(preview)],
            "can_cancel": self.selected is not None,
            "can_confirm": self.selected is not None,
        }


class RelicSelect(Screen):
    state_type = "relic_select"

    def __init__(self, relics: list[str]) -> None:
        self.relics = relics

    def block(self, game: World) -> dict:
        return {
            "prompt": "Choose a relic.",
            "relics": [relic_choice_view(r, i) for i, r in enumerate(self.relics)],
            "can_skip": True,
        }


def _top(game: World, cls: type, what: str):
    top = game.run.top
    if not isinstance(top, cls):
        raise ActionRefused(f"No {what} selection screen is open")
    return top


@action("select_bundle")
def select_bundle(game: World, p):
    bs = _top(game, BundleSelect, "bundle")
    index = p.int("index", "Missing 'index' (bundle index)")
    if bs.selected is not None:
        game.note_duplicate()
        raise ActionRefused("A bundle preview is already open - confirm or cancel it first")
    in_range(bs.bundles, index, f"Bundle index {index} out of range ({len(bs.bundles)} bundles available)")
    return f"Selecting bundle {index}", lambda: setattr(bs, "selected", index)


@action("confirm_bundle_selection", confirm=True)
def confirm_bundle_selection(game: World, p):
    bs = _top(game, BundleSelect, "bundle")
    if bs.selected is None:
        raise ActionRefused("Bundle confirm button is not enabled")
    cards = bs.bundles[bs.selected]

    def effect() -> None:
        game.pop_overlay(bs)
        for card in cards:
            game.run.add_card(card.cid)

    return "Confirming bundle selection", effect


@action("cancel_bundle_selection")
def cancel_bundle_selection(game: World, p):
    bs = _top(game, BundleSelect, "bundle")
    if bs.selected is None:
        raise ActionRefused("Bundle cancel button is not enabled")
    return "Cancelling bundle selection", lambda: setattr(bs, "selected", None)


@action("select_relic", confirm=True)
def select_relic(game: World, p):
    rs = _top(game, RelicSelect, "relic")
    index = p.int("index", "Missing 'index' (relic index)")
    rid = in_range(rs.relics, index, f"Relic index {index} out of range ({len(rs.relics)} relics available)")

    def effect() -> None:
        game.pop_overlay(rs)
        game.run.add_relic(rid)

    return f"Selecting relic: {relic_choice_view(rid, index)['name']}", effect


@action("skip_relic_selection")
def skip_relic_selection(game: World, p):
    rs = _top(game, RelicSelect, "relic")
    return "Skipping relic selection", lambda: game.pop_overlay(rs)
