"""A simple scripted bot for tests: ``decide(state, memory)`` and ``play(client)``.

It knows only the documented API (the mod's shapes, docs/game.md). ``style`` changes its
taste: ``"smart"`` plays to win, ``"passive"`` only ends turns (to reach a defeat),
``"explore"`` prefers map nodes, options and potions it has not tried yet (for coverage).
It never sends what the game would answer ``ok`` to without an effect it can wait for:
no potion claim or purchase with a full belt, no click on a sphere without divinations.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

import httpx

from .variants import classify

SP = "/api/v1/singleplayer"
COMBAT = ("monster", "elite", "boss")


@dataclass
class Memory:
    style: str = "smart"
    seen_types: set[str] = field(default_factory=set)
    toggled: dict[str, set[int]] = field(default_factory=dict)
    chosen_titles: set[str] = field(default_factory=set)
    picked_cards: set[str] = field(default_factory=set)
    shop_bought: set[int] = field(default_factory=set)
    shop_floor: tuple[int, int] = (0, -1)
    clicked: set[tuple[int, int]] = field(default_factory=set)


def decide(state: dict, mem: Memory) -> dict | None:
    """The next action body, or None to just read again."""
    st = state["state_type"]
    if st != "card_select":
        mem.toggled.clear()
    if st != "crystal_sphere":
        mem.clicked.clear()
    handler = HANDLERS.get(st)
    return handler(state, mem) if handler else None


def _first_enabled(options: list) -> str | None:
    for o in options:
        if isinstance(o, str):
            return o
        if o.get("enabled"):
            return o["name"]
    return None


def _menu(state: dict, mem: Memory) -> dict | None:
    screen = state["menu_screen"]
    options = state.get("options", [])
    names = [o if isinstance(o, str) else o["name"] for o in options]
    if screen == "main":
        pick = "continue" if "continue" in names else "singleplayer"
    elif screen == "singleplayer":
        pick = "standard"
    elif screen == "character_select":
        embark = next((o for o in options if o["name"] == "embark"), {})
        pick = "embark" if embark.get("enabled") else next(c["id"] for c in state["characters"] if not c["locked"])
    else:  # tutorial prompt, tutorial page, popup: the first enabled button
        pick = _first_enabled(options)
    return {"action": "menu_select", "option": pick} if pick else None


def _belt_full(state: dict) -> bool:
    p = state["player"]
    return len(p["potions"]) >= p["max_potion_slots"]


def _event(state: dict, mem: Memory) -> dict | None:
    block = state["event"]
    if block["in_dialogue"]:
        return {"action": "advance_dialogue"}
    options = [o for o in block["options"] if not o["is_locked"]]
    if not options:
        return None
    pick = options[0]
    if mem.style == "explore":
        fresh = [o for o in options if o["title"] not in mem.chosen_titles]
        pick = fresh[0] if fresh else options[-1]
        mem.chosen_titles.add(pick["title"])
    return {"action": "choose_event_option", "index": pick["index"]}


def _fake_merchant(state: dict, mem: Memory) -> dict:
    fm = state["fake_merchant"]
    if fm["started_fight"]:
        return {"action": "proceed"}
    if "error" in fm["shop"]:  # the inventory is not ready yet
        return None
    foul = next((p for p in state["player"]["potions"] if p["id"] == "FOUL_POTION"), None)
    if foul is not None and mem.style == "explore":
        return {"action": "use_potion", "slot": foul["slot"]}
    return _buy(state, fm["shop"]["items"], mem) or {"action": "proceed"}


def _map(state: dict, mem: Memory) -> dict:
    p = state["player"]
    salve = next((x for x in p["potions"] if x["id"] == "HEALING_SALVE"), None)
    if salve is not None and p["hp"] < p["max_hp"] // 2:
        return {"action": "use_potion", "slot": salve["slot"]}
    options = state["map"]["next_options"]
    if mem.style == "explore":
        fresh = [o for o in options if o["type"] not in mem.seen_types]
        pick = fresh[0] if fresh else options[-1]
    else:
        order = {"RestSite": 0, "Monster": 1, "Treasure": 2, "Shop": 3, "Unknown": 4, "Elite": 5}
        pick = min(options, key=lambda o: order.get(o["type"], 9))
    mem.seen_types.add(pick["type"])
    return {"action": "choose_map_node", "index": pick["index"]}


def _incoming(state: dict) -> int:
    total = 0
    for e in state["battle"]["enemies"]:
        for it in e["intents"]:
            if it["type"] == "Attack":
                a, _, b = it["label"].partition("x")
                total += int(a) * (int(b) if b else 1)
    return total


def _combat(state: dict, mem: Memory) -> dict | None:
    battle = state.get("battle")
    if battle is None or not battle["is_play_phase"]:  # combat ended / enemy turn
        return None
    if mem.style == "passive":
        return {"action": "end_turn"}
    player = state["player"]
    weakest = min(battle["enemies"], key=lambda e: e["hp"])["entity_id"]
    for potion in player["potions"]:
        if potion["id"] == "FOUL_POTION" and mem.style == "explore":
            continue  # kept for the fake merchant
        if potion["can_use_in_combat"]:
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
    card = ((blocks + others + attacks) if need_block else (others + attacks + blocks))[0]
    body = {"action": "play_card", "card_index": card["index"]}
    if card["target_type"] == "AnyEnemy":
        body["target"] = weakest
    return body


def _hand_select(state: dict, mem: Memory) -> dict:
    if state["hand_select"]["can_confirm"]:
        return {"action": "combat_confirm_selection"}
    return {"action": "combat_select_card", "card_index": 0}


def _rewards(state: dict, mem: Memory) -> dict:
    for item in state["rewards"]["items"]:
        if item["type"] == "potion" and _belt_full(state):
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
    done = mem.toggled.setdefault(cs["screen_type"] + (cs.get("prompt") or ""), set())
    for card in cs["cards"]:
        if card["index"] not in done:
            done.add(card["index"])
            return {"action": "select_card", "index": card["index"]}
    return {"action": "cancel_selection"}


def _bundle(state: dict, mem: Memory) -> dict:
    if state["bundle_select"]["can_confirm"]:
        return {"action": "confirm_bundle_selection"}
    return {"action": "select_bundle", "index": 0}


def _crystal(state: dict, mem: Memory) -> dict | None:
    cs = state["crystal_sphere"]
    if cs["can_proceed"]:
        return {"action": "crystal_sphere_proceed"}
    if cs["tool"] == "none":
        return None
    if mem.style == "explore" and cs["can_use_small_tool"] and cs["tool"] != "small":
        return {"action": "crystal_sphere_set_tool", "tool": "small"}
    for cell in cs["clickable_cells"]:
        if (cell["x"], cell["y"]) not in mem.clicked:
            mem.clicked.add((cell["x"], cell["y"]))
            return {"action": "crystal_sphere_click_cell", "x": cell["x"], "y": cell["y"]}
    return None


def _buy(state: dict, items: list[dict], mem: Memory) -> dict | None:
    where = (state["run"]["act"], state["run"]["floor"])
    if mem.shop_floor != where:
        mem.shop_floor, mem.shop_bought = where, set()
    if mem.style == "explore":
        items = sorted(items, key=lambda i: i["category"] != "card_removal")
    for item in items:
        if item["category"] == "potion" and _belt_full(state):
            continue
        if (
            item["is_stocked"]
            and item["can_afford"]
            and item["index"] not in mem.shop_bought
            and len(mem.shop_bought) < 2
        ):
            mem.shop_bought.add(item["index"])
            return {"action": "shop_purchase", "index": item["index"]}
    return None


def _shop(state: dict, mem: Memory) -> dict | None:
    shop = state["shop"]
    if "error" in shop:  # the inventory is not ready yet
        return None
    return _buy(state, shop["items"], mem) or {"action": "proceed"}


def _rest(state: dict, mem: Memory) -> dict:
    rest = state["rest_site"]
    enabled = [o for o in rest["options"] if o["is_enabled"]]
    if not enabled:
        return {"action": "proceed"}
    player = state["player"]
    want = "HEAL" if player["hp"] < player["max_hp"] * 0.7 else "SMITH"
    pick = next((o for o in enabled if o["id"] == want), enabled[0])
    return {"action": "choose_rest_option", "index": pick["index"]}


def _treasure(state: dict, mem: Memory) -> dict | None:
    t = state["treasure"]
    if t.get("relics"):
        return {"action": "claim_treasure_relic", "index": 0}
    if t.get("can_proceed"):
        return {"action": "proceed"}
    return None  # the chest is opening


HANDLERS: dict[str, Any] = {
    "menu": _menu,
    "event": _event,
    "fake_merchant": _fake_merchant,
    "map": _map,
    "monster": _combat,
    "elite": _combat,
    "boss": _combat,
    "hand_select": _hand_select,
    "rewards": _rewards,
    "card_reward": _card_reward,
    "card_select": _card_select,
    "bundle_select": _bundle,
    "relic_select": lambda s, m: {"action": "select_relic", "index": 0},
    "crystal_sphere": _crystal,
    "shop": _shop,
    "rest_site": _rest,
    "treasure": _treasure,
}


def outcome_of(state: dict) -> str:
    """A game_over state's outcome: the mod does not say it; a dead player lost."""
    return "defeat" if state["player"]["hp"] <= 0 else "victory"


