"""Monsters, their moves, and the encounters of the act (data only).

A monster picks its next move from its ``moves`` with the seeded combat stream, never the
same move three times in a row; ``opening`` (if set) is always its first move.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Move:
    id: str
    intent: str  # Attack | Defend | Buff | Debuff | AttackDefend
    damage: int = 0
    hits: int = 1
    block: int = 0
    strength: int = 0  # gained by the monster
    weak: int = 0  # applied to the player
    vulnerable: int = 0  # applied to the player
    wound: int = 0  # Wound cards shuffled into the player's discard pile


@dataclass(frozen=True)
class MonsterDef:
    id: str
    name: str
    hp: tuple[int, int]
    moves: tuple[Move, ...]
    opening: str | None = None


MONSTERS: dict[str, MonsterDef] = {
    m.id: m
    for m in [
        MonsterDef(
            "GNAT",
            "Gnat",
            (11, 14),
            (
                Move("BITE", "Attack", damage=5),
                Move("BUZZ", "Debuff", weak=1),
            ),
        ),
        MonsterDef(
            "SLIME",
            "Bog Slime",
            (20, 24),
            (
                Move("SLAM", "Attack", damage=8),
                Move("OOZE", "AttackDefend", damage=4, block=5),
                Move("SPIT", "Debuff", wound=1),
            ),
        ),
        MonsterDef(
            "CHANTER",
            "Chanter",
            (28, 32),
            (
                Move("CHANT", "Buff", strength=2),
                Move("SLASH", "Attack", damage=6),
            ),
            opening="CHANT",
        ),
        MonsterDef(
            "SENTINEL",
            "Sentinel Knight",
            (44, 48),
            (
                Move("CLEAVE", "Attack", damage=11),
                Move("GUARD", "AttackDefend", damage=6, block=10),
                Move("SHATTER", "Debuff", damage=4, vulnerable=2),
            ),
        ),
        MonsterDef(
            "HOLLOW_KING",
            "Hollow King",
            (88, 88),
            (
                Move("CRUSH", "Attack", damage=13),
                Move("FLURRY", "Attack", damage=4, hits=3),
                Move("DECREE", "Buff", strength=2, block=8),
            ),
            opening="DECREE",
        ),
        MonsterDef(
            "SHADE",
            "Royal Shade",
            (16, 16),
            (
                Move("TOUCH", "Attack", damage=4),
                Move("VEIL", "Defend", block=6),
            ),
        ),
        MonsterDef(
            "WARDEN",
            "The Warden",
            (80, 80),
            (
                Move("LASH", "Attack", damage=6, hits=2),
                Move("BRACE", "AttackDefend", damage=8, block=8),
                Move("SHACKLE", "Debuff", weak=1, vulnerable=1),
            ),
            opening="SHACKLE",
        ),
        MonsterDef(
            "FAKE_MERCHANT",
            "Fake Merchant",
            (34, 34),
            (
                Move("HAGGLE", "Attack", damage=7),
                Move("PEDDLE", "Debuff", damage=3, weak=1),
            ),
        ),
    ]
}

MONSTER_ENCOUNTERS: tuple[tuple[str, ...], ...] = (
    ("GNAT", "GNAT"),
    ("SLIME",),
    ("CHANTER",),
    ("GNAT", "SLIME"),
    ("GNAT", "GNAT", "GNAT"),
)
ELITE_ENCOUNTERS: tuple[tuple[str, ...], ...] = (("SENTINEL",), ("SENTINEL", "GNAT"))
BOSS_ENCOUNTER: tuple[str, ...] = ("HOLLOW_KING", "SHADE")
BOSS_ID = "HOLLOW_KING"


@dataclass(frozen=True)
class Boss:
    """An act's boss encounter: its id and title (the map's ``boss``) and its monsters."""

    id: str
    name: str
    monsters: tuple[str, ...]


BOSSES: tuple[Boss, ...] = (
    Boss("HOLLOW_KING", "Hollow King", BOSS_ENCOUNTER),
    Boss("WARDEN", "The Warden", ("WARDEN",)),
)
FAKE_MERCHANT_ENCOUNTER: tuple[str, ...] = ("FAKE_MERCHANT",)


def boss_of(act: int) -> Boss:
    """The boss of act ``act`` (acts past the list repeat it)."""
    return BOSSES[(act - 1) % len(BOSSES)]
