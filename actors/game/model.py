"""Run-time records of the built-in game: card instances, relic and run state.

The run owns the persistent deck (never shown in the state, as in the real mod), the map
position, the current room and a stack of overlays (top = visible). Screens (rooms and
overlays) are objects with ``state_type`` and ``block(game)``; see ``screens/``.
``open_map`` is the one way every screen leaves for the map.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .content import CARDS, CHARACTERS, RELICS, CardDef
from .errors import ActionRefused
from .mapgen import ActMap


@dataclass
class Card:
    """One card instance; ``uid`` ties a combat copy back to its deck card."""

    uid: int
    cid: str
    upgraded: bool = False

    @property
    def d(self) -> CardDef:
        return CARDS[self.cid]

    @property
    def name(self) -> str:
        return self.d.name + ("+" if self.upgraded else "")

    @property
    def upgradable(self) -> bool:
        return not self.upgraded and self.d.type not in ("Status", "Curse")

    def copy(self) -> Card:
        return Card(self.uid, self.cid, self.upgraded)


@dataclass
class Relic:
    rid: str
    counter: int | None = None

    @property
    def name(self) -> str:
        return RELICS[self.rid].name


class Screen:
    """A room or overlay: what ``state_type`` it shows and its JSON block."""

    state_type = "unknown"
    room_type = "Unknown"

    def block(self, game: Any) -> dict:
        return {}


@dataclass
class Run:
    seed: int | str
    character: str
    hp: int
    max_hp: int
    gold: int
    act_map: ActMap
    start_time: int
    deck: list[Card] = field(default_factory=list)
    relics: list[Relic] = field(default_factory=list)
    potions: list[str | None] = field(default_factory=lambda: [None, None, None])
    act: int = 1
    floor: int = 0
    ascension: int = 0
    position: tuple[int, int] | None = None
    visited: list[tuple[int, int]] = field(default_factory=list)
    map_open: bool = False
    room: Screen | None = None
    overlays: list[Screen] = field(default_factory=list)
    lingering: Screen | None = None  # an overlay left under the open map (crystal sphere)
    combat: Any = None  # combat.Combat during a fight (combat builds on this module, not back)
    waiting: int = 0
    actions: int = 0
    next_uid: int = 1
    removal_cost: int = 75
    outcome: str | None = None  # "victory" | "defeat" once over

    @classmethod
    def new(cls, seed: int | str, character: str, act_map: ActMap, start_time: int) -> Run:
        ch = CHARACTERS[character]
        run = cls(seed, character, ch.hp, ch.hp, ch.gold, act_map, start_time)
        for cid in ch.starting_deck:
            run.add_card(cid)
        for rid in ch.starting_relics:
            run.add_relic(rid)
        return run

    def add_card(self, cid: str, upgraded: bool = False) -> Card:
        card = Card(self.next_uid, cid, upgraded)
        self.next_uid += 1
        self.deck.append(card)
        return card

    def add_relic(self, rid: str) -> None:
        self.relics.append(Relic(rid, 0 if RELICS[rid].has_counter else None))
        if rid == "TEA_FLASK":
            self.max_hp += 8
            self.hp += 8

    def has_relic(self, rid: str) -> bool:
        return any(r.rid == rid for r in self.relics)

    def relic(self, rid: str) -> Relic | None:
        return next((r for r in self.relics if r.rid == rid), None)

    def add_potion(self, pid: str) -> bool:
        for i, slot in enumerate(self.potions):
            if slot is None:
                self.potions[i] = pid
                return True
        return False

    def heal(self, amount: int) -> None:
        self.hp = min(self.max_hp, self.hp + max(0, amount))

    def deck_card(self, uid: int) -> Card | None:
        return next((c for c in self.deck if c.uid == uid), None)

    @property
    def top(self) -> Screen | None:
        return self.overlays[-1] if self.overlays else None


def open_map(game: Any) -> None:
    """Show the map (the screen a room's proceed button leads to)."""
    run = game.run
    assert run is not None
    run.map_open = True
    game.transition()


def room_of(game: Any) -> Screen | None:
    """The run's current room as the mod's room nodes see it: none between rooms (the
    ``waiting_reads`` transition, where ``CurrentRoom`` is null)."""
    return None if game.waiting else game.run.room


def top_screen(game: Any, cls: type, refusal: str) -> Any:
    """The run's open overlay when it is a ``cls`` and is what the state shows; otherwise
    the action is refused with ``refusal`` (one lookup for every overlay screen's actions)."""
    run = game.run
    assert run is not None
    top = run.top
    if not isinstance(top, cls) or game.current_screen() != cls.state_type:
        raise ActionRefused(refusal)
    return top
