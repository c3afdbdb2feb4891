"""Invented events: each act's opening ancient and the "?" room events.

Each builder returns an ``EventRoom`` whose options close over what they do. An option's
``apply`` turns the page itself (``room.turn_page(outcome)``) or opens a selection on top
of the event. Importing this module registers the act opening in ``runflow.HOOKS``.
"""

from __future__ import annotations

from .. import rng
from ..content import RELIC_POOL, REWARD_POOL
from ..model import Card
from ..runflow import HOOKS
from ..world import World
from .cardselect import CardSelect
from .crystal import CrystalSphere
from .event import EventRoom, Option, proceed_option
from .selects import BundleSelect, RelicSelect


def _gold(amount: int):
    def apply(game: World, room: EventRoom) -> None:
        game.run.gold += amount
        room.turn_page(f"You gain {amount} gold.")

    return apply


def _max_hp(amount: int):
    def apply(game: World, room: EventRoom) -> None:
        game.run.max_hp += amount
        game.run.hp += amount
        room.turn_page(f"Your Max HP rises by {amount}.")

    return apply


def _potion(pid: str):
    def apply(game: World, room: EventRoom) -> None:
        game.run.add_potion(pid)
        room.turn_page("You pocket a potion.")

    return apply


def _relic(rid: str):
    def apply(game: World, room: EventRoom) -> None:
        game.run.add_relic(rid)
        room.turn_page("The relic is yours.")

    return apply


def _heal(amount: int):
    def apply(game: World, room: EventRoom) -> None:
        game.run.heal(amount)
        room.turn_page(f"You heal {amount} HP.")

    return apply


def open_act_event(game: World) -> None:
    """The current act's opening ancient becomes the run's room."""
    run = game.run
    run.room = lantern_keeper(game) if run.act == 1 else tide_warden(game)


def _unowned_relic(game: World, label: str) -> str:
    owned = {r.rid for r in game.run.relics}
    pool = [x for x in RELIC_POOL if x not in owned] or list(RELIC_POOL)
    return rng.stream(game.run.seed, label, game.run.act).choice(pool)


def lantern_keeper(game: World) -> EventRoom:
    """Act 1: two lines of dialogue, then three seeded boons (one with no screen)."""
    r = rng.stream(game.run.seed, "opening")
    charm = _unowned_relic(game, "keeper_charm")
    simple = [
        Option("Gift of Coin", "Gain 75 gold.", _gold(75)),
        Option("Vigor", "Raise your Max HP by 6.", _max_hp(6)),
        Option("Trinket", "Obtain a Healing Salve.", _potion("HEALING_SALVE"), keywords=("Heal",)),
        Option("Keeper's Charm", "Obtain a relic.", _relic(charm), relic=charm),
    ]
    options = r.sample(extra_boons(), 2)
    options.insert(r.randrange(3), r.choice(simple))  # always one boon with no screen
    return EventRoom(
        "LANTERN_KEEPER",
        "The Lantern Keeper",
        "The keeper offers you a boon for the road.",
        options,
        dialogue=["A lantern flickers in the dark.", '"Traveller, take something for the road."'],
        is_ancient=True,
    )


def tide_warden(game: World) -> EventRoom:
    """Act 2 onwards: one line of dialogue, then two of three boons."""
    shell = _unowned_relic(game, "tide_shell")
    return EventRoom(
        "TIDE_WARDEN",
        "The Tide Warden",
        "The tide brings gifts to those who came this far.",
        [
            Option("Still Waters", "Heal 25 HP.", _heal(25), keywords=("Heal",)),
            Option("Sea Shell", "Obtain a relic.", _relic(shell), relic=shell),
            Option("Sunken Coin", "Gain 50 gold.", _gold(50)),
        ],
        dialogue=["The water rises to meet you."],
        is_ancient=True,
        picks=2,
    )


