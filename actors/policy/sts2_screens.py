"""Screen rules of the built-in STS2MCP policy: one function per ``state_type``, each returning
candidate proposals in preference order (see ``sts2.py``), and the screen's documented ways
out (``ESCAPES``, tried when the screen stalls; taken from the mod's actions for that screen).
Rules read the policy's memory (``policy.ctx``) to skip accepted toggles and skipped rewards;
they never change it. ``card_reward``, ``event`` and ``map_`` may consult the model through
``advice.consult`` (only when the policy has an advisor).

Menus, tutorials, popups and game over are in ``sts2_menus.py``; combat, hand selection and
potions in ``sts2_combat.py``. Shapes are McpMod.StateBuilder.cs's (one sample per screen and
variant in ``vendor/sts2mcp/``).
"""

from __future__ import annotations

from collections.abc import Callable

from . import advice
from . import sts2_combat as fight
from . import sts2_menus as menus
from .base import Proposal

COMBAT = ("monster", "elite", "boss")
BUY_ORDER = {"card_removal": 0, "relic": 1, "card": 2, "potion": 3}


def block_of(st: dict) -> dict:
    kind = st.get("state_type")
    block = st.get("battle") if kind in COMBAT else st.get(kind)
    return block if isinstance(block, dict) else {}


def event(policy, st: dict, ev: dict) -> list[Proposal]:
    if ev.get("in_dialogue"):
        return [Proposal("advance_dialogue", {}, "advance the ancient's dialogue")]
    opts = [o for o in ev.get("options") or [] if isinstance(o, dict) and not o.get("is_locked")]
    opts.sort(key=lambda o: (bool(o.get("was_chosen")), bool(o.get("is_proceed")), o.get("index", 0)))
    out = [
        Proposal(
            "choose_event_option",
            {"index": o.get("index", 0)},
            f"event option {o.get('title') or o.get('index')}" + (" (leave)" if o.get("is_proceed") else ""),
        )
        for o in opts
    ]
    if not out:
        return [Proposal.wait("event without an open option: read again")]
    if len([o for o in opts if not o.get("is_proceed")]) < 2 or getattr(policy, "advisor", None) is None:
        return out
    titles = {o.get("index", i): o.get("title") for i, o in enumerate(opts)}
    question = {
        "options": opts,
        "event": {**{k: v for k, v in ev.items() if k != "options"}, "player": player_summary(st)},
    }
    return advice.consult(
        policy,
        "event_option",
        question,
        out,
        lambda i: (
            Proposal("choose_event_option", {"index": i}, f"event option {titles[i] or i}: the model's choice")
            if i in titles
            else None
        ),
    )


def map_(policy, st: dict, m: dict) -> list[Proposal]:
    p = st.get("player") or {}
    hurt = p.get("hp", 0) * 2 < (p.get("max_hp", 0) or 0)
    rank = {
        "RestSite": 0 if hurt else 3,
        "Monster": 1,
        "Treasure": 2,
        "Shop": 3,
        "Unknown": 4,
        "Event": 4,
        "Elite": 6 if hurt else 5,
        "Boss": 0,
    }
    opts = sorted(
        [o for o in m.get("next_options") or [] if isinstance(o, dict)],
        key=lambda o: (rank.get(o.get("type"), 4), o.get("index", 0)),
    )
    out = [Proposal("choose_map_node", {"index": o.get("index", 0)}, f"map: {o.get('type')}") for o in opts]
    potions = fight.out_of_combat_potions(policy, st)
    if len(out) < 2 or getattr(policy, "advisor", None) is None:
        return potions + (out or [Proposal.wait("map without next options: read again")])
    types = {o.get("index", 0): o.get("type") for o in opts}
    question = {
        "next_options": m.get("next_options"),
        "context": {"player": player_summary(st), "run": st.get("run"), "current_position": m.get("current_position")},
    }
    return potions + advice.consult(
        policy,
        "map_node",
        question,
        out,
        lambda i: (
            Proposal("choose_map_node", {"index": i}, f"map: {types[i]}: the model's choice") if i in types else None
        ),
    )


