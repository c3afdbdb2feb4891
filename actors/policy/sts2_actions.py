"""What an agent is shown of a Slay the Spire 2 screen and which actions it may answer with.

    legal_actions(policy, state)  -> [{"action", "args": {name: [values]}, "about"}] or []
    proposal_for(answer, state)   -> (Proposal, None) or (None, why the answer cannot be sent)
    screen_text(state)            -> the screen as compact JSON text
    summary(state) / changes(a, b) -> what the memory notes of a screen and how it changed

The legal actions of a screen are the mod's actions for that ``state_type`` (McpMod.Actions.cs,
as the built-in policy's rules in ``sts2_screens.py`` and ``sts2_combat.py`` read them), each
argument limited to what the screen lists and enables: playable cards (``can_play``), living
enemies as targets for ``AnyEnemy`` cards and potions, enabled rest options, stocked and
affordable shop items, unlocked event options, the selection grid's cards not already toggled,
confirm and cancel only where the screen offers them. The arguments are the action's own
parameters as the game takes them (``play_card {card_index, target}``), so an answer is sent as
it is. An empty list means the screen needs no decision (the enemy's turn, a combat that
ended, a chest still opening, menus and popups): the built-in rules handle those, and no model
is asked.
"""

from __future__ import annotations

import json
from typing import Any

from .base import Proposal
from .sts2_combat import ENEMY_TARGETED

COMBAT = ("monster", "elite", "boss")
#: keys left out of the screen text: repeated glossaries and whole piles (their counts stay)
DROPPED = frozenset({"keywords", "draw_pile", "discard_pile", "exhaust_pile"})
_SCREEN_JSON = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), sort_keys=False)


def _listed(items) -> list[dict]:
    return [i for i in items or [] if isinstance(i, dict)]


def _index(item: dict, position: int) -> Any:
    return item.get("index", position)


def _entry(action: str, about: str = "", **args: list) -> dict:
    return {"action": action, "args": dict(args), "about": about}


def _legend(items: list[dict], key: str, name) -> str:
    return ", ".join(f"{item.get(key)}: {name(item)}" for item in items)


def _choose(
    action: str, items: list[dict], arg: str = "index", key: str = "index", label=None, about: str = "", **more: list
) -> list[dict]:
    """One legal action choosing among ``items`` by their ``key`` (as argument ``arg``), with a
    legend of what each value names; [] when there is nothing to choose."""
    if not items:
        return []
    legend = _legend(items, key, label or _name)
    return [_entry(action, f"{about}: {legend}" if about else legend, **{arg: [i.get(key, 0) for i in items]}, **more)]


def _name(item: dict) -> str:
    return str(item.get("name") or item.get("title") or item.get("id") or item.get("type") or "?")


def legal_actions(policy, state: dict) -> list[dict]:
    """The legal action kinds of this screen (see the module docstring); [] when it needs no
    decision."""
    kind = state.get("state_type")
    block = state.get("battle") if kind in COMBAT else state.get(kind)
    block = block if isinstance(block, dict) else {}
    build = _SCREENS.get(kind)
    if build is None:
        return []
    return [e for e in build(policy, state, block) if all(e["args"].values())]


def _combat(policy, st: dict, battle: dict) -> list[dict]:
    if (
        "battle" not in st
        or battle.get("error")
        or not battle.get("is_play_phase", True)
        or battle.get("turn") not in (None, "player")
    ):
        return []
    player = st.get("player") or {}
    enemies = [e for e in _listed(battle.get("enemies")) if e.get("hp", 0) > 0 and e.get("entity_id")]
    targets = [e["entity_id"] for e in enemies]
    target_legend = _legend(enemies, "entity_id", lambda e: f"{_name(e)} {e.get('hp')}/{e.get('max_hp')} hp")
    hand = [c for c in _listed(player.get("hand")) if c.get("can_play")]
    aimed = [c for c in hand if c.get("target_type") in ENEMY_TARGETED]
    plain = [c for c in hand if c.get("target_type") not in ENEMY_TARGETED]
    out = []
    if targets:
        out += _choose("play_card", aimed, "card_index", about="cards that need a target", target=targets)
        if out:
            out[-1]["about"] += f"; targets: {target_legend}"
    out += _choose("play_card", plain, "card_index", about="cards without a target")
    potions = [p for p in _listed(player.get("potions")) if p.get("can_use_in_combat")]
    aimed_pots = [p for p in potions if p.get("target_type") in ENEMY_TARGETED]
    plain_pots = [p for p in potions if p.get("target_type") not in ENEMY_TARGETED]
    if targets:
        out += _choose("use_potion", aimed_pots, "slot", "slot", about="potions that need a target", target=targets)
    out += _choose("use_potion", plain_pots, "slot", "slot", about="potions")
    out.append(_entry("end_turn", "end your turn"))
    return out


