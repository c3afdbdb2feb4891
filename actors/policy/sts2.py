"""The built-in STS2MCP policy: a plain heuristic that can finish a run on any server that
speaks the API (the built-in game or the real mod).

It keeps one rule about evidence: after an accepted action it waits for a read that differs
from the one it acted on ("ok means queued", the effect shows in a later read) before acting
again, and gives up waiting with a ``stop`` proposal after ``session.stuck_seconds``.
"""
from __future__ import annotations

import hashlib
import json
import time

from .base import Observation, Policy, Proposal

MENU_PATH = ("singleplayer", "standard")


def digest(state: dict) -> str:
    return hashlib.sha256(json.dumps(state, sort_keys=True).encode()).hexdigest()


def _name(option) -> str:
    return option if isinstance(option, str) else str((option or {}).get("name", ""))


def _enabled(option) -> bool:
    return isinstance(option, str) or bool((option or {}).get("enabled", True))


class Sts2Heuristic(Policy):
    def __init__(self, settings: dict, session: dict):
        super().__init__(settings, session)
        self.character = settings.get("character")
        self.acted_on: str | None = None  # digest of the state of the last accepted action
        self.acted_action: str | None = None
        self.waiting_since: float | None = None
        self.idle_since: float | None = None
        self.character_picked = False
        self.last_digest: str | None = None
        self.rejected: set[tuple[str | None, str]] = set()  # (state digest, action key)

    # -- memory -------------------------------------------------------------------------
    def observe(self, obs: Observation) -> None:
        self.last_digest = digest(obs.state)
        if obs.state.get("menu", {}).get("menu_screen") != "character_select":
            self.character_picked = False

    def record_result(self, proposal: dict, result: dict) -> None:
        if result.get("outcome") == "accepted":
            state_digest = proposal.get("state_digest")
            # picking a character changes nothing the API shows: a fresh read releases it
            self.acted_on = None if proposal.get("character_pick") else state_digest
            self.acted_action = proposal.get("action")
            if proposal.get("action") == "menu_select" and proposal.get("character_pick"):
                self.character_picked = True
        elif result.get("outcome") == "rejected":
            self.rejected.add((proposal.get("state_digest"),
                               _key(Proposal(proposal.get("action"), proposal.get("parameters") or {}))))
            if len(self.rejected) > 1000:
                self.rejected.clear()
            if proposal.get("character_pick"):
                self.character_picked = False

    # -- deciding -------------------------------------------------------------------------
    def decide(self, obs: Observation) -> Proposal:
        d = digest(obs.state)
        if self.acted_on is not None and d == self.acted_on:
            now = time.monotonic()
            self.waiting_since = self.waiting_since or now
            if now - self.waiting_since > float(self.session.get("stuck_seconds") or 60):
                return Proposal.stop("stuck")
            return Proposal.wait(f"awaiting a read that shows the accepted {self.acted_action}",
                                 extra={"state_digest": d})
        self.acted_on, self.waiting_since = None, None
        p = self._choose(obs)
        p.extra.setdefault("state_digest", d)
        if p.wish == "wait":  # waiting is progress only for so long
            now = time.monotonic()
            self.idle_since = self.idle_since or now
            if now - self.idle_since > float(self.session.get("stuck_seconds") or 60):
                return Proposal.stop("stuck", extra={"state_digest": d, "last_wait": p.reason})
        else:
            self.idle_since = None
        return p

    def _choose(self, obs: Observation) -> Proposal:
        """The first candidate of the screen's rule that was not rejected on this very state."""
        st = obs.state
        kind = st.get("state_type")
        handler = getattr(self, f"_on_{kind}", None)
        if handler is None:
            return Proposal.wait(f"no rule for screen {kind!r}")
        block = st.get("battle") if kind in ("monster", "elite", "boss") else st.get(kind)
        found = handler(st, block or {})
        candidates = found if isinstance(found, list) else [found]
        d = digest(st)
        for p in candidates:
            if p.wish != "execute" or (d, _key(p)) not in self.rejected:
                return p
        return Proposal.wait(f"every candidate on this {kind} screen was rejected; waiting for a change")

    def _on_menu(self, st: dict, menu: dict) -> Proposal:
        screen = menu.get("menu_screen")
        options = menu.get("options") or []
        names = [_name(o) for o in options if _enabled(o)]
        if screen in ("tutorial_prompt", "tutorial", "popup"):
            pick = next((n for n in ("no", "ok", "close", "skip") if n in names), names[0] if names else None)
            return Proposal("menu_select", {"option": pick}, f"dismiss the {screen}") if pick else \
                Proposal.wait(f"{screen} without options")
        if screen == "character_select":
            if self.character_picked:
                if "embark" in names:
                    return Proposal("menu_select", {"option": "embark"}, "embark with the picked character")
                return Proposal.wait("character picked; awaiting embark to be enabled")
            chars = [c for c in menu.get("characters") or [] if not c.get("locked")]
            if not chars:
                return Proposal.wait("no unlocked character")
            cid = self.character or chars[0].get("id")
            return Proposal("menu_select", {"option": cid}, f"pick character {cid}",
                            extra={"character_pick": True})
        for step in MENU_PATH:
            if step in names:
                return Proposal("menu_select", {"option": step}, f"menu: {step}")
        return Proposal.wait(f"menu {screen!r}: no known way into a run ({names})")

    def _on_game_over(self, st: dict, block: dict) -> Proposal:
        options = [_name(o) for o in block.get("options") or []] or ["main_menu"]
        then_stop = "run_ended" if self.session.get("stop_on_run_end", True) else None
        return Proposal("menu_select", {"option": options[0]},
                        f"run over ({block.get('outcome', '?')}): dismiss", then_stop=then_stop,
                        source="stop_on_run_end" if then_stop else "policy")

    def _on_event(self, st: dict, ev: dict) -> Proposal:
        if ev.get("in_dialogue") or ev.get("is_dialogue"):
            return Proposal("advance_dialogue", {}, "advance the dialogue")
        for opt in ev.get("options") or []:
            if not opt.get("is_locked") and opt.get("enabled", True):
                return Proposal("choose_event_option", {"index": opt.get("index", 0)},
                                f"event option {opt.get('title') or opt.get('index')}")
        return Proposal("advance_dialogue", {}, "no open option: advance")

    def _on_map(self, st: dict, m: dict) -> Proposal:
        opts = m.get("next_options") or []
        if not opts:
            return Proposal.wait("map without next options")
        rank = {"RestSite": 0, "Monster": 1, "Treasure": 2, "Shop": 3, "Unknown": 4, "Event": 4, "Elite": 5}
        best = min(opts, key=lambda o: (rank.get(o.get("type"), 4), o.get("index", 0)))
        return Proposal("choose_map_node", {"index": best.get("index", 0)}, f"map: {best.get('type')}")

    def _combat(self, st: dict, battle: dict) -> Proposal:
        if not battle.get("is_play_phase", True) or battle.get("turn") not in (None, "player"):
            return Proposal.wait("enemy turn")
        player = st.get("player") or {}
        enemies = [e for e in battle.get("enemies") or [] if e.get("hp", 0) > 0]
        target = min(enemies, key=lambda e: e.get("hp", 0)) if enemies else None
        incoming = sum(_intent_damage(e) for e in enemies)
        hand = [c for c in player.get("hand") or [] if c.get("can_play")]
        lethal = target is not None and target.get("hp", 0) + target.get("block", 0) <= 6
        block_first = incoming > player.get("block", 0) and not lethal
        order = sorted(hand, key=lambda c: (c.get("type") != ("Skill" if block_first else "Attack"),
                                            c.get("index", 0)))
        out = []
        for card in order:
            params = {"card_index": card.get("index", 0)}
            if card.get("target_type") == "AnyEnemy":
                if target is None:
                    continue
                params["target"] = target["entity_id"]
            out.append(Proposal("play_card", params, f"play {card.get('name')}"))
        return out + [Proposal("end_turn", {}, "no playable card" if not out else "end the turn")]

    _on_monster = _on_elite = _on_boss = _combat

    def _on_hand_select(self, st: dict, hs: dict) -> Proposal:
        if hs.get("can_confirm"):
            return Proposal("combat_confirm_selection", {}, "confirm the hand selection")
        cards = hs.get("cards") or []
        return Proposal("combat_select_card", {"card_index": cards[0].get("index", 0)}, "select a card") \
            if cards else Proposal.wait("hand select without cards")

    def _on_rewards(self, st: dict, rw: dict) -> list[Proposal]:
        out = [Proposal("claim_reward", {"index": item.get("index", 0)}, f"claim {item.get('type')}")
               for item in rw.get("items") or []
               if item.get("type") in ("gold", "relic", "potion", "card")]
        return out + [Proposal("proceed", {}, "rewards done")]

    def _on_card_reward(self, st: dict, cr: dict) -> Proposal:
        cards = cr.get("cards") or []
        if cards and cr.get("can_skip", True) is not None:
            return Proposal("select_card_reward", {"card_index": cards[0].get("index", 0)},
                            f"take {cards[0].get('name')}")
        return Proposal("skip_card_reward", {}, "no card to take")

    def _on_rest_site(self, st: dict, rs: dict) -> list[Proposal]:
        opts = [o for o in rs.get("options") or [] if o.get("enabled", True)]
        hurt = (st.get("player") or {}).get("hp", 0) < (st.get("player") or {}).get("max_hp", 0)
        out = [Proposal("choose_rest_option", {"index": o.get("index", 0)},
                        f"rest: {o.get('name') or o.get('id')}") for o in opts[:1] if hurt]
        return out + [Proposal("proceed", {}, "leave the rest site")]

    def _on_treasure(self, st: dict, tr: dict) -> list[Proposal]:
        out = [] if tr.get("claimed") else [
            Proposal("claim_treasure_relic", {"index": r.get("index", 0)}, "take the relic")
            for r in (tr.get("relics") or [])[:1]]
        return out + [Proposal("proceed", {}, "leave the treasure room")]

    def _on_shop(self, st: dict, shop: dict) -> Proposal:
        return Proposal("proceed", {}, "leave the shop")

    def _on_crystal_sphere(self, st: dict, cs: dict) -> list[Proposal]:
        out = []
        if cs.get("clicks_remaining", 0) > 0:
            out = [Proposal("crystal_sphere_click_cell", {"x": c["x"], "y": c["y"]},
                            f"divine cell {c['x']},{c['y']}")
                   for c in cs.get("cells") or [] if not c.get("revealed")][:1]
        return out + [Proposal("crystal_sphere_proceed", {}, "leave the crystal sphere")]

    def _on_bundle_select(self, st: dict, bs: dict) -> list[Proposal]:
        if bs.get("can_confirm"):
            return [Proposal("confirm_bundle_selection", {}, "confirm the bundle")]
        return [Proposal("select_bundle", {"index": b.get("index", 0)}, "select a bundle")
                for b in (bs.get("bundles") or [])[:1]] + \
            [Proposal("cancel_bundle_selection", {}, "no bundle to take")]

    _on_fake_merchant = _on_event

    def _on_card_select(self, st: dict, cs: dict) -> Proposal:
        if cs.get("can_confirm"):
            return Proposal("confirm_selection", {}, "confirm")
        cards = cs.get("cards") or []
        if cards:
            return Proposal("select_card", {"index": cards[0].get("index", 0)}, "select a card")
        if cs.get("can_cancel"):
            return Proposal("cancel_selection", {}, "nothing to select")
        return Proposal.wait("card select without cards")

    def _on_relic_select(self, st: dict, rs: dict) -> Proposal:
        relics = rs.get("relics") or []
        if relics:
            return Proposal("select_relic", {"index": relics[0].get("index", 0)}, "take a relic")
        return Proposal("skip_relic_selection", {}, "no relic offered")

    def _on_overlay(self, st: dict, ov: dict) -> Proposal:
        return Proposal.wait(f"overlay {ov.get('screen_type')!r}: waiting for it to close")

    def _on_unknown(self, st: dict, block: dict) -> list[Proposal]:
        return [Proposal("proceed", {}, f"unknown room {st.get('room_type')!r}: try to proceed"),
                Proposal.wait("unknown screen: waiting")]


def _intent_damage(enemy: dict) -> int:
    total = 0
    for intent in enemy.get("intents") or []:
        label = str(intent.get("label") or "")
        digits = "".join(ch if ch.isdigit() else " " for ch in label).split()
        if intent.get("type", "").lower().startswith("attack") and digits:
            n = int(digits[0]) * (int(digits[1]) if len(digits) > 1 else 1)
            total += n
    return total


def _key(p: Proposal) -> str:
    return json.dumps([p.action, p.parameters], sort_keys=True)
