"""Combat rules: piles, energy, block, statuses, card effects, intents and enemy turns.

Damage: base + attacker Strength, x0.75 if the attacker is Weak, x1.5 if the defender is
Vulnerable (rounded down), absorbed by block first. Player debuffs tick down at the end of
the player's turn, enemy debuffs at the end of the enemy turn.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

from .bestiary import MONSTERS, Move
from .model import Card, Run

HAND_SIZE = 5
MAX_HAND = 10


@dataclass
class Enemy:
    combat_id: int
    mid: str
    name: str
    hp: int
    max_hp: int
    block: int = 0
    status: dict[str, int] = field(default_factory=dict)
    move: Move | None = None
    history: list[str] = field(default_factory=list)

    @property
    def alive(self) -> bool:
        return self.hp > 0


@dataclass
class HandSelect:
    """A hand_select prompt opened by a card (Hone: upgrade_select, Sift: simple_select)."""

    mode: str  # upgrade_select | simple_select
    prompt: str
    count: int
    cards: list[Card]
    selected: list[Card] = field(default_factory=list)

    @property
    def can_confirm(self) -> bool:
        return len(self.selected) == self.count


def damage_value(base: int, attacker: dict[str, int], defender: dict[str, int]) -> int:
    value = base + attacker.get("STRENGTH", 0)
    if attacker.get("WEAK"):
        value = int(value * 0.75)
    if defender.get("VULNERABLE"):
        value = int(value * 1.5)
    return max(0, value)


class Combat:
    """One fight. ``kind`` is monster | elite | boss."""

    def __init__(self, run: Run, kind: str, monster_ids: tuple[str, ...], r: random.Random) -> None:
        self.run = run
        self.kind = kind
        self.rng = r
        self.enemies: list[Enemy] = []
        scale = 1 + (run.act - 1) / 4  # later acts: tougher monsters
        for i, mid in enumerate(monster_ids):
            m = MONSTERS[mid]
            hp = int(r.randint(*m.hp) * scale)
            self.enemies.append(Enemy(i + 1, mid, m.name, hp, hp))
        self.draw: list[Card] = [c.copy() for c in run.deck]
        r.shuffle(self.draw)
        self.hand: list[Card] = []
        self.discard: list[Card] = []
        self.exhaust: list[Card] = []
        self.max_energy = 3 + (1 if run.has_relic("HOLLOW_CROWN") else 0)
        self.energy = 0
        self.block = 0
        self.status: dict[str, int] = {}
        self.round = 0
        self.phase = "player"
        self.enemy_reads = 0
        self.hand_select: HandSelect | None = None
        self.over = False
        if run.has_relic("WHET_CHARM"):
            self.status["STRENGTH"] = 1
        for e in self.enemies:
            self.choose_move(e)
        self.start_player_turn()
        if run.has_relic("ANCHOR_STONE"):
            self.block += 10
        if run.has_relic("TIN_ANCHOR"):
            self.block += 4

    # ----- queries -------------------------------------------------------------------
    def living(self) -> list[Enemy]:
        return [e for e in self.enemies if e.alive]

    def entity_ids(self) -> list[tuple[str, Enemy]]:
        """``(entity_id, enemy)`` over living enemies, numbered per monster id."""
        counts: dict[str, int] = {}
        out = []
        for e in self.living():
            n = counts.get(e.mid, 0)
            counts[e.mid] = n + 1
            out.append((f"{e.mid}_{n}", e))
        return out

    def enemy_by_entity(self, entity_id: str) -> Enemy | None:
        return next((e for eid, e in self.entity_ids() if eid == entity_id), None)

    def unplayable_reason(self, card: Card) -> str | None:
        """The game's ``UnplayableReason`` name, or None when the card can be played."""
        cost = card.d.cost_for(card.upgraded)
        if cost is None:
            return "Unplayable"
        if cost != "X" and cost > self.energy:
            return "EnergyCostTooHigh"
        return None

    # ----- turn structure -----------------------------------------------------------
    def start_player_turn(self) -> None:
        self.round += 1
        self.phase = "player"
        self.block = 0
        self.energy = self.max_energy
        self.draw_cards(HAND_SIZE)

    def draw_cards(self, n: int) -> None:
        for _ in range(n):
            if len(self.hand) >= MAX_HAND:
                return
            if not self.draw:
                if not self.discard:
                    return
                self.draw, self.discard = self.discard, []
                self.rng.shuffle(self.draw)
            self.hand.append(self.draw.pop())

    def end_player_turn(self) -> None:
        """Discard the hand, tick player debuffs, and enter the enemy phase."""
        self.discard.extend(self.hand)
        self.hand = []
        tick(self.status)
        self.phase = "enemy"

    def run_enemy_turn(self) -> None:
        """Every living enemy acts, then the next player turn starts (unless defeat)."""
        for e in self.living():
            e.block = 0
        for e in self.living():
            self.perform(e)
            if self.run.hp <= 0:
                self.over = True
                return
        for e in self.living():
            for k, v in list(e.status.items()):
                if k == "RITUAL":
                    e.status["STRENGTH"] = e.status.get("STRENGTH", 0) + v
            tick(e.status)
            self.choose_move(e)
        self.start_player_turn()

    def choose_move(self, e: Enemy) -> None:
        m = MONSTERS[e.mid]
        if not e.history and m.opening:
            move = next(x for x in m.moves if x.id == m.opening)
        else:
            options = [x for x in m.moves if e.history[-2:] != [x.id, x.id]]
            move = self.rng.choice(options)
        e.move = move
        e.history.append(move.id)

    def perform(self, e: Enemy) -> None:
        mv = e.move
        assert mv is not None
        for _ in range(mv.hits if mv.damage else 0):
            self.hit_player(damage_value(mv.damage, e.status, self.status))
        e.block += mv.block
        if mv.strength:
            e.status["STRENGTH"] = e.status.get("STRENGTH", 0) + mv.strength
        if mv.weak:
            add_status(self.status, "WEAK", mv.weak)
        if mv.vulnerable:
            add_status(self.status, "VULNERABLE", mv.vulnerable)
        for _ in range(mv.wound):
            self.discard.append(Card(0, "WOUND"))

    def hit_player(self, amount: int) -> None:
        absorbed = min(self.block, amount)
        self.block -= absorbed
        self.run.hp = max(0, self.run.hp - (amount - absorbed))
        if self.run.hp == 0 and "FAIRY_POTION" in self.run.potions:  # Automatic usage
            self.run.potions[self.run.potions.index("FAIRY_POTION")] = None
            self.run.hp = max(1, self.run.max_hp * 30 // 100)

    def hit_enemy(self, e: Enemy, base: int) -> None:
        amount = damage_value(base, self.status, e.status)
        absorbed = min(e.block, amount)
        e.block -= absorbed
        e.hp = max(0, e.hp - (amount - absorbed))

    # ----- playing cards ------------------------------------------------------------
    def play(self, card: Card, target: Enemy | None) -> None:
        """Play ``card`` (already validated) from the hand."""
        cost = card.d.cost_for(card.upgraded)
        x = self.energy if cost == "X" else 0
        self.energy -= x if cost == "X" else int(cost or 0)
        self.hand.remove(card)
        if card.d.type == "Power":
            pass
        elif "Exhaust" in card.d.keywords:
            self.exhaust.append(card)
        else:
            self.discard.append(card)
        for op, base, up in card.d.effects:
            self.apply_op(op, up if card.upgraded else base, target, x)
        self.count_play()
        if not self.living():
            self.over = True

    def apply_op(self, op: str, value: int, target: Enemy | None, x: int) -> None:
        if op == "dmg" and target is not None and target.alive:
            self.hit_enemy(target, value)
        elif op == "dmg_all":
            for e in self.living():
                self.hit_enemy(e, value)
        elif op == "xdmg_all":
            for _ in range(x):
                for e in self.living():
                    self.hit_enemy(e, value)
        elif op == "block":
            self.block += value
        elif op == "vuln" and target is not None:
            add_status(target.status, "VULNERABLE", value)
        elif op == "weak" and target is not None:
            add_status(target.status, "WEAK", value)
        elif op == "str":
            self.status["STRENGTH"] = self.status.get("STRENGTH", 0) + value
        elif op == "draw":
            self.draw_cards(value)
        elif op == "energy":
            self.energy += value
        elif op == "hand_upgrade":
            cards = [c for c in self.hand if c.upgradable]
            if cards:
                self.hand_select = HandSelect("upgrade_select", "Choose a card to upgrade.", 1, cards)
        elif op == "hand_discard" and self.hand:
            self.hand_select = HandSelect(
                "simple_select", f"Choose {value} card(s) to discard.", min(value, len(self.hand)), list(self.hand)
            )

    def count_play(self) -> None:
        quill = self.run.relic("INK_QUILL")
        if quill is not None:
            quill.counter = (quill.counter or 0) + 1
            if quill.counter >= 10:
                quill.counter = 0
                self.draw_cards(1)

    def confirm_hand_select(self) -> None:
        hs = self.hand_select
        assert hs is not None
        for card in hs.selected:
            if hs.mode == "upgrade_select":
                card.upgraded = True
            elif card in self.hand:
                self.hand.remove(card)
                self.discard.append(card)
        self.hand_select = None

    def add_to_hand(self, cid: str) -> None:
        if len(self.hand) < MAX_HAND:
            self.hand.append(Card(0, cid))


def add_status(status: dict[str, int], sid: str, amount: int) -> None:
    status[sid] = status.get(sid, 0) + amount


def tick(status: dict[str, int]) -> None:
    for sid in ("WEAK", "VULNERABLE"):
        if status.get(sid):
            status[sid] -= 1
            if status[sid] <= 0:
                del status[sid]


def intents(combat: Combat, e: Enemy) -> list[dict]:
    """The intent list shown for enemy ``e`` (damage already includes modifiers)."""
    mv = e.move
    if mv is None:
        return []
    out = []
    if mv.damage:
        dmg = damage_value(mv.damage, e.status, combat.status)
        label = f"{dmg}x{mv.hits}" if mv.hits > 1 else str(dmg)
        total = f"{dmg} damage {mv.hits} times" if mv.hits > 1 else f"{dmg} damage"
        out.append(
            {
                "type": "Attack",
                "label": label,
                "title": "Aggressive",
                "description": f"This enemy intends to attack for {total}.",
            }
        )
    if mv.block:
        out.append(
            {"type": "Defend", "label": "", "title": "Defensive", "description": "This enemy intends to gain Block."}
        )
    if mv.strength:
        out.append(
            {"type": "Buff", "label": "", "title": "Strategic", "description": "This enemy intends to empower itself."}
        )
    if mv.weak or mv.vulnerable or mv.wound:
        out.append(
            {
                "type": "Debuff",
                "label": "",
                "title": "Cunning",
                "description": "This enemy intends to apply a negative effect.",
            }
        )
    return out
