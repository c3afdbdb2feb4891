"""Every screen rule of the built-in STS2MCP policy, fed the mod's exact shapes: the
vendor/sts2mcp samples (written from McpMod.StateBuilder.cs / McpMod.Helpers.cs, provenance in
vendor/sts2mcp/README.md), edited per case. No processes: the policy class is plain Python.
"""

from __future__ import annotations

import os

import pytest

from tests.policy.driver import VENDOR, Driver, sample

# the first proposal on a fresh policy, per sample: (wish, action, parameters or None)
FIRST = {
    "menu__main": ("execute", "menu_select", {"option": "singleplayer"}),
    "menu__main_saved_run": ("execute", "menu_select", {"option": "continue"}),
    "menu__singleplayer": ("execute", "menu_select", {"option": "standard"}),
    "menu__character_select": ("execute", "menu_select", {"option": "ironbound"}),
    "menu__tutorial_prompt": ("execute", "menu_select", {"option": "no"}),
    "menu__tutorial": ("execute", "menu_select", {"option": "advance"}),
    "menu__popup": ("execute", "menu_select", {"option": "no"}),
    "menu__popup_no_body": ("execute", "menu_select", None),
    "monster": ("execute", "play_card", None),
    "elite": ("execute", "use_potion", None),
    "boss": ("execute", "use_potion", None),
    "monster__enemy_turn": ("wait", None, None),
    "monster__no_combat_state": ("wait", None, None),
    "monster__combat_ended": ("wait", None, None),
    "elite__combat_ended": ("wait", None, None),
    "boss__combat_ended": ("wait", None, None),
    "hand_select": ("execute", "combat_select_card", None),
    "hand_select__selected": ("execute", "combat_confirm_selection", {}),
    "rest_site": ("execute", "choose_rest_option", None),
    "rest_site__used": ("execute", "proceed", {}),
    "shop": ("execute", "shop_purchase", {"index": 3}),
    "shop__not_ready": ("wait", None, None),
    "fake_merchant": ("execute", "shop_purchase", {"index": 0}),
    "fake_merchant__not_ready": ("wait", None, None),
    "fake_merchant__fight_started": ("execute", "proceed", {}),
    "treasure__loading": ("wait", None, None),
    "treasure__opening": ("wait", None, None),
    "treasure": ("execute", "claim_treasure_relic", {"index": 0}),
    "treasure__claimed": ("execute", "proceed", {}),
    "crystal_sphere": ("execute", "crystal_sphere_click_cell", {"x": 0, "y": 0}),
    "crystal_sphere__done": ("execute", "crystal_sphere_proceed", {}),
    "event": ("execute", "choose_event_option", None),
    "event__ancient_dialogue": ("execute", "advance_dialogue", {}),
    "map": ("execute", "choose_map_node", {"index": 0}),
    "map__start": ("execute", "choose_map_node", None),
    "rewards": ("execute", "claim_reward", None),
    "card_reward": ("execute", "select_card_reward", {"card_index": 0}),
    "card_select__choose": ("execute", "select_card", None),
    "card_select__select": ("execute", "select_card", None),
    "card_select__simple_select": ("execute", "select_card", None),
    "card_select__transform": ("execute", "select_card", None),
    "card_select__upgrade": ("execute", "select_card", None),
    "bundle_select": ("execute", "select_bundle", {"index": 0}),
    "relic_select": ("execute", "select_relic", {"index": 0}),
    "game_over": ("execute", "menu_select", {"option": "main_menu"}),
    "overlay": ("wait", None, None),
    "unknown": ("wait", None, None),
    "unknown__room_type": ("wait", None, None),
    "unknown__no_run_state": ("wait", None, None),
}
STATES = sorted(
    f[:-5]
    for f in os.listdir(VENDOR)
    if f.endswith(".json") and not f.startswith(("reply__", "compendium", "variance"))
)


def test_every_state_sample_has_an_expected_first_decision():
    assert set(STATES) <= set(FIRST), f"a sample without a rule test: {sorted(set(STATES) - set(FIRST))}"


@pytest.mark.parametrize("name", STATES)
def test_the_first_decision_on_each_sample(name):
    wish, action, params = FIRST[name]
    p = Driver().see(sample(name))
    assert (p.wish, p.action) == (wish, action), p.reason
    if params is not None:
        assert p.parameters == params
    assert p.reason


