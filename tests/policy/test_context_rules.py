"""PolicyContext: one test per row of the pending-action table, the screen boundaries, the
refusal rules and the no-effect release — fed the mod's shapes (vendor/sts2mcp samples, edited
per case; tests/policy/driver.py). These exercise the policy's memory directly (no
processes). Whole-process flows are in test_policy_sessions.py.
"""

from __future__ import annotations

import pytest

from actors.policy.context import PolicyContext, digest, situation_of, snapshot_for
from tests.policy.driver import Clock, sample


def accept(ctx, state, action, params=None, outcome="accepted", **extra):
    params = params or {}
    prop = {
        "action": action,
        "parameters": params,
        "state_digest": digest(state),
        "guard_snapshot": snapshot_for(action, params, state),
        "situation": situation_of(action, params, state),
        **extra,
    }
    ctx.record_result(prop, {"outcome": outcome, "response": {"status": "error", "error": "no"}})


def grid(screen="card_select__upgrade", **edits):
    return sample(screen, **edits)


def assert_waits_for(ctx, action, kind):
    """The context blocks for this very action and guard kind — not merely for something."""
    assert ctx.blocking() == ("wait", f"awaiting evidence for the accepted {action} ({kind})")
    assert (ctx.pending.action, ctx.pending.kind) == (action, kind)


def test_grid_toggle_reserves_the_index_and_a_fresh_read_releases():
    ctx = PolicyContext()
    g = grid()
    ctx.reconcile(g)
    accept(ctx, g, "select_card", {"index": 1})
    assert_waits_for(ctx, "select_card", "grid_toggle")
    assert ctx.toggles == {1}
    ctx.reconcile(g)  # the same grid, unchanged: selection is not shown, the read releases
    assert ctx.blocking() is None and ctx.toggles == {1}


def test_grid_change_with_accepted_toggles_waits_instead_of_mapping_indices():
    ctx = PolicyContext()
    ctx.reconcile(grid())
    accept(ctx, grid(), "select_card", {"index": 0})
    ctx.reconcile(grid(**{"card_select.cards.0.id": "BASH"}))
    assert ctx.grid_is_stale()


def test_direct_choose_screen_waits_for_a_transition():
    ctx = PolicyContext()
    g = grid("card_select__choose")
    ctx.reconcile(g)
    accept(ctx, g, "select_card", {"index": 0}, screen_type="choose")
    ctx.reconcile(g)
    assert_waits_for(ctx, "select_card", "choose_card")
    ctx.reconcile(sample("monster"))
    assert ctx.blocking() is None


def test_hand_selection_waits_for_the_selected_count_to_grow():
    ctx = PolicyContext()
    hs = sample("hand_select")
    ctx.reconcile(hs)
    accept(ctx, hs, "combat_select_card", {"card_index": 0})
    ctx.reconcile(hs)
    assert_waits_for(ctx, "combat_select_card", "hand_select")
    ctx.reconcile(sample("hand_select__selected"))
    assert ctx.blocking() is None


@pytest.mark.parametrize(
    "name, action",
    [
        ("card_select__upgrade", "confirm_selection"),
        ("card_select__upgrade", "cancel_selection"),
        ("hand_select", "combat_confirm_selection"),
        ("bundle_select", "confirm_bundle_selection"),
        ("bundle_select", "cancel_bundle_selection"),
    ],
)
def test_confirmation_and_cancellation_wait_for_a_transition_never_repeat(name, action):
    ctx = PolicyContext()
    s = sample(name)
    ctx.reconcile(s)
    accept(ctx, s, action)
    kind = s["state_type"]
    for n in range(3):  # a slow confirmation: the same screen again and again
        ctx.reconcile(sample(name, **{f"{kind}.prompt": f"still here {n}"}))
        assert_waits_for(ctx, action, "confirm")
    ctx.reconcile(sample("map"))
    assert ctx.blocking() is None


def test_bundle_selection_waits_for_a_preview_with_confirmation():
    ctx = PolicyContext()
    b = sample("bundle_select", **{"bundle_select.preview_showing": False, "bundle_select.can_confirm": False})
    ctx.reconcile(b)
    accept(ctx, b, "select_bundle", {"index": 0})
    ctx.reconcile(b)
    assert_waits_for(ctx, "select_bundle", "bundle_select")
    ctx.reconcile(sample("bundle_select", **{"bundle_select.preview_showing": True, "bundle_select.can_confirm": True}))
    assert ctx.blocking() is None


def test_purchase_waits_for_the_item_to_change_not_for_prices():
    ctx = PolicyContext()
    before = sample("shop")
    ctx.reconcile(before)
    accept(ctx, before, "shop_purchase", {"index": 0})
    ctx.reconcile(sample("shop", **{"shop.items.0.price": 40, "shop.items.0.can_afford": False}))
    assert_waits_for(ctx, "shop_purchase", "purchase")  # a price or affordability change alone
    ctx.reconcile(sample("shop", **{"shop.items.0.is_stocked": False}))
    assert ctx.blocking() is None