def _hand_select(policy, st: dict, hs: dict) -> list[dict]:
    out = _choose(
        "combat_select_card", _listed(hs.get("cards")), "card_index", about=hs.get("prompt") or "select a card"
    )
    if hs.get("can_confirm"):
        out.append(_entry("combat_confirm_selection", "confirm the selection"))
    return out


def _rewards(policy, st: dict, rw: dict) -> list[dict]:
    items = [
        i
        for i in _listed(rw.get("items"))
        if not (i.get("type") in ("card", "special_card") and policy.ctx.skipped_reward)
    ]
    out = _choose("claim_reward", items, label=lambda i: f"{i.get('type')}: {i.get('description')}")
    player = st.get("player") or {}
    potions = _listed(player.get("potions"))
    full = potions and len(potions) >= (player.get("max_potion_slots") or 99)
    if full and any(i.get("type") == "potion" for i in items):
        out += _choose("discard_potion", potions, "slot", "slot", about="make room on a full belt")
    out.append(_entry("proceed", "leave the rewards for the map"))
    return out


def _card_reward(policy, st: dict, cr: dict) -> list[dict]:
    out = _choose("select_card_reward", _listed(cr.get("cards")), "card_index", about="add to the deck")
    if cr.get("can_skip", True):
        out.append(_entry("skip_card_reward", "take no card"))
    return out


def _map(policy, st: dict, m: dict) -> list[dict]:
    return _choose("choose_map_node", _listed(m.get("next_options")), label=lambda o: str(o.get("type")))


def _event(policy, st: dict, ev: dict) -> list[dict]:
    if ev.get("in_dialogue"):
        return [_entry("advance_dialogue", "advance the dialogue")]
    return _choose("choose_event_option", [o for o in _listed(ev.get("options")) if not o.get("is_locked")])


def _rest_site(policy, st: dict, rs: dict) -> list[dict]:
    opts = [o for o in _listed(rs.get("options")) if o.get("is_enabled")]
    out = [] if rs.get("can_proceed") else _choose("choose_rest_option", opts)
    if rs.get("can_proceed"):
        out.append(_entry("proceed", "leave the rest site"))
    return out


def _treasure(policy, st: dict, tr: dict) -> list[dict]:
    if "can_proceed" not in tr:
        return []  # the chest is still opening
    out = _choose("claim_treasure_relic", _listed(tr.get("relics")))
    if tr.get("can_proceed"):
        out.append(_entry("proceed", "leave the treasure room"))
    return out


def _shop(policy, st: dict, sh: dict) -> list[dict]:
    if sh.get("error") and not sh.get("items"):
        return []
    player = st.get("player") or {}
    belt_full = len(player.get("potions") or []) >= (player.get("max_potion_slots") or 99)
    items = [
        i
        for i in _listed(sh.get("items"))
        if i.get("is_stocked") and i.get("can_afford") and not (i.get("category") == "potion" and belt_full)
    ]

    def label(i):
        name = i.get("card_name") or i.get("relic_name") or i.get("potion_name") or i.get("category")
        return f"{name} for {i.get('price')}"

    out = _choose("shop_purchase", items, label=label)
    out.append(_entry("proceed", "leave"))  # the mod's proceed closes the inventory first
    return out


def _fake_merchant(policy, st: dict, fm: dict) -> list[dict]:
    return _shop(policy, st, fm.get("shop") if isinstance(fm.get("shop"), dict) else {})


def _crystal_sphere(policy, st: dict, cs: dict) -> list[dict]:
    out = []
    tools = [t for t in ("big", "small") if cs.get(f"can_use_{t}_tool")]
    if tools and cs.get("tool") in (None, "none"):
        out.append(_entry("crystal_sphere_set_tool", "pick a divination tool", tool=tools))
    cells = _listed(cs.get("clickable_cells"))
    if cells and cs.get("tool") not in (None, "none"):
        out.append(
            _entry(
                "crystal_sphere_click_cell",
                "reveal a hidden cell: " + ", ".join(f"({c.get('x')},{c.get('y')})" for c in cells),
                x=sorted({c.get("x") for c in cells}),
                y=sorted({c.get("y") for c in cells}),
            )
        )
    if cs.get("can_proceed"):
        out.append(_entry("crystal_sphere_proceed", "leave the crystal sphere"))
    return out