def test_menus_from_the_main_menu_to_embark():
    d = Driver({"character": "ironbound"})
    d.play(sample("menu__main"))
    d.play(sample("menu__singleplayer"))
    cs = sample("menu__character_select")
    assert d.play(cs).parameters == {"option": "ironbound"}
    assert d.see(cs).wish == "wait", "embark is not enabled yet"
    ready = sample(
        "menu__character_select",
        **{"options.2": {"name": "confirm", "enabled": True}, "options.3": {"name": "embark", "enabled": True}},
    )
    assert d.see(ready).parameters == {"option": "embark"}


def test_a_locked_wanted_character_falls_back_to_an_unlocked_one():
    p = Driver({"character": "veilwalker"}).see(sample("menu__character_select"))
    assert p.parameters == {"option": "ironbound"}


def test_the_wanted_character_is_matched_as_the_mod_matches_it_case_insensitively():
    """McpMod.StateBuilder.cs ``AddCharacterSelectMenuState`` names a character option by its
    ``Id.Entry`` (the game's case, e.g. upper case); ``ExecuteCharacterSelectMenuOption``
    matches an option case-insensitively. ``policy.settings.character: veilwalker`` picks the
    advertised ``VEILWALKER``, not the first character."""
    cs = sample(
        "menu__character_select",
        **{
            "options.0": {"name": "IRONBOUND", "enabled": True},
            "options.1": {"name": "VEILWALKER", "enabled": True},
            "characters.0.id": "IRONBOUND",
            "characters.1.id": "VEILWALKER",
            "characters.1.locked": False,
        },
    )
    assert Driver({"character": "veilwalker"}).see(cs).parameters == {"option": "VEILWALKER"}


def test_a_saved_run_can_be_abandoned_and_the_popup_is_then_confirmed():
    d = Driver({"saved_run": "abandon"})
    assert d.play(sample("menu__main_saved_run")).parameters == {"option": "abandon_run"}
    assert d.see(sample("menu__popup")).parameters == {"option": "yes"}


def test_an_abandon_confirmation_with_other_labels_takes_the_yes_button():
    """McpMod.Helpers.cs names a vertical popup's options from its buttons' labels
    (``GetPopupButtonLabel`` → ``NormalizeMenuOptionName``; "yes"/"no" only as fallbacks) and
    lists the Yes button first (``GetPopupOptions``). Confirming an abandon the policy asked
    for takes that first option even when it is not called "yes", never the "cancel"."""
    d = Driver({"saved_run": "abandon"})
    d.play(sample("menu__main_saved_run"))
    popup = sample("menu__popup", options=[{"name": "abandon", "enabled": True}, {"name": "cancel", "enabled": True}])
    assert d.see(popup).parameters == {"option": "abandon"}


def test_an_unasked_popup_gets_the_mildest_answer_and_tutorial_waits_for_its_button():
    assert Driver().see(sample("menu__popup")).parameters == {"option": "no"}
    off = sample("menu__tutorial", **{"options.0.enabled": False, "options.1.enabled": False})
    assert Driver().see(off).wish == "wait"


def test_game_over_outcome_is_inferred_from_player_hp_and_says_so():
    dead = sample("game_over")
    dead["player"]["hp"] = 0
    p = Driver(stop_on_run_end=True).see(dead)
    assert p.extra["run_outcome"]["outcome"] == "defeat"
    assert p.extra["run_outcome"]["inferred_from"] == "player.hp" and "inferred" in p.reason
    assert p.then_stop == "run_ended"
    assert Driver().see(sample("game_over")).extra["run_outcome"]["outcome"] == "victory"


def test_combat_targets_the_entity_id_of_the_read_being_decided_on():
    st = sample("monster")
    enemies = st["battle"]["enemies"]
    st["player"]["potions"] = []
    attack = next(c for c in st["player"]["hand"] if c.get("target_type") == "AnyEnemy")
    st["player"]["hand"] = [dict(attack, index=0, can_play=True)]
    weakest = min(enemies, key=lambda e: e["hp"] + e["block"])
    assert Driver().see(st).parameters == {"card_index": 0, "target": weakest["entity_id"]}
    # the weakest one died: the survivors are renumbered among the living (BuildEnemyState)
    survivors = [e for e in enemies if e is not weakest]
    for n, e in enumerate(survivors):
        e["entity_id"] = f"{e['entity_id'].rsplit('_', 1)[0]}_{n}"
    st["battle"]["enemies"] = survivors
    target = Driver().see(st).parameters.get("target")
    assert target in {e["entity_id"] for e in survivors}


