"""Reward screens: ``rewards`` (claim_reward, proceed) and ``card_reward``
(select_card_reward, skip_card_reward).

Claiming removes the item, so the indices of later items shift down. Opening the card
item shows ``card_reward`` on top; picking or skipping closes it and removes the item.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..content import POTIONS, RELICS
from ..errors import ActionRefused
from ..model import Card, Screen, top_screen
from ..registry import action, index_in
from ..views import card_view

if TYPE_CHECKING:
    from ..engine import Game


def describe(item: dict) -> str:
    kind = item["type"]
    if kind == "gold":
        return f"{item['gold']} Gold"
    if kind == "potion":
        return POTIONS[item["potion"]].name
    if kind == "relic":
        return RELICS[item["relic"]].name
    if kind == "card_removal":
        return "Remove a card from your deck"
    return "Add a card to your deck"


class Rewards(Screen):
    state_type = "rewards"

    def __init__(self, items: list[dict]) -> None:
        self.items = items

    def block(self, game: "Game") -> dict:
        out = []
        for i, item in enumerate(self.items):
            view = {"index": i, "type": item["type"], "description": describe(item)}
            if item["type"] == "gold":
                view["gold_amount"] = item["gold"]
            out.append(view)
        return {"items": out, "can_proceed": True}

    def proceed(self, game: "Game"):
        from ..runflow import open_map

        def effect() -> None:
            game.pop_overlay(self)
            open_map(game)
        return "Proceeding to the map", effect


class CardReward(Screen):
    state_type = "card_reward"

    def __init__(self, rewards: Rewards, item: dict) -> None:
        self.rewards = rewards
        self.item = item
        self.cards = [Card(0, cid) for cid in item["cards"]]

    def block(self, game: "Game") -> dict:
        return {"cards": [card_view(c, i) for i, c in enumerate(self.cards)],
                "can_skip": True}

    def close(self, game: "Game") -> None:
        game.pop_overlay(self)
        if self.item in self.rewards.items:
            self.rewards.items.remove(self.item)


def _top(game: "Game", cls: type, what: str):
    return top_screen(game, cls, f"Not on the {what} screen")


@action("claim_reward", ("index", int, True))
def claim_reward(game: "Game", p: dict):
    rewards = _top(game, Rewards, "rewards")
    run = game.run
    item = index_in(rewards.items, p["index"], "reward")
    kind = item["type"]
    if kind == "potion" and None not in run.potions:
        raise ActionRefused("Potion slots are full; discard a potion first")

    def effect() -> None:
        if kind == "card":
            game.push_overlay(CardReward(rewards, item))
            game.maybe_popup("card_reward")
            return
        rewards.items.remove(item)
        if kind == "gold":
            run.gold += item["gold"]
        elif kind == "potion":
            run.add_potion(item["potion"])
        elif kind == "relic":
            run.add_relic(item["relic"])
    return f"Claiming {describe(item)}", effect


@action("select_card_reward", ("card_index", int, True), confirm=True)
def select_card_reward(game: "Game", p: dict):
    screen = _top(game, CardReward, "card reward")
    card = index_in(screen.cards, p["card_index"], "card")

    def effect() -> None:
        game.run.add_card(card.cid, card.upgraded)
        screen.close(game)
    return f"Adding '{card.name}' to the deck", effect


@action("skip_card_reward")
def skip_card_reward(game: "Game", p: dict):
    screen = _top(game, CardReward, "card reward")
    return "Skipping the card reward", lambda: screen.close(game)