def rewards(policy, st: dict, rw: dict) -> list[Proposal]:
    out = []  # card rewards first: claiming anything else ends the card evidence (run_state.py)
    items = sorted(
        [i for i in rw.get("items") or [] if isinstance(i, dict)],
        key=lambda i: i.get("type") not in ("card", "special_card"),
    )
    for item in items:
        kind = item.get("type")
        if kind in ("card", "special_card") and policy.ctx.skipped_reward:
            continue
        if kind == "potion":
            out += fight.potion_swap(policy, st, item)
        out.append(
            Proposal(
                "claim_reward",
                {"index": item.get("index", 0)},
                f"claim {kind}: {item.get('description')}",
                extra={"reward_type": kind},
            )
        )
    return out + [
        Proposal(
            "proceed",
            {},
            "rewards done" if rw.get("can_proceed") else "rewards done (proceed not shown as enabled: try, then react)",
        )
    ]


def card_reward(policy, st: dict, cr: dict) -> list[Proposal]:
    cards = [c for c in cr.get("cards") or [] if isinstance(c, dict)]
    take = [
        Proposal("select_card_reward", {"card_index": c.get("index", 0)}, f"take {c.get('name')}")
        for c in cards[:1]
        if policy.settings.get("take_card_rewards", True)
    ]
    skip = [Proposal("skip_card_reward", {}, "skip the card reward")] if cr.get("can_skip", True) else []
    out = take + skip
    if not take or getattr(policy, "advisor", None) is None:
        return out or [Proposal.wait("card reward without cards or skip: read again")]
    names = {c.get("index", i): c.get("name") for i, c in enumerate(cards)}
    question = {
        "cards": cards,
        "can_skip": bool(cr.get("can_skip", True)),
        "evidence": {"card_evidence": policy.run.evidence, "player": player_summary(st), "run": st.get("run")},
    }

    def chosen(index) -> Proposal | None:
        if index is None:
            return Proposal("skip_card_reward", {}, "skip the card reward: the model's choice")
        return (
            Proposal("select_card_reward", {"card_index": index}, f"take {names[index]}: the model's choice")
            if index in names
            else None
        )

    return advice.consult(policy, "card_reward", question, out, chosen)


def rest_site(policy, st: dict, rs: dict) -> list[Proposal]:
    """``can_proceed`` is false until an option was used; options are gated by ``is_enabled``.
    Rest when hurt, else smith (an upgrade selection follows), else any open option."""
    if rs.get("can_proceed"):
        return [Proposal("proceed", {}, "rest site done: leave")]
    p = st.get("player") or {}
    hurt = p.get("hp", 0) < 0.7 * (p.get("max_hp", 0) or 0)
    opts = [o for o in rs.get("options") or [] if isinstance(o, dict) and o.get("is_enabled")]

    def kind(o):
        return f"{o.get('id')} {o.get('name')}".lower()

    first = ("heal", "rest") if hurt else ("smith", "upgrade")
    opts.sort(key=lambda o: (not any(w in kind(o) for w in first), o.get("index", 0)))
    out = [
        Proposal("choose_rest_option", {"index": o.get("index", 0)}, f"rest site: {o.get('name') or o.get('id')}")
        for o in opts
    ]
    return fight.out_of_combat_potions(policy, st) + out or [
        Proposal.wait("rest site: no option enabled and proceed not shown yet: read again")
    ]


def treasure(policy, st: dict, tr: dict) -> list[Proposal]:
    """The first read opens the chest ("Opening chest..."); then ``relics`` and ``can_proceed``."""
    relics = [r for r in tr.get("relics") or [] if isinstance(r, dict)]
    out = [Proposal("claim_treasure_relic", {"index": r.get("index", 0)}, f"take {r.get('name')}") for r in relics[:1]]
    if "can_proceed" not in tr:
        return out or [Proposal.wait(f"treasure: {tr.get('message') or 'loading'}: read again")]
    if tr.get("can_proceed"):
        out.append(Proposal("proceed", {}, "leave the treasure room"))
    return out or [Proposal.wait("treasure: proceed not shown yet: read again")]


def shop(policy, st: dict, sh: dict) -> list[Proposal]:
    return _shop(policy, st, sh, "shop")


def fake_merchant(policy, st: dict, fm: dict) -> list[Proposal]:
    """An event room shown as a shop (relics only), bought with ``shop_purchase``."""
    return _shop(policy, st, fm.get("shop") if isinstance(fm.get("shop"), dict) else {}, "fake merchant")


