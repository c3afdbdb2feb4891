"""The Slay the Spire 2 tools ``supervisor mcp --game`` lists: the STS2MCP mod's own MCP server's
tools, with **its names, parameters and defaults**, plus two waiting tools of ours.

Ground truth: the mod's ``mcp/server.py`` (``Gennadiyev/STS2MCP``, pinned commit
``2fb53908301a108dac9bf665e88be7a5db12ee4c``, the commit ``vendor/sts2mcp/`` is written from).
Each entry of :data:`SP` names the function of that file it follows; the POST body it builds
(``action`` and the renamed fields, ``None`` arguments left out) is that function's body. The
descriptions are ours. The multiplayer tools (:data:`MP`, the ``mp_*`` functions of that file)
are listed with their parameters and refused (``docs/mcp.md``).

Every acting tool also takes an optional ``reason`` (the agent's words, kept on the proposal row).
"""

from __future__ import annotations

import dataclasses

REQUIRED = object()
SOURCE = "mcp/server.py"  # of Gennadiyev/STS2MCP at the pinned commit
PINNED = "2fb53908301a108dac9bf665e88be7a5db12ee4c"


@dataclasses.dataclass(frozen=True)
class Param:
    name: str
    kind: type  # int or str
    default: object = REQUIRED  # REQUIRED, or the mod's default (None: optional)
    body: str | None = None  # the POST body's key (default: the same name)


@dataclasses.dataclass(frozen=True)
class GameTool:
    name: str
    text: str
    params: tuple[Param, ...] = ()
    action: str | None = None  # the POST body's ``action`` (None: not a singleplayer POST)
    how: str = "act"  # act | state | read | profile | wait | mp
    path: str | None = None  # a read's GET path
    #: the parameter whose value must be one of the current screen's indices (``indices``)
    indexed: str | None = None

    def body(self, args: dict) -> dict:
        """The POST body the mod's function builds from these arguments."""
        out = {"action": self.action}
        for p in self.params:
            value = args.get(p.name, None if p.default is REQUIRED else p.default)
            if value is not None:
                out[p.body or p.name] = value
        return out


def _i(name: str, body: str | None = None) -> Param:
    return Param(name, int, REQUIRED, body)


_TARGET = Param("target", str, None)
_INDEX = "index"


def _act(name: str, action: str, text: str, *params: Param, indexed: str | None = None) -> GameTool:
    return GameTool(name, text, params, action, "act", indexed=indexed)


