"""PolicyContext: one test per row of the pending-action table, and the screen boundaries.

These exercise the policy's memory directly (no processes): the rules are pure functions of
observations and results. Whole-process flows are in test_policy_sessions.py.
"""
from __future__ import annotations

import pytest

from actors.policy.context import PolicyContext, digest, snapshot_for


def st(kind, **block):
    s = {"state_type": kind, "run": {"act": 1, "floor": 2}}
    if block:
        s["battle" if kind in ("monster", "elite", "boss") else kind] = block
    return s


def accept(ctx, state, action, params=None, outcome="accepted", **extra):
    params = params or {}
    prop = {"action": action, "parameters": params, "state_digest": digest(state),
            "guard_snapshot": snapshot_for(action, params, state), **extra}
    ctx.record_result(prop, {"outcome": outcome})


def grid(*ids, can_confirm=False, screen_type="select"):
    return st("card_select", screen_type=screen_type, can_confirm=can_confirm,
              cards=[{"index": i, "id": c} for i, c in enumerate(ids)])


def test_grid_toggle_reserves_the_index_and_a_fresh_read_releases():
    ctx = PolicyContext()
    g = grid("A", "B", "C")
    ctx.reconcile(g)
    accept(ctx, g, "select_card", {"index": 1})
    assert ctx.blocking()[0] == "wait" and ctx.toggles == {1}
    ctx.reconcile(g)  # the same grid, unchanged: selection is not shown, the read releases
    assert ctx.blocking() is None and ctx.toggles == {1}


def test_grid_change_with_accepted_toggles_waits_instead_of_mapping_indices():
    ctx = PolicyContext()
    ctx.reconcile(grid("A", "B"))
    accept(ctx, grid("A", "B"), "select_card", {"index": 0})
    ctx.reconcile(grid("B", "C"))
    assert ctx.grid_is_stale()


def test_direct_choose_screen_waits_for_a_transition():
    ctx = PolicyContext()
    g = grid("A", "B", screen_type="choose")
    ctx.reconcile(g)
    accept(ctx, g, "select_card", {"index": 0}, screen_type="choose")
    ctx.reconcile(g)
    assert ctx.blocking() is not None
    ctx.reconcile(st("monster", enemies=[]))
    assert ctx.blocking() is None


def test_hand_selection_waits_for_the_selected_count_to_grow():
    ctx = PolicyContext()
    hs = st("hand_select", cards=[{"index": 0}], selected_cards=[])
    ctx.reconcile(hs)
    accept(ctx, hs, "combat_select_card", {"card_index": 0})
    ctx.reconcile(hs)
    assert ctx.blocking() is not None
    ctx.reconcile(st("hand_select", cards=[], selected_cards=[{"index": 0}]))
    assert ctx.blocking() is None


@pytest.mark.parametrize("kind, action", [
    ("card_select", "confirm_selection"), ("card_select", "cancel_selection"),
    ("hand_select", "combat_confirm_selection"), ("bundle_select", "confirm_bundle_selection"),
    ("bundle_select", "cancel_bundle_selection")])
def test_confirmation_and_cancellation_wait_for_a_transition_never_repeat(kind, action):
    ctx = PolicyContext()
    s = st(kind, can_confirm=True)
    ctx.reconcile(s)
    accept(ctx, s, action)
    for _ in range(3):  # a slow confirmation: the same screen again and again
        ctx.reconcile(st(kind, can_confirm=True, prompt="still here"))
        assert ctx.blocking()[0] == "wait"
    ctx.reconcile(st("map", next_options=[]))
    assert ctx.blocking() is None


def test_bundle_selection_waits_for_a_preview_with_confirmation():
    ctx = PolicyContext()
    b = st("bundle_select", bundles=[{"index": 0}], preview_showing=False, can_confirm=False)
    ctx.reconcile(b)
    accept(ctx, b, "select_bundle", {"index": 0})
    ctx.reconcile(b)
    assert ctx.blocking() is not None
    ctx.reconcile(st("bundle_select", bundles=[{"index": 0}], preview_showing=True, can_confirm=True))
    assert ctx.blocking() is None


def shop(items):
    return st("shop", items=items, can_proceed=True)


def test_purchase_waits_for_the_item_to_change_not_for_prices():
    ctx = PolicyContext()
    before = shop([{"index": 0, "id": "X", "cost": 50, "is_stocked": True, "can_afford": True}])
    ctx.reconcile(before)
    accept(ctx, before, "shop_purchase", {"index": 0})
    ctx.reconcile(shop([{"index": 0, "id": "X", "cost": 40, "is_stocked": True, "can_afford": False}]))
    assert ctx.blocking() is not None, "a price or affordability change alone must not release"
    ctx.reconcile(shop([{"index": 0, "id": "X", "cost": 40, "is_stocked": False, "can_afford": False}]))
    assert ctx.blocking() is None