def extra_boons() -> list[Option]:
    """Boons that open a selection screen on top of the event."""
    return [
        Option("Bundle of Cards", "Choose one of two bundles of cards.", _bundle),
        Option("Relic of Choice", "Choose one of three relics.", _relic_choice),
        Option("Reshape", "Transform a card in your deck.", _select("transform")),
    ]


def _bundle(game: World, room: EventRoom) -> None:
    r = rng.stream(game.run.seed, "bundle")
    pool = list(REWARD_POOL)
    r.shuffle(pool)
    room.turn_page("The bundles are yours to choose from.")
    game.push_overlay(BundleSelect([pool[0:3], pool[3:6]]))


def _relic_choice(game: World, room: EventRoom) -> None:
    r = rng.stream(game.run.seed, "relic_choice", game.run.floor)
    room.turn_page("Three relics glint before you.")
    game.push_overlay(RelicSelect(r.sample(RELIC_POOL, 3)))


def _select(kind: str):
    """An option opening card_select ``kind`` over the deck."""

    def apply(game: World, room: EventRoom) -> None:
        run = game.run
        r = rng.stream(run.seed, "event_select", run.floor)
        room.turn_page("It is done.")
        if kind == "transform":

            def done(game, chosen):
                for card in chosen:
                    card.cid = r.choice([c for c in REWARD_POOL if c != card.cid])
                    card.upgraded = False

            screen = CardSelect("transform", "Choose a card to transform.", list(run.deck), 1, done, can_cancel=True)
        elif kind == "upgrade":

            def up(game, chosen):
                for card in chosen:
                    card.upgraded = True

            screen = CardSelect(
                "upgrade", "Choose a card to upgrade.", [c for c in run.deck if c.upgradable], 1, up, can_cancel=True
            )
        elif kind == "simple_select":

            def purge(game, chosen):
                for card in chosen:
                    if card in run.deck:
                        run.deck.remove(card)
                        run.hp = max(1, run.hp - 3)

            screen = CardSelect(
                "simple_select", "Choose up to 2 cards to remove.", list(run.deck), 2, purge, can_cancel=True
            )
        else:  # choose

            def take(game, chosen):
                for card in chosen:
                    run.add_card(card.cid)

            cards = [Card(0, cid) for cid in r.sample(REWARD_POOL, 3)]
            screen = CardSelect("choose", "Choose a card.", cards, 1, take, can_skip=True)
        game.push_overlay(screen)

    return apply


def _crystal(game: World, room: EventRoom) -> None:
    room.turn_page("The sphere clouds over.")
    game.push_overlay(CrystalSphere(game.run))


def pool_event(game: World, event_id: str) -> EventRoom:
    """The "?" room event ``event_id``."""
    if event_id == "SHIFTING_ALTAR":
        return EventRoom(
            event_id,
            "Shifting Altar",
            "The altar hums, ready to reshape.",
            [
                Option("Reshape", "Transform a card.", _select("transform")),
                Option("Refine", "Upgrade a card.", _select("upgrade")),
                proceed_option(),
            ],
        )
    if event_id == "WISHING_WELL":
        return EventRoom(
            event_id,
            "Wishing Well",
            "Old coins glint below.",
            [Option("Cast away", "Remove up to 2 cards; lose 3 HP each.", _select("simple_select")), proceed_option()],
        )
    if event_id == "OLD_LIBRARY":
        return EventRoom(
            event_id,
            "Old Library",
            "Dusty tomes line the walls.",
            [
                Option("Read", "Choose 1 of 3 cards to add to your deck.", _select("choose")),
                Option("Nap", "Heal 10 HP.", _heal(10), keywords=("Heal",)),
            ],
        )
    return EventRoom(
        "CRYSTAL_SPHERE",
        "Crystal Sphere",
        "A sphere shows hidden treasures.",
        [Option("Divine", "Search the sphere for prizes.", _crystal), proceed_option()],
    )


POOL = ("SHIFTING_ALTAR", "WISHING_WELL", "OLD_LIBRARY", "CRYSTAL_SPHERE")
HOOKS.act_opening = open_act_event