SP: tuple[GameTool, ...] = (
    # server.py get_game_state
    GameTool(
        "get_game_state",
        "Read the current game state (a fresh, journalled observation). "
        '`format`: "markdown" (default) or "json"; `state_type` names the screen.',
        (Param("format", str, "markdown"),),
        how="state",
    ),
    # server.py menu_select
    _act(
        "menu_select",
        "menu_select",
        "Select an option of the menu or game-over screen by its id (the "
        "state's `options`); `seed` for embark flows that take one.",
        Param("option", str),
        Param("seed", str, None),
    ),
    # server.py get_profile
    GameTool("get_profile", "The active profile's progress summary.", how="read", path="/api/v1/profile"),
    # server.py get_compendium
    GameTool(
        "get_compendium",
        "The active profile's compendium summary (cards, relics, potions, bestiary, character stats, run history).",
        how="read",
        path="/api/v1/compendium",
    ),
    # server.py search_wiki
    GameTool(
        "search_wiki",
        "Fuzzy search of the profile's discovered cards and relics.",
        (Param("query", str), Param("item_type", str, "all"), Param("limit", int, 10)),
        how="read",
        path="/api/v1/wiki",
    ),
    # server.py list_profiles
    GameTool("list_profiles", "The three profile slots and the active one.", how="read", path="/api/v1/profiles"),
    # server.py switch_profile
    GameTool(
        "switch_profile",
        "Switch to profile slot 1, 2 or 3 (not during a run).",
        (Param("profile_id", int),),
        "switch",
        how="profile",
    ),
    # server.py delete_profile
    GameTool(
        "delete_profile",
        "Delete an inactive profile slot (1, 2 or 3).",
        (Param("profile_id", int),),
        "delete",
        how="profile",
    ),
    # server.py use_potion
    _act(
        "use_potion",
        "use_potion",
        "Use the potion in `slot`; `target` is an enemy's entity id for targeted potions.",
        _i("slot"),
        _TARGET,
        indexed="slot",
    ),
    # server.py discard_potion
    _act("discard_potion", "discard_potion", "Discard the potion in `slot`.", _i("slot"), indexed="slot"),
    # server.py proceed_to_map
    _act("proceed_to_map", "proceed", "Leave the rewards screen, rest site, shop or fake merchant for the map."),
    # server.py combat_play_card
    _act(
        "combat_play_card",
        "play_card",
        "[Combat] Play the hand's card `card_index` (0-based; indices "
        "shift as cards are played); `target` is an enemy's entity id for single-target cards.",
        _i("card_index"),
        _TARGET,
        indexed="card_index",
    ),
    # server.py combat_end_turn
    _act("combat_end_turn", "end_turn", "[Combat] End the turn."),
    # server.py combat_select_card
    _act(
        "combat_select_card",
        "combat_select_card",
        "[Combat selection] Select a hand card in a hand_select prompt.",
        _i("card_index"),
        indexed="card_index",
    ),
    # server.py combat_confirm_selection
    _act("combat_confirm_selection", "combat_confirm_selection", "[Combat selection] Confirm the selection."),
    # server.py rewards_claim
    _act(
        "rewards_claim",
        "claim_reward",
        "[Rewards] Claim reward `reward_index` (a card reward opens card_reward).",
        _i("reward_index", _INDEX),
        indexed="reward_index",
    ),
    # server.py rewards_pick_card
    _act(
        "rewards_pick_card",
        "select_card_reward",
        "[Rewards] Take card `card_index` of the card reward.",
        _i("card_index"),
        indexed="card_index",
    ),
    # server.py rewards_skip_card
    _act("rewards_skip_card", "skip_card_reward", "[Rewards] Skip the card reward."),
    # server.py map_choose_node
    _act(
        "map_choose_node",
        "choose_map_node",
        "[Map] Travel to node `node_index` of `next_options`.",
        _i("node_index", _INDEX),
        indexed="node_index",
    ),
    # server.py rest_choose_option
    _act(
        "rest_choose_option",
        "choose_rest_option",
        "[Rest site] Choose option `option_index`.",
        _i("option_index", _INDEX),
        indexed="option_index",
    ),
    # server.py shop_purchase
    _act(
        "shop_purchase",
        "shop_purchase",
        "[Shop / fake merchant] Buy item `item_index`.",
        _i("item_index", _INDEX),
        indexed="item_index",
    ),
    # server.py event_choose_option
    _act(
        "event_choose_option",
        "choose_event_option",
        "[Event] Choose option `option_index` (also an event's Proceed).",
        _i("option_index", _INDEX),
        indexed="option_index",
    ),
    # server.py event_advance_dialogue
    _act("event_advance_dialogue", "advance_dialogue", "[Event] Advance an ancient's dialogue."),
    # server.py deck_select_card
    _act(
        "deck_select_card",
        "select_card",
        "[Card selection] Select (or deselect) card `card_index`.",
        _i("card_index", _INDEX),
        indexed="card_index",
    ),
    # server.py deck_confirm_selection
    _act("deck_confirm_selection", "confirm_selection", "[Card selection] Confirm the selection or preview."),
    # server.py deck_cancel_selection
    _act("deck_cancel_selection", "cancel_selection", "[Card selection] Cancel the selection or preview."),
    # server.py bundle_select
    _act(
        "bundle_select",
        "select_bundle",
        "[Bundle selection] Preview bundle `bundle_index`.",
        _i("bundle_index", _INDEX),
        indexed="bundle_index",
    ),
    # server.py bundle_confirm_selection
    _act("bundle_confirm_selection", "confirm_bundle_selection", "[Bundle selection] Confirm the preview."),
    # server.py bundle_cancel_selection
    _act("bundle_cancel_selection", "cancel_bundle_selection", "[Bundle selection] Cancel the preview."),
    # server.py relic_select
    _act(
        "relic_select",
        "select_relic",
        "[Relic selection] Take relic `relic_index`.",
        _i("relic_index", _INDEX),
        indexed="relic_index",
    ),
    # server.py relic_skip
    _act("relic_skip", "skip_relic_selection", "[Relic selection] Skip."),
    # server.py treasure_claim_relic
    _act(
        "treasure_claim_relic",
        "claim_treasure_relic",
        "[Treasure] Take relic `relic_index` of the chest.",
        _i("relic_index", _INDEX),
        indexed="relic_index",
    ),
    # server.py crystal_sphere_set_tool
    _act(
        "crystal_sphere_set_tool",
        "crystal_sphere_set_tool",
        '[Crystal sphere] Pick the "big" or "small" divination tool.',
        Param("tool", str),
    ),
    # server.py crystal_sphere_click_cell
    _act(
        "crystal_sphere_click_cell",
        "crystal_sphere_click_cell",
        "[Crystal sphere] Reveal cell (x, y).",
        _i("x"),
        _i("y"),
    ),
    # server.py crystal_sphere_proceed
    _act("crystal_sphere_proceed", "crystal_sphere_proceed", "[Crystal sphere] Continue when it is done."),
)

