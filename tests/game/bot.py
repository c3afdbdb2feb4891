"""A simple scripted bot for tests: ``decide(state, memory)`` and ``play(client)``.

It knows only the documented API. ``style`` changes its taste: ``"smart"`` plays to win,
``"passive"`` only ends turns (to reach a defeat), ``"explore"`` prefers map nodes and
options it has not seen yet (for screen coverage).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

import httpx

SP = "/api/v1/singleplayer"


@dataclass
class Memory:
    style: str = "smart"
    seen_types: set[str] = field(default_factory=set)
    toggled: dict[str, set[int]] = field(default_factory=dict)
    chosen_titles: set[str] = field(default_factory=set)
    picked_cards: set[str] = field(default_factory=set)
    shop_bought: set[int] = field(default_factory=set)
    shop_floor: int = -1
    clicked: set[tuple[int, int]] = field(default_factory=set)


def decide(state: dict, mem: Memory) -> dict | None:
    """The next action body, or None to just read again."""
    st = state["state_type"]
    handler = HANDLERS.get(st)
    if st != "card_select":
        mem.toggled.clear()
    if st != "crystal_sphere":
        mem.clicked.clear()
    return handler(state, mem) if handler else None


def _menu(state: dict, mem: Memory) -> dict | None:
    # menus, tutorials and popups put their fields at the top level (no block)
    screen = state["menu_screen"]
    if screen in ("tutorial_prompt", "tutorial", "popup"):
        option = next(o["name"] for o in state["options"] if o["enabled"])
        return {"action": "menu_select", "option": option}
    if screen == "main":
        return {"action": "menu_select",
                "option": "continue" if "continue" in state["options"] else "singleplayer"}
    if screen == "singleplayer":
        return {"action": "menu_select", "option": "standard"}
    embark = next((o for o in state["options"] if o["name"] == "embark"), {})
    if not embark.get("enabled"):  # the pick is not shown; only embark's state tells
        ch = next(c for c in state["characters"] if not c["locked"])
        return {"action": "menu_select", "option": ch["id"]}
    return {"action": "menu_select", "option": "embark"}


def _event(state: dict, mem: Memory) -> dict:
    block = state.get("event") or state.get("fake_merchant")
    if block["in_dialogue"]:
        return {"action": "advance_dialogue"}
    options = [o for o in block["options"] if not o["is_locked"]]
    pick = options[0]
    if mem.style == "explore":
        fresh = [o for o in options if o["title"] not in mem.chosen_titles]
        pick = fresh[0] if fresh else options[-1]
        mem.chosen_titles.add(pick["title"])
    return {"action": "choose_event_option", "index": pick["index"]}


def _map(state: dict, mem: Memory) -> dict:
    options = state["map"]["next_options"]
    if mem.style == "explore":
        fresh = [o for o in options if o["type"] not in mem.seen_types]
        pick = fresh[0] if fresh else options[-1]
    else:
        order = {"RestSite": 0, "Monster": 1, "Treasure": 2, "Shop": 3, "Unknown": 4,
                 "Elite": 5}
        pick = min(options, key=lambda o: order.get(o["type"], 9))
    mem.seen_types.add(pick["type"])
    return {"action": "choose_map_node", "index": pick["index"]}


def _incoming(state: dict) -> int:
    total = 0
    for e in state["battle"]["enemies"]:
        for it in e["intents"]:
            if it["type"] == "Attack":
                label = it["label"]
                a, _, b = label.partition("x")
                total += int(a) * (int(b) if b else 1)
    return total


def _combat(state: dict, mem: Memory) -> dict | None:
    battle = state["battle"]
    if not battle["is_play_phase"]:
        return None
    if mem.style == "passive":
        return {"action": "end_turn"}
    player = state["player"]
    enemies = battle["enemies"]
    weakest = min(enemies, key=lambda e: e["hp"])["entity_id"]
    for potion in player["potions"]:
        body = {"action": "use_potion", "slot": potion["slot"]}
        if potion["target_type"] == "AnyEnemy":
            body["target"] = weakest
        return body
    need_block = _incoming(state) - player["block"] > 6
    playable = [c for c in player["hand"] if c["can_play"]]
    playable = [c for c in playable if c["cost"] != "X" or player["energy"] >= 2]
    if not playable:
        return {"action": "end_turn"}
    blocks = [c for c in playable if c["type"] == "Skill"]
    attacks = [c for c in playable if c["type"] == "Attack"]
    others = [c for c in playable if c["type"] not in ("Skill", "Attack")]
    order = (blocks + others + attacks) if need_block else (others + attacks + blocks)
    card = order[0]
    body = {"action": "play_card", "card_index": card["index"]}
    if card["target_type"] == "AnyEnemy":
        body["target"] = weakest
    return body


def _hand_select(state: dict, mem: Memory) -> dict:
    hs = state["hand_select"]
    if hs["can_confirm"]:
        return {"action": "combat_confirm_selection"}
    return {"action": "combat_select_card", "card_index": 0}


def _rewards(state: dict, mem: Memory) -> dict:
    full = len(state["player"]["potions"]) >= state["player"]["max_potion_slots"]
    for item in state["rewards"]["items"]:
        if item["type"] == "potion" and full:
            continue
        return {"action": "claim_reward", "index": item["index"]}
    return {"action": "proceed"}


def _card_reward(state: dict, mem: Memory) -> dict:
    if mem.style == "passive":
        return {"action": "skip_card_reward"}
    cards = state["card_reward"]["cards"]
    pick = cards[0]
    if mem.style == "explore":
        pick = next((c for c in cards if c["id"] not in mem.picked_cards), pick)
        mem.picked_cards.add(pick["id"])
    return {"action": "select_card_reward", "card_index": pick["index"]}


def _card_select(state: dict, mem: Memory) -> dict:
    cs = state["card_select"]
    if cs["screen_type"] == "choose":
        return {"action": "select_card", "index": 0}
    if cs["can_confirm"]:
        return {"action": "confirm_selection"}
    key = cs["screen_type"] + cs["prompt"]
    done = mem.toggled.setdefault(key, set())
    for card in cs["cards"]:
        if card["index"] not in done:
            done.add(card["index"])
            return {"action": "select_card", "index": card["index"]}
    if cs["can_cancel"]:
        return {"action": "cancel_selection"}
    return {"action": "confirm_selection"}


def _bundle(state: dict, mem: Memory) -> dict:
    if state["bundle_select"]["can_confirm"]:
        return {"action": "confirm_bundle_selection"}
    return {"action": "select_bundle", "index": 0}


def _relic_select(state: dict, mem: Memory) -> dict:
    return {"action": "select_relic", "index": 0}


def _crystal(state: dict, mem: Memory) -> dict:
    cs = state["crystal_sphere"]
    if cs["clicks_remaining"] <= 0:
        return {"action": "crystal_sphere_proceed"}
    if cs["tool"] != "small" and cs["clicks_remaining"] < 3:
        return {"action": "crystal_sphere_set_tool", "tool": "small"}
    for cell in cs["cells"]:
        if not cell["revealed"] and (cell["x"], cell["y"]) not in mem.clicked:
            mem.clicked.add((cell["x"], cell["y"]))
            return {"action": "crystal_sphere_click_cell", "x": cell["x"], "y": cell["y"]}
    return {"action": "crystal_sphere_proceed"}


def _shop(state: dict, mem: Memory) -> dict:
    floor = state["run"]["floor"]
    if mem.shop_floor != floor:
        mem.shop_floor, mem.shop_bought = floor, set()
    items = state["shop"]["items"]
    if mem.style == "explore":
        items = sorted(items, key=lambda i: i["category"] != "card_removal")
    for item in items:
        if (item["is_stocked"] and item["can_afford"] and item["index"] not in mem.shop_bought
                and len(mem.shop_bought) < 2):
            mem.shop_bought.add(item["index"])
            return {"action": "shop_purchase", "index": item["index"]}
    return {"action": "proceed"}


def _rest(state: dict, mem: Memory) -> dict:
    rest = state["rest_site"]
    enabled = [o for o in rest["options"] if o["is_enabled"]]
    if not enabled:
        return {"action": "proceed"}
    player = state["player"]
    want = "rest" if player["hp"] < player["max_hp"] * 0.7 else "smith"
    pick = next((o for o in enabled if o["id"] == want), enabled[0])
    return {"action": "choose_rest_option", "index": pick["index"]}


def _treasure(state: dict, mem: Memory) -> dict:
    t = state["treasure"]
    if t["relics"] and not t["claimed"]:
        return {"action": "claim_treasure_relic", "index": 0}
    return {"action": "proceed"}


def _unknown(state: dict, mem: Memory) -> dict | None:
    if state.get("room_type") == "Transition":
        return None
    return {"action": "proceed"}


HANDLERS: dict[str, Any] = {
    "menu": _menu, "event": _event, "fake_merchant": _event, "map": _map,
    "monster": _combat, "elite": _combat, "boss": _combat, "hand_select": _hand_select,
    "rewards": _rewards, "card_reward": _card_reward, "card_select": _card_select,
    "bundle_select": _bundle, "relic_select": _relic_select, "crystal_sphere": _crystal,
    "shop": _shop, "rest_site": _rest, "treasure": _treasure, "unknown": _unknown,
    "overlay": lambda s, m: None, "game_over": lambda s, m: None,
}


@dataclass
class Result:
    outcome: str | None
    actions: int
    reads: int
    errors: list[str]
    screens: set[str]


def play(client: httpx.Client, style: str = "smart", max_actions: int = 400,
         deadline_s: float = 20.0, mem: Memory | None = None) -> Result:
    """Play from wherever the game is until game over (or the budget runs out).

    Pass one ``mem`` across runs to let the explore style prefer what it has not tried.
    """
    mem = mem or Memory(style=style)
    actions = reads = 0
    errors: list[str] = []
    screens: set[str] = set()
    end = time.monotonic() + deadline_s
    before = client.get("/api/v1/profile").json()  # game_over does not say who won
    while actions < max_actions and time.monotonic() < end:
        state = client.get(SP).json()
        reads += 1
        st = state["state_type"]
        screens.add(st)
        if st == "game_over":
            after = client.get("/api/v1/profile").json()
            won = after["victories"] > before["victories"]
            return Result("victory" if won else "defeat", actions, reads, errors, screens)
        body = decide(state, mem)
        if body is None:
            continue
        reply = client.post(SP, json=body)
        actions += 1
        data = reply.json()
        if reply.status_code != 200 or data.get("status") != "ok":
            errors.append(f"{st}: {body} -> {reply.status_code} {data}")
    return Result(None, actions, reads, errors, screens)