def _shop(policy, st: dict, sh: dict, where: str) -> list[Proposal]:
    if sh.get("error") and not sh.get("items"):
        return [Proposal.wait(f"{where}: {sh['error']}")]
    player = st.get("player") or {}
    belt_full = len(player.get("potions") or []) >= (player.get("max_potion_slots") or 99)
    items = [
        i
        for i in sh.get("items") or []
        if isinstance(i, dict)
        and i.get("is_stocked")
        and i.get("can_afford")
        and i.get("category") in BUY_ORDER
        and not (i.get("category") == "potion" and belt_full)
    ]
    items.sort(key=lambda i: (BUY_ORDER[i["category"]], i.get("index", 0)))
    out = [
        Proposal(
            "shop_purchase",
            {"index": i.get("index", 0)},
            f"buy {i.get('card_name') or i.get('relic_name') or i.get('potion_name') or i['category']}"
            f" for {i.get('price')}",
        )
        for i in items
    ]
    # the mod's proceed closes the inventory first: try it even when can_proceed reads false
    return out + [
        Proposal(
            "proceed",
            {},
            f"leave the {where}"
            if sh.get("can_proceed")
            else f"leave the {where} (can_proceed reads false: try, then react)",
        )
    ]


def crystal_sphere(policy, st: dict, cs: dict) -> list[Proposal]:
    cells = [c for c in cs.get("clickable_cells") or [] if isinstance(c, dict)]
    left = divinations_left(cs.get("divinations_left_text"))
    out = []
    if cells and left != 0 and (cs.get("can_use_big_tool") or cs.get("can_use_small_tool")):
        if cs.get("tool") in (None, "none"):
            tool = "big" if cs.get("can_use_big_tool") else "small"
            out.append(Proposal("crystal_sphere_set_tool", {"tool": tool}, f"pick the {tool} divination tool"))
        cx, cy = (cs.get("grid_width") or 1) / 2, (cs.get("grid_height") or 1) / 2
        cells.sort(key=lambda c: abs(c.get("x", 0) + 0.5 - cx) + abs(c.get("y", 0) + 0.5 - cy))
        out += [
            Proposal(
                "crystal_sphere_click_cell",
                {"x": c.get("x"), "y": c.get("y")},
                f"divine cell {c.get('x')},{c.get('y')}",
            )
            for c in cells[:3]
        ]
    if cs.get("can_proceed"):
        out.append(Proposal("crystal_sphere_proceed", {}, "leave the crystal sphere"))
    return out or [Proposal.wait("crystal sphere: nothing to divine and proceed not shown yet: read again")]


def divinations_left(text) -> int | None:
    digits = "".join(ch if ch.isdigit() else " " for ch in str(text or "")).split()
    return int(digits[0]) if digits else None


def bundle_select(policy, st: dict, bs: dict) -> list[Proposal]:
    if bs.get("can_confirm"):
        return [Proposal("confirm_bundle_selection", {}, "confirm the bundle")]
    if bs.get("preview_showing"):
        return [Proposal.wait("bundle preview open; awaiting confirmation to be enabled")]
    return [
        Proposal("select_bundle", {"index": b.get("index", 0)}, "select a bundle")
        for b in (bs.get("bundles") or [])[:1]
        if isinstance(b, dict)
    ] or [Proposal("cancel_bundle_selection", {}, "no bundle offered")]


def card_select(policy, st: dict, cs: dict) -> list[Proposal]:
    kind = cs.get("screen_type")
    if cs.get("can_confirm") and kind != "choose":
        return [Proposal("confirm_selection", {}, f"confirm the {kind} selection")]
    free = [c for c in cs.get("cards") or [] if isinstance(c, dict) and c.get("index") not in policy.ctx.toggles]
    free.sort(key=lambda c: fight.card_rank(c, kind, cs.get("prompt")))
    out = [
        Proposal(
            "select_card", {"index": c.get("index", 0)}, f"{kind}: select {c.get('name')}", extra={"screen_type": kind}
        )
        for c in free[:1]
    ]
    if not out and (cs.get("can_skip") or cs.get("can_cancel")):
        out.append(Proposal("cancel_selection", {}, "nothing to select: skip"))
    return out or [Proposal.wait("selection in progress; awaiting confirmation to be enabled")]


