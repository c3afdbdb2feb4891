"""Reward screens: ``rewards`` (claim_reward, proceed) and ``card_reward``
(select_card_reward, skip_card_reward); McpMod.StateBuilder.cs ``BuildRewardsState``,
``BuildCardRewardState``; McpMod.Actions.cs ``ExecuteClaimReward``,
``ExecuteSelectCardReward``, ``ExecuteSkipCardReward``.

Items: ``{index, type, description}`` plus ``gold_amount`` on gold and ``potion_id`` /
``potion_name`` / ``potion_description`` on potions. Claiming removes the item, so later
indices shift down; claiming a potion with a full belt is answered ``ok`` and nothing
changes (the item stays). The card item opens ``card_reward`` on top; picking or
skipping closes it and removes the item. ``proceed`` leaves: to the map, or to what the
fight's room decides (``after``: the next act after a boss, the event a fight began in).
"""

from __future__ import annotations

from collections.abc import Callable

from ..content import POTIONS, RELICS
from ..errors import ActionRefused
from ..model import Card, Screen, open_map
from ..registry import action, in_range
from ..views import card_view
from ..world import World


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
    return "Add a card to your deck."


def item_view(item: dict, index: int) -> dict:
    view = {"index": index, "type": item["type"], "description": describe(item)}
    if item["type"] == "gold":
        view["gold_amount"] = item["gold"]
    elif item["type"] == "potion":
        d = POTIONS[item["potion"]]
        view.update({"potion_id": d.id, "potion_name": d.name, "potion_description": d.description})
    return view


class Rewards(Screen):
    state_type = "rewards"

    def __init__(self, items: list[dict], after: Callable[[World], None] | None = None) -> None:
        self.items = items
        self.after = after

    def block(self, game: World) -> dict:
        return {"items": [item_view(x, i) for i, x in enumerate(self.items)], "can_proceed": True}

    def leave(self, game: World) -> None:
        game.pop_overlay(self)
        if self.after is not None:
            self.after(game)
        else:
            open_map(game)


class CardReward(Screen):
    state_type = "card_reward"

    def __init__(self, rewards: Rewards, item: dict) -> None:
        self.rewards = rewards
        self.item = item
        self.cards = [Card(0, cid) for cid in item["cards"]]

    def block(self, game: World) -> dict:
        return {"cards": [card_view(c, i) for i, c in enumerate(self.cards)], "can_skip": True}

    def close(self, game: World) -> None:
        game.pop_overlay(self)
        if self.item in self.rewards.items:
            self.rewards.items.remove(self.item)


def _top(game: World, cls: type, refusal: str):
    top = game.run.top
    if not isinstance(top, cls):
        raise ActionRefused(refusal)
    return top


def _claim_text(item: dict) -> str:
    kind = item["type"]
    if kind == "gold":
        return f"gold ({item['gold']})"
    if kind == "potion":
        return f"potion ({POTIONS[item['potion']].name})"
    if kind == "card":
        return "card (opens card selection)"
    return kind


@action("claim_reward")
def claim_reward(game: World, p):
    rewards = _top(game, Rewards, "Rewards screen is not open")
    run = game.run
    index = p.int("index", "Missing 'index' (reward index)")
    item = in_range(
        rewards.items, index, f"Reward index {index} out of range (screen has {len(rewards.items)} claimable rewards)"
    )
    kind = item["type"]

    def effect() -> None:
        if kind == "card":
            game.push_overlay(CardReward(rewards, item))
            game.maybe_popup("card_reward")
            return
        if kind == "potion" and None not in run.potions:
            return  # a full belt: the claim does nothing
        rewards.items.remove(item)
        if kind == "gold":
            run.gold += item["gold"]
        elif kind == "potion":
            run.add_potion(item["potion"])
        elif kind == "relic":
            run.add_relic(item["relic"])

    return f"Claiming reward: {_claim_text(item)}", effect


@action("select_card_reward", confirm=True)
def select_card_reward(game: World, p):
    screen = _top(game, CardReward, "Card reward selection screen is not open")
    index = p.int("card_index", "Missing 'card_index'")
    card = in_range(screen.cards, index, f"Card index {index} out of range (screen has {len(screen.cards)} cards)")

    def effect() -> None:
        game.run.add_card(card.cid, card.upgraded)
        screen.close(game)

    return f"Selecting card: {card.name}", effect


@action("skip_card_reward")
def skip_card_reward(game: World, p):
    screen = _top(game, CardReward, "Card reward selection screen is not open")
    return "Skipping card reward", lambda: screen.close(game)