def test_potions_in_combat_when_in_danger_with_a_target_only_for_enemy_potions():
    st = sample("monster")
    st["player"]["hp"] = 5
    st["player"]["potions"] = [
        {
            "id": "BLOCK_POTION",
            "name": "Block Potion",
            "description": "",
            "slot": 0,
            "can_use_in_combat": True,
            "target_type": "Self",
            "keywords": [],
        },
        {
            "id": "FAIRY",
            "name": "Fairy",
            "description": "",
            "slot": 1,
            "can_use_in_combat": False,
            "target_type": "Self",
            "keywords": [],
        },
    ]
    p = Driver().see(st)
    assert (p.action, p.parameters) == ("use_potion", {"slot": 0}), "no target for a self potion"
    st["player"]["hp"] = st["player"]["max_hp"]
    assert Driver().see(st).action != "use_potion", "a healthy ordinary fight keeps its potions"


def test_out_of_combat_a_hurt_player_tries_a_self_potion_and_a_combat_only_refusal_is_remembered():
    m = sample("map")
    m["player"]["hp"] = 10
    m["player"]["potions"] = [
        {
            "id": "BLOOD_POTION",
            "name": "Blood Potion",
            "description": "",
            "slot": 0,
            "can_use_in_combat": True,
            "target_type": "Self",
            "keywords": [],
        }
    ]
    d = Driver()
    assert d.play(m, "rejected", "Potion 'Blood Potion' can only be used in combat").action == "use_potion"
    assert d.see(m).action == "choose_map_node"


def test_an_automatic_potion_refusal_is_remembered_on_later_screens_too():
    """McpMod.Actions.cs ``ExecuteUsePotion`` refuses a ``PotionUsage.Automatic`` potion
    anywhere ("... is automatic and cannot be manually used"); the state does not say which
    potion is automatic (``BuildPlayerState``: ``can_use_in_combat`` is false for it, as for
    any usage other than CombatOnly/AnyTime), so the policy tries once and remembers it: the
    next hurt map screen (another floor) does not spend three more refusals on it."""
    fairy = {
        "id": "FAIRY_POTION",
        "name": "Fairy in a Bottle",
        "description": "",
        "slot": 0,
        "can_use_in_combat": False,
        "target_type": "None",
        "keywords": [],
    }
    m = sample("map", **{"player.hp": 10, "player.potions": [fairy]})
    d = Driver()
    refusal = "Potion 'Fairy in a Bottle' is automatic and cannot be manually used"
    assert d.play(m, "rejected", refusal).action == "use_potion"
    later = sample("map", **{"player.hp": 10, "player.potions": [fairy], "run.floor": 9})
    assert d.see(later).action == "choose_map_node"


def test_rest_site_rests_when_hurt_smiths_when_not_and_leaves_only_once_proceed_shows():
    hurt = sample("rest_site")
    hurt["player"]["hp"] = 10
    assert Driver().see(hurt).parameters == {"index": 0}
    well = sample("rest_site")
    well["player"]["hp"] = well["player"]["max_hp"]
    assert Driver().see(well).parameters == {"index": 1}
    closed = sample("rest_site", **{"rest_site.options.0.is_enabled": False, "rest_site.options.1.is_enabled": False})
    assert Driver().see(closed).wish == "wait", "no proceed while can_proceed is false"


def test_smith_then_upgrade_selection_then_confirm():
    d = Driver()
    up = sample("card_select__upgrade")
    first = d.play(up)
    assert first.action == "select_card" and first.extra["screen_type"] == "upgrade"
    ready = sample("card_select__upgrade", **{"card_select.preview_showing": True, "card_select.can_confirm": True})
    assert d.see(ready).action == "confirm_selection"


def test_card_removal_prefers_junk_then_basics():
    st = sample("card_select__select")
    st["card_select"]["cards"].append(
        dict(
            st["card_select"]["cards"][0],
            id="WOUND",
            name="Wound",
            type="Status",
            rarity="Status",
            index=len(st["card_select"]["cards"]),
        )
    )
    p = Driver().see(st)
    assert p.parameters == {"index": len(st["card_select"]["cards"]) - 1}