def relic_select(policy, st: dict, rs: dict) -> list[Proposal]:
    out = [
        Proposal("select_relic", {"index": r.get("index", 0)}, f"take {r.get('name')}")
        for r in (rs.get("relics") or [])[:1]
        if isinstance(r, dict)
    ]
    if rs.get("can_skip"):
        out.append(Proposal("skip_relic_selection", {}, "no relic"))
    return out or [Proposal.wait("relic selection without relics or skip: read again")]


def overlay(policy, st: dict, ov: dict) -> list[Proposal]:
    return [Proposal.wait(f"overlay {ov.get('screen_type')!r}: {ov.get('message') or 'waiting for it to close'}")]


def unknown(policy, st: dict, block: dict) -> list[Proposal]:
    return [Proposal.wait(f"unknown screen (room_type {st.get('room_type')!r}): read again")]


def player_summary(st: dict) -> dict:
    """What a model question shows of the player: HP, gold, relic and potion names."""
    p = st.get("player") or {}
    return {
        "character": p.get("character"),
        "hp": p.get("hp"),
        "max_hp": p.get("max_hp"),
        "gold": p.get("gold"),
        "relics": [r.get("name") for r in p.get("relics") or [] if isinstance(r, dict)],
        "potions": [x.get("name") for x in p.get("potions") or [] if isinstance(x, dict)],
    }


RULES: dict[str, Callable] = {
    "menu": menus.menu,
    "game_over": menus.game_over,
    "event": event,
    "fake_merchant": fake_merchant,
    "map": map_,
    "monster": fight.combat,
    "elite": fight.combat,
    "boss": fight.combat,
    "hand_select": fight.hand_select,
    "rewards": rewards,
    "card_reward": card_reward,
    "rest_site": rest_site,
    "treasure": treasure,
    "shop": shop,
    "crystal_sphere": crystal_sphere,
    "bundle_select": bundle_select,
    "card_select": card_select,
    "relic_select": relic_select,
    "overlay": overlay,
    "unknown": unknown,
}


def _proceed(*_):
    return [Proposal("proceed", {}, "proceed")]


ESCAPES: dict[str, Callable] = {  # the documented ways out of each screen (McpMod.Actions.cs)
    "menu": menus.menu_escapes,
    "game_over": menus.game_over_escapes,
    "monster": fight.combat_escapes,
    "elite": fight.combat_escapes,
    "boss": fight.combat_escapes,
    "hand_select": fight.hand_select_escapes,
    "event": lambda p, st, b: (
        [Proposal("advance_dialogue", {}, "advance the dialogue")]
        + [
            Proposal("choose_event_option", {"index": o.get("index", 0)}, f"option {o.get('title')}")
            for o in b.get("options") or []
            if isinstance(o, dict) and o.get("is_proceed")
        ]
    ),
    "map": lambda p, st, b: [
        Proposal("choose_map_node", {"index": o.get("index", 0)}, f"map: {o.get('type')}")
        for o in b.get("next_options") or []
        if isinstance(o, dict)
    ],
    "rewards": lambda p, st, b: [Proposal("proceed", {}, "leave the rewards")],
    "card_reward": lambda p, st, b: [Proposal("skip_card_reward", {}, "skip the card reward")],
    "rest_site": _proceed,
    "treasure": _proceed,
    "shop": _proceed,
    "fake_merchant": _proceed,
    "crystal_sphere": lambda p, st, b: [Proposal("crystal_sphere_proceed", {}, "leave the crystal sphere")],
    "bundle_select": lambda p, st, b: [
        Proposal("confirm_bundle_selection", {}, "confirm the bundle"),
        Proposal("cancel_bundle_selection", {}, "cancel the bundle"),
    ],
    "card_select": lambda p, st, b: [
        Proposal("confirm_selection", {}, "confirm the selection"),
        Proposal("cancel_selection", {}, "cancel the selection"),
    ],
    "relic_select": lambda p, st, b: [Proposal("skip_relic_selection", {}, "skip the relic")],
    "overlay": _proceed,
    "unknown": _proceed,
}