def test_crystal_click_waits_for_the_cell_to_be_revealed():
    ctx = PolicyContext()
    cs = lambda revealed: st("crystal_sphere", cells=[{"x": 1, "y": 2, "revealed": revealed}])
    ctx.reconcile(cs(False))
    accept(ctx, cs(False), "crystal_sphere_click_cell", {"x": 1, "y": 2})
    ctx.reconcile(cs(False))
    assert ctx.blocking() is not None
    ctx.reconcile(cs(True))
    assert ctx.blocking() is None


def menu(screen, **block):
    return {"state_type": "menu", "menu": {"menu_screen": screen, **block}}


def test_character_pick_is_released_by_a_fresh_read_and_embark_by_a_transition():
    ctx = PolicyContext()
    cs = menu("character_select", options=[{"name": "embark", "enabled": False}])
    ctx.reconcile(cs)
    accept(ctx, cs, "menu_select", {"option": "x"}, character_pick=True)
    assert ctx.character_picked and ctx.blocking() is not None
    ctx.reconcile(cs)
    assert ctx.blocking() is None and ctx.character_picked
    accept(ctx, cs, "menu_select", {"option": "embark"})
    ctx.reconcile(cs)
    assert ctx.blocking() is not None
    ctx.reconcile(st("event", in_dialogue=True))
    assert ctx.blocking() is None


def test_a_rejected_embark_allows_picking_again():
    ctx = PolicyContext()
    cs = menu("character_select", options=[{"name": "embark", "enabled": True}])
    ctx.reconcile(cs)
    accept(ctx, cs, "menu_select", {"option": "x"}, character_pick=True)
    ctx.reconcile(cs)
    accept(ctx, cs, "menu_select", {"option": "embark"}, outcome="rejected")
    assert not ctx.character_picked and ctx.blocking() is None


def test_card_reward_skip_is_marked_only_when_the_rewards_list_reappears():
    ctx = PolicyContext()
    rw, cr = st("rewards", items=[]), st("card_reward", cards=[])
    ctx.reconcile(rw)
    ctx.reconcile(cr)
    accept(ctx, cr, "skip_card_reward")
    ctx.reconcile(cr)
    assert not ctx.skipped_reward and ctx.blocking() is not None
    ctx.reconcile(rw)
    assert ctx.skipped_reward and ctx.blocking() is None


def test_rejected_requests_reserve_nothing():
    ctx = PolicyContext()
    g = grid("A", "B")
    ctx.reconcile(g)
    accept(ctx, g, "select_card", {"index": 0}, outcome="rejected")
    assert ctx.toggles == set() and ctx.blocking() is None


def test_unknown_outcomes_are_guarded_like_accepted_ones():
    ctx = PolicyContext()
    s = shop([{"index": 0, "id": "X", "is_stocked": True}])
    ctx.reconcile(s)
    accept(ctx, s, "shop_purchase", {"index": 0}, outcome="unknown")
    ctx.reconcile(s)
    assert ctx.blocking() is not None


def test_unknown_and_overlay_neither_reset_nor_release_guards():
    ctx = PolicyContext()
    g = grid("A", "B")
    ctx.reconcile(g)
    accept(ctx, g, "select_card", {"index": 0})
    ctx.reconcile({"state_type": "overlay", "overlay": {"screen_type": "x"}})
    ctx.reconcile({"state_type": "unknown", "room_type": "Transition"})
    assert ctx.blocking() is not None and ctx.toggles == {0}


def test_a_changed_read_releases_an_ordinary_effect_even_on_a_neutral_screen():
    ctx = PolicyContext()
    m = st("map", next_options=[{"index": 0}])
    ctx.reconcile(m)
    accept(ctx, m, "choose_map_node", {"index": 0})
    ctx.reconcile(m)  # "ok means queued": the same read, still waiting
    assert ctx.blocking() is not None
    ctx.reconcile({"state_type": "unknown", "room_type": "Transition"})
    assert ctx.blocking() is None


def test_the_pending_action_deadline_stops_even_when_unrelated_fields_change(monkeypatch):
    import actors.policy.context as c
    now = [100.0]
    monkeypatch.setattr(c.time, "monotonic", lambda: now[0])
    ctx = PolicyContext(stuck_seconds=5)
    s = shop([{"index": 0, "id": "X", "is_stocked": True, "cost": 1}])
    ctx.reconcile(s)
    accept(ctx, s, "shop_purchase", {"index": 0})
    for gold in range(3):
        now[0] += 2
        ctx.reconcile({**shop([{"index": 0, "id": "X", "is_stocked": True, "cost": 1}]), "gold": gold})
    assert ctx.blocking() == ("stop", "pending_action_timeout")


def test_a_repeated_rejection_on_the_same_state_is_given_up_after_three():
    ctx = PolicyContext()
    s = st("event", options=[{"index": 0}])
    ctx.reconcile(s)
    for n in range(3):
        assert not ctx.was_rejected_here(digest(s), "choose_event_option", {"index": 0})
        accept(ctx, s, "choose_event_option", {"index": 0}, outcome="rejected")
    assert ctx.was_rejected_here(digest(s), "choose_event_option", {"index": 0})
