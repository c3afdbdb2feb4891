"""Screen rules of the built-in STS2MCP policy: one function per ``state_type``, each
returning candidate proposals in preference order (see ``sts2.py``). They read the policy's
memory (``policy.ctx``) to skip accepted toggles and skipped rewards; they never change it.
``card_reward``, ``event`` and ``map_`` may consult the model through ``advice.consult``
(only when the policy has an advisor: a model is configured and ``consult_model`` is on).
"""
from __future__ import annotations

from typing import Callable

from . import advice
from .base import Proposal

MENU_PATH = ("singleplayer", "standard")
COMBAT = ("monster", "elite", "boss")


def block_of(st: dict) -> dict:
    kind = st.get("state_type")
    return (st.get("battle") if kind in COMBAT else st.get(kind)) or {}


def _name(option) -> str:
    return option if isinstance(option, str) else str((option or {}).get("name", ""))


def _enabled(option) -> bool:
    return isinstance(option, str) or bool((option or {}).get("enabled", True))


def menu(policy, st: dict, m: dict) -> list[Proposal] | Proposal:
    screen = m.get("menu_screen") or st.get("menu_screen")
    names = [_name(o) for o in m.get("options") or [] if _enabled(o)]
    if screen in ("tutorial_prompt", "tutorial", "popup"):
        pick = next((n for n in ("no", "ok", "close", "skip") if n in names), names[0] if names else None)
        return Proposal("menu_select", {"option": pick}, f"dismiss the {screen}") if pick \
            else Proposal.wait(f"{screen} without options")
    if screen == "character_select":
        if policy.ctx.character_picked:
            if "embark" in names:
                return Proposal("menu_select", {"option": "embark"}, "embark with the picked character")
            return Proposal.wait("character picked; awaiting embark to be enabled")
        chars = [c for c in m.get("characters") or [] if not c.get("locked")]
        want = policy.settings.get("character")
        cid = want or (chars[0].get("id") if chars else None)
        if cid is None:
            return Proposal.wait("no unlocked character")
        return Proposal("menu_select", {"option": cid}, f"pick character {cid}",
                        extra={"character_pick": True})
    return [Proposal("menu_select", {"option": s}, f"menu: {s}") for s in MENU_PATH if s in names] or \
        [Proposal.wait(f"menu {screen!r}: no known way into a run ({names})")]


def game_over(policy, st: dict, block: dict) -> Proposal:
    options = [_name(o) for o in block.get("options") or []] or ["main_menu"]
    stop = policy.session.get("stop_on_run_end", True)
    return Proposal("menu_select", {"option": options[0]},
                    f"run over ({block.get('outcome', '?')}): dismiss",
                    then_stop="run_ended" if stop else None,
                    source="stop_on_run_end" if stop else "policy")


def event(policy, st: dict, ev: dict) -> list[Proposal]:
    if ev.get("in_dialogue"):
        return [Proposal("advance_dialogue", {}, "advance the dialogue")]
    out = [Proposal("choose_event_option", {"index": o.get("index", 0)},
                    f"event option {o.get('title') or o.get('index')}")
           for o in ev.get("options") or [] if not o.get("is_locked")]
    if len(out) < 2 or getattr(policy, "advisor", None) is None:
        return out or [Proposal("advance_dialogue", {}, "no open option: advance")]
    options = [o for o in ev["options"] if isinstance(o, dict)]
    titles = {o.get("index", i): o.get("title") for i, o in enumerate(options)}
    question = {"options": options, "event": {**{k: v for k, v in ev.items() if k != "options"},
                                              "player": _player_summary(st)}}
    return advice.consult(policy, "event_option", question, out, lambda i: Proposal(
        "choose_event_option", {"index": i}, f"event option {titles[i] or i}: the model's choice")
        if i in titles else None)


def map_(policy, st: dict, m: dict) -> list[Proposal]:
    rank = {"RestSite": 0, "Monster": 1, "Treasure": 2, "Shop": 3, "Unknown": 4, "Event": 4, "Elite": 5}
    opts = sorted(m.get("next_options") or [], key=lambda o: (rank.get(o.get("type"), 4), o.get("index", 0)))
    out = [Proposal("choose_map_node", {"index": o.get("index", 0)}, f"map: {o.get('type')}") for o in opts]
    if len(out) < 2 or getattr(policy, "advisor", None) is None:
        return out or [Proposal.wait("map without next options")]
    types = {o.get("index", 0): o.get("type") for o in opts}
    question = {"next_options": m.get("next_options"),
                "context": {"player": _player_summary(st), "run": st.get("run"),
                            "current_position": m.get("current_position")}}
    return advice.consult(policy, "map_node", question, out, lambda i: Proposal(
        "choose_map_node", {"index": i}, f"map: {types[i]}: the model's choice") if i in types else None)


