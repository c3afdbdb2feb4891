"""Invented content: cards, relics, potions, characters and statuses (data only).

A card's ``effects`` is a tuple of ``(op, base, upgraded)`` steps that ``combat.py``
interprets; ops are:

    dmg       damage to the target            dmg_all   damage to every enemy
    xdmg_all  damage to every enemy, X times  block     block to the player
    vuln      Vulnerable on the target        weak      Weak on the target
    str       Strength to the player          draw      draw cards
    energy    gain energy                     hand_upgrade  upgrade a hand card (hand_select)
    hand_discard  discard N hand cards (hand_select)
"""

from __future__ import annotations

from dataclasses import dataclass

RARITY_ORDER = {"Basic": 0, "Common": 1, "Uncommon": 2, "Rare": 3, "Status": 4, "Curse": 5}


@dataclass(frozen=True)
class CardDef:
    id: str
    name: str
    type: str  # Attack | Skill | Power | Status | Curse
    cost: int | str | None  # int, "X", or None (unplayable)
    rarity: str
    target: str  # AnyEnemy | AllEnemies | Self | None
    text: str  # description with {0},{1} filled from effect values
    effects: tuple[tuple[str, int, int], ...] = ()
    upgraded_cost: int | None = None
    keywords: tuple[str, ...] = ()

    def cost_for(self, upgraded: bool) -> int | str | None:
        if upgraded and self.upgraded_cost is not None:
            return self.upgraded_cost
        return self.cost

    def values(self, upgraded: bool) -> list[int]:
        return [up if upgraded else base for _, base, up in self.effects]

    def description(self, upgraded: bool) -> str:
        return self.text.format(*self.values(upgraded))


def _c(*args, **kw) -> CardDef:
    return CardDef(*args, **kw)


CARDS: dict[str, CardDef] = {
    c.id: c
    for c in [
        _c("STRIKE", "Strike", "Attack", 1, "Basic", "AnyEnemy", "Deal {0} damage.", (("dmg", 6, 9),)),
        _c("DEFEND", "Defend", "Skill", 1, "Basic", "Self", "Gain {0} Block.", (("block", 5, 8),)),
        _c(
            "CRUSH",
            "Crush",
            "Attack",
            2,
            "Basic",
            "AnyEnemy",
            "Deal {0} damage. Apply {1} Vulnerable.",
            (("dmg", 8, 10), ("vuln", 2, 3)),
            keywords=("Vulnerable",),
        ),
        _c(
            "CLEAVE",
            "Cleave",
            "Attack",
            1,
            "Common",
            "AllEnemies",
            "Deal {0} damage to ALL enemies.",
            (("dmg_all", 8, 11),),
        ),
        _c(
            "JAB",
            "Quick Jab",
            "Attack",
            0,
            "Common",
            "AnyEnemy",
            "Deal {0} damage. Draw {1} card.",
            (("dmg", 3, 5), ("draw", 1, 1)),
        ),
        _c("BULWARK", "Bulwark", "Skill", 2, "Common", "Self", "Gain {0} Block.", (("block", 12, 16),)),
        _c("SAP", "Sap", "Skill", 1, "Common", "AnyEnemy", "Apply {0} Weak.", (("weak", 2, 3),), keywords=("Weak",)),
        _c(
            "HONE",
            "Hone",
            "Skill",
            1,
            "Uncommon",
            "Self",
            "Gain {0} Block. Upgrade a card in your hand.",
            (("block", 4, 7), ("hand_upgrade", 1, 1)),
            keywords=("Upgrade",),
        ),
        _c(
            "SIFT",
            "Sift",
            "Skill",
            0,
            "Uncommon",
            "Self",
            "Draw {0} cards. Discard {1} card.",
            (("draw", 2, 3), ("hand_discard", 1, 1)),
        ),
        _c(
            "FLEX",
            "Flex",
            "Power",
            1,
            "Uncommon",
            "Self",
            "Gain {0} Strength.",
            (("str", 2, 3),),
            upgraded_cost=0,
            keywords=("Strength",),
        ),
        _c(
            "SURGE",
            "Surge",
            "Skill",
            0,
            "Uncommon",
            "Self",
            "Gain {0} energy. Exhaust.",
            (("energy", 1, 2),),
            keywords=("Exhaust",),
        ),
        _c(
            "CYCLONE",
            "Cyclone",
            "Attack",
            "X",
            "Rare",
            "AllEnemies",
            "Deal {0} damage to ALL enemies X times.",
            (("xdmg_all", 5, 8),),
        ),
        _c("WOUND", "Wound", "Status", None, "Status", "None", "Unplayable.", keywords=("Unplayable",)),
        _c("DOUBT", "Doubt", "Curse", None, "Curse", "None", "Unplayable.", keywords=("Unplayable",)),
    ]
}

REWARD_POOL = ("CLEAVE", "JAB", "BULWARK", "SAP", "HONE", "SIFT", "FLEX", "SURGE", "CYCLONE")

KEYWORDS = {
    "Exhaust": "Removed until end of combat when played.",
    "Unplayable": "This card cannot be played.",
    "Upgrade": "Upgraded cards are stronger.",
    "Vulnerable": "Takes 50% more damage from attacks.",
    "Weak": "Deals 25% less damage with attacks.",
    "Strength": "Increases attack damage.",
    "Heal": "Restore HP.",
    "Block": "Prevents damage until your next turn.",
}