@dataclass
class Result:
    outcome: str | None
    actions: int
    reads: int
    errors: list[str]
    screens: set[str]
    acts: int = 1
    variants: set[str] = field(default_factory=set)


def play(
    client: httpx.Client,
    style: str = "smart",
    max_actions: int = 600,
    deadline_s: float = 30.0,
    mem: Memory | None = None,
) -> Result:
    """Play from wherever the game is until game over (or the budget runs out).

    Pass one ``mem`` across runs to let the explore style prefer what it has not tried.
    """
    mem = mem or Memory(style=style)
    actions = reads = 0
    errors: list[str] = []
    screens: set[str] = set()
    variants: set[str] = set()
    acts = 1
    end = time.monotonic() + deadline_s
    while actions < max_actions and time.monotonic() < end:
        state = client.get(SP).json()
        reads += 1
        st = state["state_type"]
        screens.add(st)
        variants.add(classify(state))
        acts = max(acts, state.get("run", {}).get("act", 1))
        if st == "game_over":
            return Result(outcome_of(state), actions, reads, errors, screens, acts, variants)
        body = decide(state, mem)
        if body is None:
            continue
        reply = client.post(SP, json=body)
        actions += 1
        data = reply.json()
        if reply.status_code != 200 or data.get("status") != "ok":
            errors.append(f"{st}: {body} -> {reply.status_code} {data}")
    return Result(None, actions, reads, errors, screens, acts, variants)