def combat(policy, st: dict, battle: dict) -> list[Proposal]:
    if not battle.get("is_play_phase", True) or battle.get("turn") not in (None, "player"):
        return [Proposal.wait("enemy turn")]
    player = st.get("player") or {}
    enemies = [e for e in battle.get("enemies") or [] if e.get("hp", 0) > 0]
    target = min(enemies, key=lambda e: e.get("hp", 0)) if enemies else None
    incoming = sum(_intent_damage(e) for e in enemies)
    lethal = target is not None and target.get("hp", 0) + target.get("block", 0) <= 6
    block_first = incoming > player.get("block", 0) and not lethal
    hand = [c for c in player.get("hand") or [] if c.get("can_play")]
    hand.sort(key=lambda c: (c.get("type") != ("Skill" if block_first else "Attack"), c.get("index", 0)))
    out = []
    for card in hand:
        params = {"card_index": card.get("index", 0)}
        if card.get("target_type") == "AnyEnemy":
            if target is None:
                continue
            params["target"] = target["entity_id"]
        out.append(Proposal("play_card", params, f"play {card.get('name')}"))
    return out + [Proposal("end_turn", {}, "end the turn" if out else "no playable card")]


def hand_select(policy, st: dict, hs: dict) -> list[Proposal]:
    if hs.get("can_confirm"):
        return [Proposal("combat_confirm_selection", {}, "confirm the hand selection")]
    return [Proposal("combat_select_card", {"card_index": c.get("index", 0)}, f"select {c.get('name')}")
            for c in (hs.get("cards") or [])[:1]] or [Proposal.wait("hand select without cards")]


def rewards(policy, st: dict, rw: dict) -> list[Proposal]:
    out = []  # card rewards first: claiming anything else ends the card evidence (seed rule)
    items = sorted(rw.get("items") or [], key=lambda i: i.get("type") not in ("card", "special_card"))
    for item in items:
        kind = item.get("type")
        if kind in ("card", "special_card") and policy.ctx.skipped_reward:
            continue
        if kind in ("gold", "relic", "potion", "card", "special_card"):
            out.append(Proposal("claim_reward", {"index": item.get("index", 0)}, f"claim {kind}",
                                extra={"reward_type": kind}))
    return out + [Proposal("proceed", {}, "rewards done")]


def card_reward(policy, st: dict, cr: dict) -> list[Proposal]:
    cards = [c for c in cr.get("cards") or [] if isinstance(c, dict)]
    take = [Proposal("select_card_reward", {"card_index": c.get("index", 0)}, f"take {c.get('name')}")
            for c in cards[:1] if policy.settings.get("take_card_rewards", True)]
    out = take + [Proposal("skip_card_reward", {}, "skip the card reward")]
    if not take or getattr(policy, "advisor", None) is None:
        return out
    names = {c.get("index", i): c.get("name") for i, c in enumerate(cards)}
    question = {"cards": cards, "can_skip": bool(cr.get("can_skip", True)),
                "evidence": {"card_evidence": policy.run.evidence, "player": _player_summary(st),
                             "run": st.get("run")}}

    def chosen(index) -> Proposal | None:
        if index is None:
            return Proposal("skip_card_reward", {}, "skip the card reward: the model's choice")
        return Proposal("select_card_reward", {"card_index": index},
                        f"take {names[index]}: the model's choice") if index in names else None
    return advice.consult(policy, "card_reward", question, out, chosen)


def rest_site(policy, st: dict, rs: dict) -> list[Proposal]:
    p = st.get("player") or {}
    hurt = p.get("hp", 0) < p.get("max_hp", 0)
    opts = [o for o in rs.get("options") or [] if o.get("enabled", True)]
    out = [Proposal("choose_rest_option", {"index": o.get("index", 0)}, f"rest: {o.get('name') or o.get('id')}")
           for o in opts[:1] if hurt]
    return out + [Proposal("proceed", {}, "leave the rest site")]