@dataclass(frozen=True)
class RelicDef:
    id: str
    name: str
    description: str
    has_counter: bool = False
    rarity: str = "Common"  # Starter | Common | Uncommon | Rare | Event
    keywords: tuple[str, ...] = ()


RELICS: dict[str, RelicDef] = {
    r.id: r
    for r in [
        RelicDef(
            "EMBER_HEART", "Ember Heart", "At the end of combat, heal 6 HP.", rarity="Starter", keywords=("Heal",)
        ),
        RelicDef(
            "WHET_CHARM", "Whetstone Charm", "At the start of each combat, gain 1 Strength.", keywords=("Strength",)
        ),
        RelicDef(
            "ANCHOR_STONE", "Anchor Stone", "Start each combat with 10 Block.", rarity="Uncommon", keywords=("Block",)
        ),
        RelicDef("LUCKY_COIN", "Lucky Coin", "Gain 25% more gold from combat rewards.", rarity="Starter"),
        RelicDef("INK_QUILL", "Ink Quill", "Every 10 cards played, draw 1 card.", has_counter=True, rarity="Uncommon"),
        RelicDef("TEA_FLASK", "Tea Flask", "Upon pickup, raise your Max HP by 8.", rarity="Rare"),
        RelicDef("HOLLOW_CROWN", "Hollow Crown", "Gain 1 energy at the start of each turn.", rarity="Starter"),
        RelicDef("TIN_ANCHOR", "Tin Anchor", "Start each combat with 4 Block.", rarity="Event", keywords=("Block",)),
        RelicDef("PASTE_GEM", "Paste Gem", "It glitters. It does nothing.", rarity="Event"),
    ]
}

RELIC_POOL = ("WHET_CHARM", "ANCHOR_STONE", "LUCKY_COIN", "INK_QUILL", "TEA_FLASK")
FAKE_RELICS = ("TIN_ANCHOR", "PASTE_GEM")  # what the fake merchant sells


@dataclass(frozen=True)
class PotionDef:
    """``usage`` as the real game's ``PotionUsage``: ``CombatOnly``, ``AnyTime`` (also out of
    combat) or ``Automatic`` (never used by hand; it triggers by itself)."""

    id: str
    name: str
    description: str
    target_type: str  # AnyEnemy | AllEnemies | Self | None
    amount: int
    usage: str = "CombatOnly"
    keywords: tuple[str, ...] = ()


POTIONS: dict[str, PotionDef] = {
    p.id: p
    for p in [
        PotionDef("FIRE_POTION", "Fire Potion", "Deal 20 damage to an enemy.", "AnyEnemy", 20),
        PotionDef("IRON_POTION", "Iron Potion", "Gain 12 Block.", "Self", 12, keywords=("Block",)),
        PotionDef("SPARK_POTION", "Spark Potion", "Gain 2 energy.", "Self", 2),
        PotionDef("INSIGHT_POTION", "Insight Potion", "Choose 1 of 3 cards to add to your hand.", "Self", 3),
        PotionDef("HEALING_SALVE", "Healing Salve", "Heal 15 HP.", "Self", 15, usage="AnyTime", keywords=("Heal",)),
        PotionDef(
            "FOUL_POTION",
            "Foul Potion",
            "Deal 12 damage to ALL enemies. Can be thrown at a merchant.",
            "AllEnemies",
            12,
            usage="AnyTime",
        ),
        PotionDef(
            "FAIRY_POTION",
            "Fairy in a Bottle",
            "When you would die, heal to 30% of your Max HP instead.",
            "None",
            30,
            usage="Automatic",
            keywords=("Heal",),
        ),
    ]
}

POTION_POOL = tuple(POTIONS)


@dataclass(frozen=True)
class CharacterDef:
    id: str
    name: str
    hp: int
    gold: int
    energy: int
    starting_relics: tuple[str, ...]
    starting_deck: tuple[str, ...]
    locked: bool = False


CHARACTERS: dict[str, CharacterDef] = {
    c.id: c
    for c in [
        CharacterDef(
            "ironbound", "The Ironbound", 80, 99, 3, ("EMBER_HEART",), ("STRIKE",) * 5 + ("DEFEND",) * 4 + ("CRUSH",)
        ),
        CharacterDef("wanderer", "The Wanderer", 72, 110, 3, ("LUCKY_COIN",), ("STRIKE",) * 5 + ("DEFEND",) * 5),
        CharacterDef(
            "hollow", "The Hollow", 66, 99, 3, ("HOLLOW_CROWN",), ("STRIKE",) * 4 + ("DEFEND",) * 4, locked=True
        ),
    ]
}


@dataclass(frozen=True)
class StatusDef:
    id: str
    name: str
    type: str  # Buff | Debuff
    text: str  # with {0} = amount


STATUSES: dict[str, StatusDef] = {
    s.id: s
    for s in [
        StatusDef("STRENGTH", "Strength", "Buff", "Attacks deal {0} more damage."),
        StatusDef("VULNERABLE", "Vulnerable", "Debuff", "Takes 50% more attack damage for {0} turn(s)."),
        StatusDef("WEAK", "Weak", "Debuff", "Deals 25% less attack damage for {0} turn(s)."),
        StatusDef("RITUAL", "Ritual", "Buff", "Gains {0} Strength at the end of its turn."),
    ]
}