WAITS: tuple[GameTool, ...] = (
    GameTool(
        "wait_until_actionable",
        "Wait (reading the game at the pipeline's pace) until it shows a screen "
        "you can act on and your last accepted action has shown its effect ('ok' means queued); returns "
        "that state as JSON. On timeout returns the last state with actionable: false.",
        (Param("timeout_seconds", float, 10.0),),
        how="wait",
    ),
    GameTool(
        "wait_for_change",
        "Wait until the game's state differs from the last state you were shown; "
        "returns it as JSON. On timeout returns the unchanged state with changed: false.",
        (Param("timeout_seconds", float, 10.0),),
        how="wait",
    ),
)

# server.py mp_get_game_state ... mp_crystal_sphere_proceed: (name, parameters)
_MP_PARAMS = {
    "mp_get_game_state": (Param("format", str, "markdown"),),
    "mp_combat_play_card": (_i("card_index"), _TARGET),
    "mp_combat_end_turn": (),
    "mp_combat_undo_end_turn": (),
    "mp_use_potion": (_i("slot"), _TARGET),
    "mp_discard_potion": (_i("slot"),),
    "mp_map_vote": (_i("node_index"),),
    "mp_event_choose_option": (_i("option_index"),),
    "mp_event_advance_dialogue": (),
    "mp_rest_choose_option": (_i("option_index"),),
    "mp_shop_purchase": (_i("item_index"),),
    "mp_rewards_claim": (_i("reward_index"),),
    "mp_rewards_pick_card": (_i("card_index"),),
    "mp_rewards_skip_card": (),
    "mp_proceed_to_map": (),
    "mp_deck_select_card": (_i("card_index"),),
    "mp_deck_confirm_selection": (),
    "mp_deck_cancel_selection": (),
    "mp_bundle_select": (_i("bundle_index"),),
    "mp_bundle_confirm_selection": (),
    "mp_bundle_cancel_selection": (),
    "mp_combat_select_card": (_i("card_index"),),
    "mp_combat_confirm_selection": (),
    "mp_relic_select": (_i("relic_index"),),
    "mp_relic_skip": (),
    "mp_treasure_claim_relic": (_i("relic_index"),),
    "mp_crystal_sphere_set_tool": (Param("tool", str),),
    "mp_crystal_sphere_click_cell": (_i("x"), _i("y")),
    "mp_crystal_sphere_proceed": (),
}
MP: tuple[GameTool, ...] = tuple(
    GameTool(
        name,
        "[Multiplayer] Refused by gamerig: multiplayer runs are not driven through the pipeline (see docs/mcp.md).",
        params,
        how="mp",
    )
    for name, params in _MP_PARAMS.items()
)

ALL: dict[str, GameTool] = {t.name: t for t in (*SP, *WAITS, *MP)}
REASON = {"type": "string", "maxLength": 2000, "description": "optional: your reasoning, kept in the journal"}


def schema(tool: GameTool) -> dict:
    """The tool's JSON Schema (advisory; the server checks every argument itself)."""
    props, required = {}, []
    for p in tool.params:
        kind = {int: "integer", str: "string", float: "number"}[p.kind]
        if p.default is REQUIRED:
            props[p.name] = {"type": kind}
            required.append(p.name)
        elif p.default is None:
            props[p.name] = {"anyOf": [{"type": kind}, {"type": "null"}], "default": None}
        else:
            props[p.name] = {"type": kind, "default": p.default}
    if tool.how in ("act", "profile"):
        props["reason"] = REASON
    return {"type": "object", "properties": props, "required": required, "additionalProperties": False}


def known_args(tool: GameTool) -> tuple[str, ...]:
    return tuple(schema(tool)["properties"])