def treasure(policy, st: dict, tr: dict) -> list[Proposal]:
    out = [] if tr.get("claimed") else [
        Proposal("claim_treasure_relic", {"index": r.get("index", 0)}, "take the relic")
        for r in (tr.get("relics") or [])[:1]]
    return out + [Proposal("proceed", {}, "leave the treasure room")]


def shop(policy, st: dict, sh: dict) -> list[Proposal]:
    out = [Proposal("shop_purchase", {"index": i.get("index")}, f"buy {i.get('name')}")
           for i in sh.get("items") or []
           if i.get("is_stocked") and i.get("can_afford") and i.get("category") in ("card", "relic", "potion")][:1]
    return out + [Proposal("proceed", {}, "leave the shop")]


def crystal_sphere(policy, st: dict, cs: dict) -> list[Proposal]:
    out = []
    if cs.get("clicks_remaining", 0) > 0:
        out = [Proposal("crystal_sphere_click_cell", {"x": c["x"], "y": c["y"]}, f"divine {c['x']},{c['y']}")
               for c in cs.get("cells") or [] if not c.get("revealed")][:1]
    return out + [Proposal("crystal_sphere_proceed", {}, "leave the crystal sphere")]


def bundle_select(policy, st: dict, bs: dict) -> list[Proposal]:
    if bs.get("can_confirm"):
        return [Proposal("confirm_bundle_selection", {}, "confirm the bundle")]
    return [Proposal("select_bundle", {"index": b.get("index", 0)}, "select a bundle")
            for b in (bs.get("bundles") or [])[:1]] + [Proposal("cancel_bundle_selection", {}, "no bundle")]


def card_select(policy, st: dict, cs: dict) -> list[Proposal]:
    kind = cs.get("screen_type")
    if cs.get("can_confirm"):
        return [Proposal("confirm_selection", {}, "confirm the selection")]
    free = [c for c in cs.get("cards") or [] if c.get("index") not in policy.ctx.toggles]
    out = [Proposal("select_card", {"index": c.get("index", 0)}, f"select {c.get('name')}",
                    extra={"screen_type": kind}) for c in free[:1]]
    if cs.get("can_skip") or cs.get("can_cancel"):
        out.append(Proposal("cancel_selection", {}, "nothing more to select"))
    return out or [Proposal.wait("selection in progress; awaiting confirmation to be enabled")]


def relic_select(policy, st: dict, rs: dict) -> list[Proposal]:
    return [Proposal("select_relic", {"index": r.get("index", 0)}, "take a relic")
            for r in (rs.get("relics") or [])[:1]] + [Proposal("skip_relic_selection", {}, "no relic")]


def overlay(policy, st: dict, ov: dict) -> Proposal:
    return Proposal.wait(f"overlay {ov.get('screen_type')!r}: waiting for it to close")


def unknown(policy, st: dict, block: dict) -> list[Proposal]:
    if st.get("room_type") == "Transition" or block.get("room_type") == "Transition":
        return [Proposal.wait("transition: waiting")]
    return [Proposal("proceed", {}, f"unknown room {st.get('room_type')!r}: try to proceed"),
            Proposal.wait("unknown screen: waiting")]


def _player_summary(st: dict) -> dict:
    """What a model question shows of the player: HP, gold, relic and potion names."""
    p = st.get("player") or {}
    return {"character": p.get("character"), "hp": p.get("hp"), "max_hp": p.get("max_hp"),
            "gold": p.get("gold"), "relics": [r.get("name") for r in p.get("relics") or [] if isinstance(r, dict)],
            "potions": [x.get("name") for x in p.get("potions") or [] if isinstance(x, dict)]}


def _intent_damage(enemy: dict) -> int:
    total = 0
    for intent in enemy.get("intents") or []:
        digits = "".join(ch if ch.isdigit() else " " for ch in str(intent.get("label") or "")).split()
        if str(intent.get("type", "")).lower().startswith("attack") and digits:
            total += int(digits[0]) * (int(digits[1]) if len(digits) > 1 else 1)
    return total


RULES: dict[str, Callable] = {
    "menu": menu, "game_over": game_over, "event": event, "fake_merchant": event, "map": map_,
    "monster": combat, "elite": combat, "boss": combat, "hand_select": hand_select,
    "rewards": rewards, "card_reward": card_reward, "rest_site": rest_site, "treasure": treasure,
    "shop": shop, "crystal_sphere": crystal_sphere, "bundle_select": bundle_select,
    "card_select": card_select, "relic_select": relic_select, "overlay": overlay, "unknown": unknown,
}