def test_a_choose_screen_never_confirms_and_skips_when_nothing_is_left():
    ch = sample("card_select__choose", **{"card_select.cards": []})
    assert Driver().see(ch).action == "cancel_selection"


def test_shop_buys_in_order_and_proceeds_even_when_can_proceed_reads_false():
    st = sample("shop")
    for item in st["shop"]["items"]:
        item["can_afford"] = False
    st["shop"]["can_proceed"] = False
    p = Driver().see(st)
    assert p.action == "proceed" and "try, then react" in p.reason


def test_shop_skips_potions_with_a_full_belt():
    st = sample("shop")
    st["shop"]["items"] = [i for i in st["shop"]["items"] if i["category"] == "potion"]
    st["player"]["max_potion_slots"] = len(st["player"]["potions"])
    assert Driver().see(st).action == "proceed"


def test_treasure_sequence_opening_claim_proceed():
    assert Driver().see(sample("treasure__opening")).wish == "wait"
    waiting = sample("treasure__claimed", **{"treasure.can_proceed": False})
    assert Driver().see(waiting).wish == "wait"


def test_crystal_sphere_picks_a_tool_first_and_proceeds_only_when_it_can():
    none = sample("crystal_sphere", **{"crystal_sphere.tool": "none", "crystal_sphere.can_use_big_tool": False})
    p = Driver().see(none)
    assert (p.action, p.parameters) == ("crystal_sphere_set_tool", {"tool": "small"})
    spent = sample("crystal_sphere", **{"crystal_sphere.divinations_left_text": "0 divinations left"})
    assert Driver().see(spent).wish == "wait", "can_proceed is false: read again"


def test_events_prefer_unchosen_options_and_leave_by_the_proceed_option():
    st = sample("event")
    for o in st["event"]["options"]:
        o["was_chosen"] = not o["is_proceed"]
    p = Driver().see(st)
    assert p.parameters == {"index": 2} and "(leave)" in p.reason
    locked = sample("event")
    for o in locked["event"]["options"]:
        o["is_locked"] = True
    assert Driver().see(locked).wish == "wait"


def test_bundle_select_waits_on_an_unconfirmable_preview_and_confirms_when_it_can():
    preview = sample("bundle_select", **{"bundle_select.preview_showing": True, "bundle_select.can_confirm": False})
    assert Driver().see(preview).wish == "wait"
    ready = sample("bundle_select", **{"bundle_select.preview_showing": True, "bundle_select.can_confirm": True})
    assert Driver().see(ready).action == "confirm_bundle_selection"


def test_relic_select_skips_when_there_is_nothing_to_take():
    assert Driver().see(sample("relic_select", **{"relic_select.relics": []})).action == "skip_relic_selection"


def test_card_reward_without_skip_takes_a_card_and_a_skipped_reward_is_not_reopened():
    st = sample("card_reward", **{"card_reward.can_skip": False})
    assert Driver({"take_card_rewards": False}).see(st).wish == "wait"
    d = Driver({"take_card_rewards": False})
    d.play(sample("rewards"))  # the card reward is claimed first
    d.play(sample("card_reward"))  # skipped
    p = d.see(sample("rewards"))
    assert p.action == "claim_reward" and p.extra["reward_type"] != "card"


@pytest.mark.parametrize(
    "settings, message",
    [
        ({"saved_run": "keep"}, "policy.settings.saved_run: expected 'continue' or 'abandon', got 'keep'"),
        ({"no_effect_reads": 0}, "policy.settings.no_effect_reads: expected a whole number of reads >= 1, got 0"),
        ({"no_effect_seconds": "5"}, "policy.settings.no_effect_seconds: expected a number of seconds >= 0, got '5'"),
        ({"tutorials": 1}, "policy.settings.tutorials: expected true or false, got 1"),
        ({"charcter": "x"}, "policy.settings.charcter: unknown setting of the sts2 policy (known: "),
    ],
)
def test_bad_settings_are_refused_naming_the_key(settings, message):
    with pytest.raises(ValueError) as err:
        Driver(settings)
    assert str(err.value).startswith(message)