def test_a_fake_merchant_purchase_is_guarded_like_a_shop_purchase():
    ctx = PolicyContext()
    fm = sample("fake_merchant")
    ctx.reconcile(fm)
    accept(ctx, fm, "shop_purchase", {"index": 0})
    ctx.reconcile(sample("fake_merchant", **{"fake_merchant.shop.items.0.can_afford": False}))
    assert_waits_for(ctx, "shop_purchase", "purchase")
    ctx.reconcile(sample("fake_merchant", **{"fake_merchant.shop.items.0.is_stocked": False}))
    assert ctx.blocking() is None


def test_crystal_click_waits_for_the_cell_to_be_revealed():
    ctx = PolicyContext()
    cs = sample("crystal_sphere")
    ctx.reconcile(cs)
    accept(ctx, cs, "crystal_sphere_click_cell", {"x": 0, "y": 0})
    ctx.reconcile(sample("crystal_sphere", **{"crystal_sphere.divinations_left_text": "2 divinations left"}))
    assert_waits_for(ctx, "crystal_sphere_click_cell", "crystal_click")
    revealed = sample("crystal_sphere")
    revealed["crystal_sphere"]["cells"][0].update(is_hidden=False, is_clickable=False)
    ctx.reconcile(revealed)
    assert ctx.blocking() is None


def menu(name, **edits):
    return sample(name, **edits)


def test_character_pick_is_released_by_any_read_and_embark_waits_for_a_transition():
    ctx = PolicyContext()
    cs = menu("menu__character_select")
    ctx.reconcile(cs)
    accept(ctx, cs, "menu_select", {"option": "ironbound"}, character_pick=True)
    assert_waits_for(ctx, "menu_select", "character")
    ctx.reconcile(cs)
    assert ctx.blocking() is None and ctx.character_picked
    accept(ctx, cs, "menu_select", {"option": "embark"})
    ctx.reconcile(cs)
    assert_waits_for(ctx, "menu_select", "embark")
    ctx.reconcile(sample("event__ancient_dialogue"))
    assert ctx.blocking() is None


def test_a_rejected_embark_allows_picking_again():
    ctx = PolicyContext()
    cs = menu("menu__character_select")
    ctx.reconcile(cs)
    accept(ctx, cs, "menu_select", {"option": "ironbound"}, character_pick=True)
    ctx.reconcile(cs)
    accept(ctx, cs, "menu_select", {"option": "embark"}, outcome="rejected")
    assert not ctx.character_picked and ctx.blocking() is None


def test_card_reward_skip_is_marked_only_when_the_rewards_list_reappears():
    ctx = PolicyContext()
    rw, cr = sample("rewards"), sample("card_reward")
    ctx.reconcile(rw)
    ctx.reconcile(cr)
    accept(ctx, cr, "skip_card_reward")
    ctx.reconcile(cr)
    assert not ctx.skipped_reward
    assert_waits_for(ctx, "skip_card_reward", "reward_skip")
    ctx.reconcile(rw)
    assert ctx.skipped_reward and ctx.blocking() is None


def test_rejected_requests_reserve_nothing():
    ctx = PolicyContext()
    g = grid()
    ctx.reconcile(g)
    accept(ctx, g, "select_card", {"index": 0}, outcome="rejected")
    assert ctx.toggles == set() and ctx.blocking() is None


def test_unknown_outcomes_are_guarded_like_accepted_ones():
    ctx = PolicyContext()
    s = sample("shop")
    ctx.reconcile(s)
    accept(ctx, s, "shop_purchase", {"index": 0}, outcome="unknown")
    ctx.reconcile(s)
    assert_waits_for(ctx, "shop_purchase", "purchase")


@pytest.mark.parametrize(
    "neutral", ["overlay", "unknown", "unknown__no_run_state", "menu__tutorial", "menu__tutorial_prompt", "menu__popup"]
)
def test_neutral_screens_and_mid_run_popups_neither_reset_nor_release_guards(neutral):
    ctx = PolicyContext()
    g = grid()
    ctx.reconcile(g)
    accept(ctx, g, "select_card", {"index": 0})
    ctx.reconcile(sample(neutral))
    assert_waits_for(ctx, "select_card", "grid_toggle")
    assert ctx.toggles == {0} and ctx.flow == "card_select:upgrade"


def test_a_popup_dismissal_is_tracked_apart_from_the_runs_pending_action():
    ctx = PolicyContext()
    s = sample("shop")
    ctx.reconcile(s)
    accept(ctx, s, "shop_purchase", {"index": 0})
    popup = sample("menu__popup")
    ctx.reconcile(popup)
    accept(ctx, popup, "menu_select", {"option": "no"}, popup_screen="popup")
    assert ctx.pending.action == "shop_purchase" and ctx.popup_pending.action == "menu_select"
    ctx.reconcile(s)  # the popup is gone; the purchase still awaits its evidence
    assert ctx.popup_pending is None and ctx.pending.action == "shop_purchase"


