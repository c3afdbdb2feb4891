"""A seeded explorer for the contract test: ``Explorer(seed).choose(state) -> action | None``.

It speaks only the mod's API (McpMod.Actions.cs names and parameters) and reads only the
mod's state shapes, so it plays the built-in game and the real one alike. It plays to win
(fights are won by attacking the weakest enemy) but takes random turns where screens branch
(rewards, shops, events, map, selections) so several seeds show many screen variants.
``None`` means "read again" (a transition, the enemy's turn, a chest opening).

When the same state comes back unchanged ``PATIENCE`` times, the explorer falls back to the
screen's ways out (``proceed``, skip, cancel) and then gives up on that screen by returning
None; the caller's deadline ends the session.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from typing import Any

PATIENCE = 4
Body = dict[str, Any]


class Explorer:
    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)
        self.last_key = ""
        self.repeats = 0
        self.done: set[str] = set()  # one-time detours already taken (e.g. "abandon_run")

    def once(self, what: str) -> bool:
        """True the first time ``what`` is asked about."""
        first = what not in self.done
        self.done.add(what)
        return first

    def choose(self, state: dict) -> Body | None:
        key = json.dumps(state, sort_keys=True)
        self.repeats = self.repeats + 1 if key == self.last_key else 0
        self.last_key = key
        kind = state.get("state_type")
        if self.repeats >= PATIENCE:
            ways_out = FALLBACKS.get(kind, ["proceed"])
            return {"action": self.rng.choice(ways_out)} if ways_out else None
        handler = HANDLERS.get(kind)
        return handler(self, state) if handler else None

    def pick(self, items: list) -> Any:
        return self.rng.choice(items) if items else None

    def chance(self, p: float) -> bool:
        return self.rng.random() < p


def _menu(ex: Explorer, state: dict) -> Body | None:
    screen = state.get("menu_screen")
    options = state.get("options") or []
    names = [o if isinstance(o, str) else o.get("name") for o in options if isinstance(o, str) or o.get("enabled")]
    if screen == "main":
        if "continue" in names:  # first a look at the abandon popup (answered "no")
            return _menu_option("abandon_run" if ex.once("abandon_run") else "continue")
        return _menu_option("singleplayer")
    if screen == "popup" and "no" in names and ex.once("popup_no"):
        return _menu_option("no")
    if screen == "singleplayer":
        return _menu_option("standard")
    if screen == "character_select":
        embark = next((o for o in options if o.get("name") == "embark"), {})
        if embark.get("enabled") and ex.chance(0.8):
            return _menu_option("embark")
        ids = [c["id"] for c in state.get("characters", []) if not c.get("locked")]
        return _menu_option(ex.pick(ids) or "embark")
    return _menu_option(ex.pick(names)) if names else None


def _menu_option(option: str | None) -> Body | None:
    return {"action": "menu_select", "option": option} if option else None


def _combat(ex: Explorer, state: dict) -> Body | None:
    battle = state.get("battle")
    if not isinstance(battle, dict) or not battle.get("is_play_phase"):
        return None
    player = state.get("player", {})
    enemies = sorted(battle.get("enemies", []), key=lambda e: e.get("hp", 0))
    target = enemies[0]["entity_id"] if enemies else None
    potions = player.get("potions", [])
    if potions and ex.chance(0.15):
        potion = ex.pick(potions)
        body = {"action": "use_potion", "slot": potion["slot"]}
        return body | ({"target": target} if potion.get("target_type") == "AnyEnemy" else {})
    playable = [c for c in player.get("hand", []) if c.get("can_play")]
    attacks = [c for c in playable if c.get("type") == "Attack"]
    card = ex.pick(attacks if attacks and ex.chance(0.7) else playable)
    if card is None:
        return {"action": "end_turn"}
    body = {"action": "play_card", "card_index": card["index"]}
    return body | ({"target": target} if card.get("target_type") == "AnyEnemy" else {})


def _hand_select(ex: Explorer, state: dict) -> Body:
    block = state["hand_select"]
    if block.get("can_confirm") and (block.get("selected_cards") or ex.chance(0.3)):
        return {"action": "combat_confirm_selection"}
    card = ex.pick(block.get("cards", []))
    if card is None:
        return {"action": "combat_confirm_selection"}
    return {"action": "combat_select_card", "card_index": card["index"]}


def _rewards(ex: Explorer, state: dict) -> Body:
    items = state["rewards"].get("items", [])
    if items and ex.repeats == 0:
        return {"action": "claim_reward", "index": ex.pick(items)["index"]}
    return {"action": "proceed"}


def _card_reward(ex: Explorer, state: dict) -> Body:
    cards = state["card_reward"].get("cards", [])
    if cards and ex.chance(0.7):
        return {"action": "select_card_reward", "card_index": ex.pick(cards)["index"]}
    return {"action": "skip_card_reward"}


def _card_select(ex: Explorer, state: dict) -> Body:
    block = state["card_select"]
    if block.get("can_confirm"):
        return {"action": "confirm_selection"}
    cards = block.get("cards", [])
    if cards and (ex.repeats < 2 or not block.get("can_cancel")):
        return {"action": "select_card", "index": ex.pick(cards)["index"]}
    return {"action": "cancel_selection"}


def _bundle_select(ex: Explorer, state: dict) -> Body:
    block = state["bundle_select"]
    if block.get("preview_showing") and block.get("can_confirm"):
        return {"action": "confirm_bundle_selection"}
    return {"action": "select_bundle", "index": ex.pick(block.get("bundles", []) or [{"index": 0}])["index"]}


def _relic_select(ex: Explorer, state: dict) -> Body:
    relics = state["relic_select"].get("relics", [])
    if relics and ex.chance(0.8):
        return {"action": "select_relic", "index": ex.pick(relics)["index"]}
    return {"action": "skip_relic_selection"}


def _map(ex: Explorer, state: dict) -> Body | None:
    options = state["map"].get("next_options", [])
    return {"action": "choose_map_node", "index": ex.pick(options)["index"]} if options else None


def _event(ex: Explorer, state: dict) -> Body | None:
    block = state["event"]
    if block.get("in_dialogue"):
        return {"action": "advance_dialogue"}
    options = [o for o in block.get("options", []) if not o.get("is_locked")]
    return {"action": "choose_event_option", "index": ex.pick(options)["index"]} if options else None


def _rest_site(ex: Explorer, state: dict) -> Body | None:
    block = state["rest_site"]
    enabled = [o for o in block.get("options", []) if o.get("is_enabled")]
    if enabled and not block.get("can_proceed"):
        return {"action": "choose_rest_option", "index": ex.pick(enabled)["index"]}
    return {"action": "proceed"} if block.get("can_proceed") else None


def _shop(ex: Explorer, shop: dict) -> Body | None:
    items = [i for i in shop.get("items", []) if i.get("is_stocked") and i.get("can_afford")]
    if items and ex.chance(0.5):
        return {"action": "shop_purchase", "index": ex.pick(items)["index"]}
    return {"action": "proceed"} if shop.get("can_proceed") else None


def _throw_potion(ex: Explorer, state: dict) -> Body | None:
    """At a fake merchant, try each potion out of combat once (one may start his fight)."""
    if state["fake_merchant"].get("started_fight"):
        return None
    floor = state.get("run", {}).get("floor")
    for potion in state.get("player", {}).get("potions", []):
        if ex.once(f"throw:{floor}:{potion['slot']}:{potion['id']}"):
            return {"action": "use_potion", "slot": potion["slot"]}
    return None


def _treasure(ex: Explorer, state: dict) -> Body | None:
    block = state["treasure"]
    if block.get("relics"):
        return {"action": "claim_treasure_relic", "index": block["relics"][0]["index"]}
    return {"action": "proceed"} if block.get("can_proceed") else None


def _crystal_sphere(ex: Explorer, state: dict) -> Body | None:
    block = state["crystal_sphere"]
    if block.get("can_proceed"):
        return {"action": "crystal_sphere_proceed"}
    tools = [t for t in ("big", "small") if block.get(f"can_use_{t}_tool")]
    if (tools and block.get("tool") == "none") or (tools and ex.chance(0.2)):
        return {"action": "crystal_sphere_set_tool", "tool": ex.pick(tools)}
    cell = ex.pick(block.get("clickable_cells", []))
    return {"action": "crystal_sphere_click_cell", "x": cell["x"], "y": cell["y"]} if cell else None


def _game_over(ex: Explorer, state: dict) -> Body:
    return {"action": "menu_select", "option": "main_menu"}


HANDLERS: dict[str, Callable[[Explorer, dict], Body | None]] = {
    "menu": _menu,
    "monster": _combat,
    "elite": _combat,
    "boss": _combat,
    "hand_select": _hand_select,
    "rewards": _rewards,
    "card_reward": _card_reward,
    "card_select": _card_select,
    "bundle_select": _bundle_select,
    "relic_select": _relic_select,
    "map": _map,
    "event": _event,
    "rest_site": _rest_site,
    "shop": lambda ex, s: _shop(ex, s["shop"]),
    "fake_merchant": lambda ex, s: _throw_potion(ex, s) or _shop(ex, s["fake_merchant"]["shop"]),
    "treasure": _treasure,
    "crystal_sphere": _crystal_sphere,
    "game_over": _game_over,
}

FALLBACKS: dict[str, list[str]] = {
    "card_select": ["cancel_selection", "confirm_selection"],
    "bundle_select": ["cancel_bundle_selection", "confirm_bundle_selection"],
    "relic_select": ["skip_relic_selection"],
    "card_reward": ["skip_card_reward"],
    "hand_select": ["combat_confirm_selection"],
    "crystal_sphere": ["crystal_sphere_proceed"],
    "monster": ["end_turn", "proceed"],
    "elite": ["end_turn", "proceed"],
    "boss": ["end_turn", "proceed"],
    "unknown": [],
    "menu": [],
}
