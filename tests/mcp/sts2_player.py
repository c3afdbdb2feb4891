"""A player for the STS2 MCP tests: picks, from a state the tools returned, the calls of the
STS2MCP mod's own tool names (``mcp/server.py`` of Gennadiyev/STS2MCP) that move a run on, in
order of preference. It reads only the state's documented fields (``vendor/sts2mcp/``)."""

from __future__ import annotations

POPUP = ("no", "ok", "close", "got_it", "continue", "proceed", "confirm", "advance", "yes", "back")


def names(options) -> list[str]:
    return [
        o if isinstance(o, str) else o.get("name")
        for o in options or []
        if isinstance(o, str) or (isinstance(o, dict) and o.get("enabled", True))
    ]


def first(items, key="index") -> list:
    return [i.get(key, n) for n, i in enumerate(items or []) if isinstance(i, dict)]


def candidates(st: dict) -> list[tuple[str, dict]]:
    kind = st.get("state_type")
    block = st.get(kind) if isinstance(st.get(kind), dict) else {}
    player = st.get("player") or {}
    if kind == "menu":
        opts, screen = names(st.get("options")), st.get("menu_screen")
        if screen == "character_select":
            chars = [c["id"] for c in st.get("characters") or [] if isinstance(c, dict) and not c.get("locked")]
            return [("menu_select", {"option": o}) for o in ("embark", "confirm") if o in opts] + [
                ("menu_select", {"option": c}) for c in chars[:1]
            ]
        order = ("singleplayer", "standard", *POPUP)
        return [("menu_select", {"option": o}) for o in order if o in opts] + [
            ("menu_select", {"option": o}) for o in opts if o not in order and o != "quit"
        ]
    if kind in ("monster", "elite", "boss"):
        enemies = [e["entity_id"] for e in (st.get("battle") or {}).get("enemies") or [] if e.get("hp", 0) > 0]
        plays = []
        for c in player.get("hand") or []:
            if c.get("can_play"):
                args = {"card_index": c["index"]}
                if c.get("target_type") in ("AnyEnemy", "Enemy") and enemies:
                    args["target"] = enemies[0]
                plays.append(("combat_play_card", args))
        return plays + [("combat_end_turn", {})]
    if kind == "hand_select":
        return ([("combat_confirm_selection", {})] if block.get("can_confirm") else []) + [
            ("combat_select_card", {"card_index": i}) for i in first(block.get("cards"))[:1]
        ]
    if kind == "rewards":
        return [("rewards_claim", {"reward_index": i}) for i in first(block.get("items"))] + [("proceed_to_map", {})]
    if kind == "card_reward":
        return [("rewards_pick_card", {"card_index": i}) for i in first(block.get("cards"))[:1]] + [
            ("rewards_skip_card", {})
        ]
    if kind == "map":
        return [("map_choose_node", {"node_index": i}) for i in first(block.get("next_options"))]
    if kind == "event":
        if block.get("in_dialogue"):
            return [("event_advance_dialogue", {})]
        return [
            ("event_choose_option", {"option_index": o["index"]})
            for o in block.get("options") or []
            if not o.get("is_locked")
        ]
    if kind == "rest_site":
        if block.get("can_proceed"):
            return [("proceed_to_map", {})]
        return [
            ("rest_choose_option", {"option_index": o["index"]})
            for o in block.get("options") or []
            if o.get("is_enabled")
        ]
    if kind in ("shop", "fake_merchant"):
        return [("proceed_to_map", {})]
    if kind == "treasure":
        return [("treasure_claim_relic", {"relic_index": i}) for i in first(block.get("relics"))[:1]] + [
            ("proceed_to_map", {})
        ]
    if kind == "card_select":
        return (
            ([("deck_confirm_selection", {})] if block.get("can_confirm") else [])
            + [("deck_select_card", {"card_index": i}) for i in first(block.get("cards"))[:1]]
            + ([("deck_cancel_selection", {})] if block.get("can_cancel") else [])
        )
    if kind == "bundle_select":
        if block.get("preview_showing") and block.get("can_confirm"):
            return [("bundle_confirm_selection", {})]
        return [("bundle_select", {"bundle_index": i}) for i in first(block.get("bundles"))[:1]]
    if kind == "relic_select":
        return [("relic_select", {"relic_index": i}) for i in first(block.get("relics"))[:1]] + [("relic_skip", {})]
    if kind == "crystal_sphere":
        if block.get("can_proceed"):
            return [("crystal_sphere_proceed", {})]
        if block.get("tool") in (None, "none"):
            return [("crystal_sphere_set_tool", {"tool": "big" if block.get("can_use_big_tool") else "small"})]
        return [("crystal_sphere_click_cell", {"x": c["x"], "y": c["y"]}) for c in block.get("clickable_cells") or []]
    if kind == "game_over":
        return [("menu_select", {"option": o}) for o in names(block.get("options"))]
    return []