def test_a_changed_read_releases_an_ordinary_effect_even_on_a_neutral_screen():
    ctx = PolicyContext()
    m = sample("map")
    ctx.reconcile(m)
    accept(ctx, m, "choose_map_node", {"index": 0})
    ctx.reconcile(m)  # "ok means queued": the same read, still waiting
    assert_waits_for(ctx, "choose_map_node", "effect")
    ctx.reconcile(sample("unknown"))
    assert ctx.blocking() is None


def test_an_accepted_action_without_effect_is_overdue_after_reads_and_time_then_futile(monkeypatch):
    clock = Clock(monkeypatch)
    ctx = PolicyContext(no_effect_reads=4, no_effect_seconds=2.0)
    rw = sample("rewards")
    ctx.reconcile(rw)
    accept(ctx, rw, "claim_reward", {"index": 1})  # the potion, with a full belt: ok, nothing
    for _ in range(4):
        ctx.reconcile(rw)
    assert not ctx.overdue(), "enough reads but not enough time"
    clock.advance(2.5)
    assert ctx.overdue()
    info = ctx.release_no_effect()
    assert info["action"] == "claim_reward" and info["reads"] == 4 and info["seconds"] == 2.5
    assert ctx.blocking() is None
    assert (
        ctx.refusal(digest(rw), "claim_reward", {"index": 1}, situation_of("claim_reward", {"index": 1}, rw))
        == "accepted here before without any effect"
    )
    ctx.reconcile(sample("map"))  # a new screen flow: a new situation
    assert ctx.refusal(digest(rw), "claim_reward", {"index": 1}, situation_of("claim_reward", {"index": 1}, rw)) is None


def test_futility_follows_the_thing_not_its_list_position():
    rw = sample("rewards")
    shifted = sample("rewards")
    shifted["rewards"]["items"] = [dict(i, index=i["index"] - 1) for i in rw["rewards"]["items"][1:]]
    assert situation_of("claim_reward", {"index": 1}, rw) == situation_of("claim_reward", {"index": 0}, shifted)
    assert situation_of("claim_reward", {"index": 0}, rw) != situation_of("claim_reward", {"index": 0}, shifted)


def test_an_identical_action_is_not_proposed_after_three_rejections_in_a_row():
    ctx = PolicyContext()
    rs = sample("rest_site")
    ctx.reconcile(rs)
    for n in range(3):
        changed = sample("rest_site", **{"rest_site.options.0.description": f"read {n}"})
        ctx.reconcile(changed)  # every read differs: "on this very state" would never trip
        assert ctx.refusal(digest(changed), "proceed", {}, None) is None
        accept(ctx, changed, "proceed", outcome="rejected")
    assert ctx.refusal("other", "proceed", {}, None) == "rejected 3 times in a row"
    accept(ctx, rs, "choose_rest_option", {"index": 0})  # something accepted ends the run
    assert ctx.refusal("other", "proceed", {}, None) is None


def test_a_repeated_rejection_on_the_same_state_is_given_up_after_three():
    ctx = PolicyContext()
    s = sample("event")
    ctx.reconcile(s)
    for _ in range(3):
        assert not ctx.was_rejected_here(digest(s), "choose_event_option", {"index": 0})
        accept(ctx, s, "choose_event_option", {"index": 0}, outcome="rejected")
        accept(ctx, s, "choose_event_option", {"index": 1})  # interleaved: not "in a row"
    assert ctx.was_rejected_here(digest(s), "choose_event_option", {"index": 0})


def test_a_potion_refused_out_of_combat_is_remembered_as_combat_only():
    ctx = PolicyContext()
    m = sample("map")
    ctx.reconcile(m)
    prop = {"action": "use_potion", "parameters": {"slot": 0}, "potion_id": "FIRE_POTION", "state_digest": digest(m)}
    ctx.record_result(
        prop,
        {
            "outcome": "rejected",
            "http_status": 200,
            "response": {"status": "error", "error": "Potion 'Fire Potion' can only be used in combat"},
        },
    )
    assert ctx.combat_only_potions == {"FIRE_POTION"}


def test_refusals_on_a_state_count_while_it_lasts_not_when_it_recurs():
    ctx = PolicyContext()
    popup = sample("menu__popup_no_body")
    for _ in range(3):  # the same popup shows again later: one refusal each time
        ctx.reconcile(sample("map"))
        ctx.reconcile(popup)
        accept(ctx, popup, "menu_select", {"option": "ok"}, outcome="rejected")
        accept(ctx, popup, "menu_select", {"option": "ok"}, popup_screen="popup")
    assert not ctx.was_rejected_here(digest(popup), "menu_select", {"option": "ok"})