def _bundle_select(policy, st: dict, bs: dict) -> list[dict]:
    out = []
    bundles = _listed(bs.get("bundles"))
    if bundles and not bs.get("preview_showing"):
        out.append(_entry("select_bundle", "preview a bundle", index=[b.get("index", 0) for b in bundles]))
    if bs.get("can_confirm"):
        out.append(_entry("confirm_bundle_selection", "take the previewed bundle"))
    if bs.get("preview_showing") or not bundles:
        out.append(_entry("cancel_bundle_selection", "close the preview"))
    return out


def _card_select(policy, st: dict, cs: dict) -> list[dict]:
    free = [c for c in _listed(cs.get("cards")) if c.get("index") not in policy.ctx.toggles]
    out = _choose("select_card", free, about=str(cs.get("prompt") or cs.get("screen_type")))
    if cs.get("can_confirm"):
        out.append(_entry("confirm_selection", "confirm the selection"))
    if cs.get("can_skip") or cs.get("can_cancel"):
        out.append(_entry("cancel_selection", "skip or cancel the selection"))
    return out


def _relic_select(policy, st: dict, rs: dict) -> list[dict]:
    out = _choose("select_relic", _listed(rs.get("relics")))
    if rs.get("can_skip"):
        out.append(_entry("skip_relic_selection", "take no relic"))
    return out


_SCREENS = {
    "monster": _combat,
    "elite": _combat,
    "boss": _combat,
    "hand_select": _hand_select,
    "rewards": _rewards,
    "card_reward": _card_reward,
    "map": _map,
    "event": _event,
    "rest_site": _rest_site,
    "treasure": _treasure,
    "shop": _shop,
    "fake_merchant": _fake_merchant,
    "crystal_sphere": _crystal_sphere,
    "bundle_select": _bundle_select,
    "card_select": _card_select,
    "relic_select": _relic_select,
}


def choices(legal: list[dict]) -> int:
    """How many distinct actions the legal list allows."""
    total = 0
    for entry in legal:
        n = 1
        for values in entry["args"].values():
            n *= len(values)
        total += n
    return total


def only_choice(legal: list[dict]) -> dict | None:
    """The one answer a screen allows, when it allows exactly one."""
    if choices(legal) != 1:
        return None
    entry = legal[0]
    return {"action": entry["action"], **{k: v[0] for k, v in entry["args"].items()}}


def proposal_for(answer: dict, state: dict) -> tuple[Proposal | None, str | None]:
    """The proposal an answer (already valid against the legal actions' schema) asks for, or
    why it cannot be sent: a crystal-sphere cell that is not clickable (its x and y are listed
    separately)."""
    params = {k: v for k, v in answer.items() if k != "action"}
    action = answer["action"]
    if action == "crystal_sphere_click_cell":
        cells = _listed((state.get("crystal_sphere") or {}).get("clickable_cells"))
        if not any(c.get("x") == params.get("x") and c.get("y") == params.get("y") for c in cells):
            return None, (
                f"crystal_sphere_click_cell: cell ({params.get('x')},{params.get('y')}) is not "
                f"one of the clickable cells"
            )
    return Proposal(action, params, ""), None


def _compact(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _compact(v) for k, v in value.items() if k not in DROPPED and v is not None and v != [] and v != {}}
    if isinstance(value, list):
        return [_compact(v) for v in value]
    return value


def screen_text(state: dict) -> str:
    """The screen as compact JSON: the state without nulls, empty lists, keyword glossaries
    and pile contents (their counts stay)."""
    return _SCREEN_JSON.encode(_compact(state))


def summary(state: dict) -> dict:
    """What the memory compares between two screens."""
    player = state.get("player") if isinstance(state.get("player"), dict) else {}
    run = state.get("run") if isinstance(state.get("run"), dict) else {}
    battle = state.get("battle") if isinstance(state.get("battle"), dict) else {}
    enemies = list(_listed(battle.get("enemies")))
    out = {
        "screen": state.get("state_type"),
        "floor": run.get("floor"),
        "hp": player.get("hp"),
        "block": player.get("block"),
        "gold": player.get("gold"),
        "energy": player.get("energy"),
        "hand": len(player.get("hand") or []) if "hand" in player else None,
        "potions": len(player.get("potions") or []) if "potions" in player else None,
        "enemy_hp": sum(e.get("hp", 0) or 0 for e in enemies) if enemies else None,
    }
    return {k: v for k, v in out.items() if v is not None}


def changes(before: dict, after: dict) -> str:
    """``hp 70->64, enemy_hp 24->18``; ``no visible change`` when nothing compared differs."""
    keys = [k for k in dict.fromkeys([*before, *after]) if before.get(k) != after.get(k)]
    return ", ".join(f"{k} {before.get(k, '-')}->{after.get(k, '-')}" for k in keys) or "no visible change"


__all__ = ["legal_actions", "proposal_for", "screen_text", "summary", "changes", "choices", "only_choice"]
