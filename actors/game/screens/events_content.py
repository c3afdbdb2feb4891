"""Invented events: the opening event and the "?" room events.

Each builder returns an ``EventRoom`` whose options close over what they do.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .. import rng
from ..content import RELIC_POOL, REWARD_POOL
from ..model import Card
from .cardselect import CardSelect
from .crystal import CrystalSphere
from .event import EventRoom, Option
from .selects import BundleSelect, RelicSelect

if TYPE_CHECKING:
    from ..engine import Game


def _gold(amount: int):
    def apply(game: "Game", room: EventRoom) -> None:
        game.run.gold += amount
        room.result = f"You gain {amount} gold."
    return apply


def _max_hp(amount: int):
    def apply(game: "Game", room: EventRoom) -> None:
        game.run.max_hp += amount
        game.run.hp += amount
        room.result = f"Your Max HP rises by {amount}."
    return apply


def _potion(pid: str):
    def apply(game: "Game", room: EventRoom) -> None:
        game.run.add_potion(pid)
        room.result = "You pocket a potion."
    return apply


def opening_event(game: "Game") -> EventRoom:
    """The Lantern Keeper: two lines of dialogue, then three seeded boons (one simple)."""
    run = game.run
    r = rng.stream(run.seed, "opening")
    simple = [
        Option("Gift of Coin", "Gain 75 gold.", _gold(75)),
        Option("Vigor", "Raise your Max HP by 6.", _max_hp(6)),
        Option("Trinket", "Obtain a Fire Potion.", _potion("FIRE_POTION")),
    ]
    options = r.sample(extra_boons(), 2)
    options.insert(r.randrange(3), r.choice(simple))  # always one boon with no screen
    return EventRoom("LANTERN_KEEPER", "The Lantern Keeper",
                     "The keeper offers you a boon for the road.", options,
                     dialogue=["A lantern flickers in the dark.",
                               "\"Traveller, take something for the road.\""],
                     is_ancient=True)


def extra_boons() -> list[Option]:
    """Boons that open a selection screen on top of the event."""
    return [
        Option("Bundle of Cards", "Choose one of two bundles of cards.", _bundle),
        Option("Relic of Choice", "Choose one of three relics.", _relic_choice),
        Option("Reshape", "Transform a card in your deck.", _select("transform")),
    ]


def _bundle(game: "Game", room: EventRoom) -> None:
    r = rng.stream(game.run.seed, "bundle")
    pool = list(REWARD_POOL)
    r.shuffle(pool)
    game.push_overlay(BundleSelect([pool[0:3], pool[3:6]]))


def _relic_choice(game: "Game", room: EventRoom) -> None:
    r = rng.stream(game.run.seed, "relic_choice", game.run.floor)
    game.push_overlay(RelicSelect(r.sample(RELIC_POOL, 3)))


def _select(kind: str):
    """An option opening card_select ``kind`` over the deck (transform/upgrade/...)."""
    def apply(game: "Game", room: EventRoom) -> None:
        run = game.run
        r = rng.stream(run.seed, "event_select", run.floor)
        if kind == "transform":
            def done(game, chosen):
                for card in chosen:
                    card.cid = r.choice([c for c in REWARD_POOL if c != card.cid])
                    card.upgraded = False
            game.push_overlay(CardSelect("transform", "Choose a card to transform.",
                                         list(run.deck), 1, done, can_cancel=True))
        elif kind == "upgrade":
            def up(game, chosen):
                for card in chosen:
                    card.upgraded = True
            game.push_overlay(CardSelect("upgrade", "Choose a card to upgrade.",
                                         [c for c in run.deck if c.upgradable], 1, up,
                                         can_cancel=True))
        elif kind == "simple_select":
            def purge(game, chosen):
                for card in chosen:
                    if card in run.deck:
                        run.deck.remove(card)
                        run.hp = max(1, run.hp - 3)
            game.push_overlay(CardSelect("simple_select",
                                         "Choose up to 2 cards to remove (3 HP each).",
                                         list(run.deck), 2, purge, can_cancel=True))
        else:  # choose
            def take(game, chosen):
                for card in chosen:
                    run.add_card(card.cid)
            cards = [Card(0, cid) for cid in r.sample(REWARD_POOL, 3)]
            game.push_overlay(CardSelect("choose", "Choose a card to add to your deck.",
                                         cards, 1, take, can_skip=True))
    return apply


def _leave(game: "Game", room: EventRoom) -> None:
    room.result = "You move on."


def _crystal(game: "Game", room: EventRoom) -> None:
    game.push_overlay(CrystalSphere(game.run))


def _pay(amount: int, what: str, curse: bool):
    def apply(game: "Game", room: EventRoom) -> None:
        game.run.gold -= amount
        if curse:
            game.run.add_card("DOUBT")
            room.result = f"The {what} was a fake. You feel Doubt creep in."
        else:
            room.result = f"The merchant vanishes with your {amount} gold."
    return apply


def pool_event(game: "Game", event_id: str) -> EventRoom:
    """The "?" room event ``event_id``."""
    gold = game.run.gold
    if event_id == "SHIFTING_ALTAR":
        return EventRoom(event_id, "Shifting Altar", "The altar hums, ready to reshape.", [
            Option("Reshape", "Transform a card.", _select("transform")),
            Option("Refine", "Upgrade a card.", _select("upgrade")),
            Option("Leave", "Nothing happens.", _leave)])
    if event_id == "WISHING_WELL":
        return EventRoom(event_id, "Wishing Well", "Old coins glint below.", [
            Option("Cast away", "Remove up to 2 cards; lose 3 HP each.",
                   _select("simple_select")),
            Option("Leave", "Nothing happens.", _leave)],
            dialogue=["Something stirs in the water."])
    if event_id == "OLD_LIBRARY":
        return EventRoom(event_id, "Old Library", "Dusty tomes line the walls.", [
            Option("Read", "Choose 1 of 3 cards to add to your deck.", _select("choose")),
            Option("Nap", "Heal 10 HP.", _heal(10))])
    if event_id == "CRYSTAL_SPHERE":
        return EventRoom(event_id, "Crystal Sphere", "A sphere shows hidden treasures.", [
            Option("Divine", "Search the sphere for prizes.", _crystal),
            Option("Leave", "Nothing happens.", _leave)])
    # FAKE_MERCHANT
    return EventRoom(event_id, "A Suspicious Merchant", "\"Genuine wares, cheap!\"", [
        Option("Buy a potion (40 gold)", "A Fire Potion. Surely genuine.",
               _pay(40, "potion", True), locked=gold < 40),
        Option("Buy a relic (60 gold)", "A shiny relic.", _pay(60, "relic", False),
               locked=gold < 60),
        Option("Leave", "Walk away.", _leave)], kind="fake_merchant")


def _heal(amount: int):
    def apply(game: "Game", room: EventRoom) -> None:
        game.run.heal(amount)
        room.result = f"You heal {amount} HP."
    return apply


POOL = ("SHIFTING_ALTAR", "WISHING_WELL", "OLD_LIBRARY", "CRYSTAL_SPHERE")
