"""Attempt, then react; no silent stall; popups mid-run; joining a run in progress — the built-in
policy fed the mod's shapes (vendor/sts2mcp samples, edited per case), with a stand-in clock.
"""

from __future__ import annotations

from actors.policy.base import PolicyObservation
from supervisor.watch import StreamWatch
from tests.policy.driver import Clock, Driver, sample


def full_belt_rewards():
    rw = sample("rewards")
    rw["rewards"]["items"] = [i for i in rw["rewards"]["items"] if i["type"] == "potion"]
    rw["player"]["max_potion_slots"] = len(rw["player"]["potions"])
    return rw


def read_until_released(d: Driver, clock: Clock, state: dict, step: float = 0.5, edit=None):
    """Read ``state`` every ``step`` seconds until a proposal carries ``released_no_effect``;
    every proposal before it must be a wait or a suppressed duplicate (never sent)."""
    for n in range(200):
        if edit is not None:
            edit(state, n)
        p = d.see(state)
        if "released_no_effect" in p.extra:
            return p, n
        assert p.wish in ("wait", "suppressed"), p
        clock.advance(step)
    raise AssertionError("never released")


def test_a_potion_claim_with_a_full_belt_is_released_recorded_and_not_sent_again(monkeypatch):
    clock = Clock(monkeypatch)
    d = Driver()
    rw = full_belt_rewards()
    assert d.play(rw).action == "claim_reward"  # the mod answers ok; nothing changes
    p, _ = read_until_released(d, clock, rw)
    released = p.extra["released_no_effect"]
    ctx = d.policy.ctx
    assert released["action"] == "claim_reward" and released["reads"] >= ctx.no_effect_reads
    assert ctx.no_effect_seconds <= released["seconds"] < ctx.no_effect_seconds + 0.5
    assert released["futile"] is True
    assert p.action == "proceed", "the futile claim is not proposed again"
    assert d.rows[-1]["released_no_effect"] == released, "journalled on the proposal row"


def test_a_release_survives_a_restart_through_the_replayed_proposal_rows(monkeypatch):
    clock = Clock(monkeypatch)
    d = Driver()
    rw = full_belt_rewards()
    d.play(rw)
    read_until_released(d, clock, rw)
    fresh = Driver()  # a restarted policy replays the journal through the hooks
    fresh.policy.observe(PolicyObservation("o-1", 1, "run", rw, {}))
    first = dict(d.rows[0])
    fresh.policy.record_proposal(first)
    fresh.policy.record_result(first, {"outcome": "accepted", "response": {"status": "ok"}})
    for row in d.rows[1:]:
        fresh.policy.record_proposal(row)
    assert fresh.see(rw).action == "proceed"


def test_an_action_swallowed_by_a_popup_is_released_but_not_futile(monkeypatch):
    clock = Clock(monkeypatch)
    d = Driver()
    ev = sample("event")
    first = d.play(ev)
    d.play(sample("menu__popup_no_body"))  # a popup came while the choice was pending
    p, _ = read_until_released(d, clock, ev)
    assert p.extra["released_no_effect"]["futile"] is False
    assert (p.action, p.parameters) == (first.action, first.parameters), "tried again"


def test_popups_excuse_a_no_effect_release_only_once(monkeypatch):
    # A popup every few seconds comes during each wait for a potion claimed with a full belt:
    # were every release "interrupted", the claim would be sent again for ever and the rewards
    # screen never left.
    clock = Clock(monkeypatch)
    d = Driver()
    rw = full_belt_rewards()
    releases = []
    p = d.see(rw)
    while p.action == "claim_reward" and len(releases) < 4:
        d.answer("accepted")
        d.play(sample("menu__popup_no_body"))  # a popup while the claim is pending
        p, _ = read_until_released(d, clock, rw)
        releases.append(p.extra["released_no_effect"]["futile"])
    assert releases == [False, True], releases
    assert p.action == "proceed", "the claim is futile after its second release"


def test_a_potion_duplicate_is_dropped_for_a_new_kind_when_the_belt_is_full():
    rw = full_belt_rewards()
    held = dict(rw["player"]["potions"][0], id="BLOCK_POTION", name="Block Potion")
    rw["player"]["potions"] = [dict(held, slot=n) for n in range(3)]
    rw["player"]["max_potion_slots"] = 3
    p = Driver().see(rw)
    assert (p.action, p.parameters) == ("discard_potion", {"slot": 2})


def test_a_purchase_that_changed_nothing_is_released_and_the_shop_is_left(monkeypatch):
    clock = Clock(monkeypatch)
    d = Driver()
    st = sample("shop")
    st["shop"]["items"] = [st["shop"]["items"][1]]
    st["shop"]["items"][0].update(index=0, can_afford=True)
    assert d.play(st).action == "shop_purchase"
    # unrelated fields move; the item does not
    p, n = read_until_released(d, clock, st, edit=lambda s, n: s["player"].update(gold=100 + n))
    assert n == 2 * d.policy.ctx.no_effect_seconds, "released once the time bound passed, not before"
    assert p.extra["released_no_effect"]["action"] == "shop_purchase" and p.action == "proceed"


def test_an_identical_refused_action_is_not_sent_a_fourth_time_in_a_row():
    d = Driver()
    st = sample("shop")
    for item in st["shop"]["items"]:
        item["can_afford"] = False
    st["shop"]["can_proceed"] = False
    sent = []
    for n in range(6):
        st["player"]["gold"] = n  # every read differs
        p = d.play(st, "rejected", "No proceed button available or enabled")
        sent.append(p.action)
    assert sent[:3] == ["proceed"] * 3 and "proceed" not in sent[3:]


def test_a_stall_is_journalled_ways_out_tried_then_the_session_stops_stuck(monkeypatch):
    clock = Clock(monkeypatch)
    d = Driver(stuck_seconds=20)
    st = sample("overlay")  # nothing the policy can do: it waits
    rows = []
    for _ in range(80):
        p = d.see(st)
        rows.append(d.rows[-1])
        if p.wish == "execute":
            d.answer("rejected", "No proceed button available or enabled")
        if p.wish == "stop":
            break
        clock.advance(0.5)
    stall_rows = [r for r in rows if "stall" in r]
    assert stall_rows[0]["wish"] == "wait" and stall_rows[0]["stall"]["screen"] == "overlay"
    escapes = [r for r in rows if r.get("escape")]
    # a round of ways out every stall_after_seconds; the third identical refusal on this very
    # state ends the retries of the one the game keeps refusing (the policy memory's limit)
    assert [r["action"] for r in escapes] == ["proceed"] * 3
    reads_apart = [rows.index(b) - rows.index(a) for a, b in zip(escapes, escapes[1:])]
    assert all(n * 0.5 >= d.policy.stall.stall_after_s for n in reads_apart), reads_apart
    last = rows[-1]
    assert last["wish"] == "stop" and last["action"] is None and p.reason == "stuck"
    assert last["stuck_on"].startswith("overlay for ")
    assert last["stall"]["refusals"][-1]["error"] == "No proceed button available or enabled"
    assert rows.index(escapes[0]) > rows.index(stall_rows[0])
    assert (len(rows) - 1) * 0.5 <= 20 + 0.5, "ends within stuck_seconds of the last change"


def test_a_way_out_refused_for_a_passing_reason_is_tried_again_and_ends_the_stall(monkeypatch):
    # the one way out off a popup over the game over meets the game's "busy" refusal once: it
    # must be tried again, or the session ends stuck
    clock = Clock(monkeypatch)
    d = Driver(stuck_seconds=20)
    st = sample("overlay")
    answers = iter([("rejected", "Action rejected: the game is busy"), ("accepted", None)])
    escapes = []
    for _ in range(80):
        p = d.see(st)
        if p.wish == "execute":
            escapes.append(p.action)
            d.answer(*next(answers))
        if p.wish == "stop" or len(escapes) == 2:
            break
        clock.advance(0.5)
    assert escapes == ["proceed", "proceed"], "tried again after the busy refusal, before any stop"


def test_a_state_that_keeps_changing_with_nothing_accepted_still_ends_stuck(monkeypatch):
    clock = Clock(monkeypatch)
    d = Driver(stuck_seconds=20)
    st = sample("overlay")
    for n in range(200):  # a field moves on every read; the policy can only wait
        st["overlay"]["message"] = f"An overlay is active ({n})."
        p = d.see(st)
        if p.wish == "execute":
            d.answer("rejected", "No proceed button available or enabled")
        if p.wish == "stop":
            break
        clock.advance(0.5)
    assert p.wish == "stop" and p.reason == "stuck"
    assert 40 <= n * 0.5 <= 41, "counted from the session's last accepted action: 2 x stuck_seconds"
    assert [r["action"] for r in d.rows if r.get("escape")] == ["proceed"]


def test_dry_runs_never_stall():
    d = Driver(dry_run=True)
    st = sample("overlay")
    assert all(d.see(st).wish == "wait" for _ in range(40))


def test_a_mid_run_popup_is_dismissed_and_the_pending_action_survives_it():
    d = Driver()
    st = sample("shop")
    assert d.play(st).action == "shop_purchase"
    popup = d.play(sample("menu__popup"))
    assert popup.action == "menu_select" and popup.extra["popup_screen"] == "popup"
    assert d.policy.ctx.pending.action == "shop_purchase", "the run's pending action is kept"
    p = d.see(st)  # back in the shop, the purchase still shows nothing: no second purchase
    assert p.wish == "suppressed" and p.action == "shop_purchase"


def test_a_tutorial_mid_selection_keeps_the_toggles():
    d = Driver()
    up = sample("card_select__upgrade")
    d.play(up)
    d.play(sample("menu__tutorial"))
    assert d.policy.ctx.toggles == {0} and d.policy.ctx.flow == "card_select:upgrade"
    assert d.see(up).parameters == {"index": 1}, "the accepted toggle stays reserved"


def test_joining_mid_run_is_said_once_with_the_run_identity():
    d = Driver()
    ident = {"status": "ok", "run_id": "r-7", "seed": "S"}
    p = d.see(sample("map"), run_identity=ident)
    assert p.extra["session_join"] == {"how": "in_run", "screen": "map", "act": 1, "floor": 3, "run_id": "r-7"}
    assert p.extra["run_id"] == "r-7"
    assert "session_join" not in d.see(sample("map")).extra
    later = d.see(sample("menu__main_saved_run"))  # once per session, whatever the rules claim
    assert later.parameters == {"option": "continue"} and "session_join" not in later.extra


def test_joining_through_continue_on_a_saved_run():
    d = Driver()
    p = d.see(sample("menu__main_saved_run"))
    assert p.parameters == {"option": "continue"} and p.extra["session_join"]["how"] == "continue_saved_run"
    assert "session_join" not in Driver().see(sample("menu__main")).extra


def test_the_supervisor_names_the_screen_and_the_last_refusals_of_a_stuck_session():
    w = StreamWatch(None)
    seq = iter(range(1, 100))

    def feed(**row):
        return w.feed({"sequence": next(seq), **row})

    feed(event="observation", observation_id="o-1", step=1, state_type="rest_site")
    feed(event="proposal", proposal_id="p-1", observation_id="o-1", action="proceed", parameters={})
    feed(
        event="action_attempt",
        attempt_id="a-1",
        proposal_id="p-1",
        observation_id="o-1",
        action="proceed",
        parameters={},
    )
    feed(
        event="action_result",
        attempt_id="a-1",
        outcome="rejected",
        http_status=200,
        response={"status": "error", "error": "No proceed button available or enabled"},
    )
    assert w.stuck_line() == (
        "stuck on screen rest_site; last refusals: proceed -> No proceed button available or enabled"
    )
    feed(
        event="proposal",
        proposal_id="p-2",
        observation_id="o-1",
        action=None,
        parameters={},
        stall={"screen": "card_select:upgrade"},
    )
    assert w.stuck_line().startswith("stuck on screen card_select:upgrade;")


def test_a_popup_over_the_game_over_is_left_by_the_option_the_refusal_names(monkeypatch):
    # McpMod.Actions.cs ExecuteMenuSelect routes a visible game-over screen before any popup,
    # while BuildGameState shows the popup (Helpers.cs BuildVisiblePopupState): the popup's
    # own options are refused "Unknown game over option: X. Use: main_menu".
    clock = Clock(monkeypatch)
    d = Driver(stuck_seconds=20)
    st = sample("menu__popup")
    sent = []
    for _ in range(80):
        p = d.see(st)
        if p.wish == "stop":
            break
        if p.wish == "execute":
            sent.append(p.parameters.get("option"))
            if p.parameters.get("option") == "main_menu":
                d.answer("accepted")
                break
            d.answer("rejected", f"Unknown game over option: {p.parameters.get('option')}. Use: main_menu")
        clock.advance(0.5)
    assert sent[-1] == "main_menu", sent
    assert d.rows[-1].get("escape") and "named by the game's refusal" in d.rows[-1]["reason"]
    assert set(sent[:-1]) <= {o["name"] for o in st["options"]}, "the advertised options first"


def test_an_accepted_way_out_ends_the_refusals_so_the_same_looking_popup_is_answered_again(monkeypatch):
    # After main_menu leaves the game over under the popup, the popup reads the same but its
    # options now reach ExecutePopupOption: they must be tried again, not remembered as refused.
    clock = Clock(monkeypatch)
    d = Driver(stuck_seconds=20)
    st = sample("menu__popup")
    left_game_over = False
    for _ in range(120):
        p = d.see(st)
        assert p.wish != "stop", d.rows[-1].get("stuck_on")
        if p.wish == "execute":
            option = p.parameters.get("option")
            if option == "main_menu":
                left_game_over = True
                d.answer("accepted")
            elif left_game_over:
                d.answer("accepted")
                break
            else:
                d.answer("rejected", f"Unknown game over option: {option}. Use: main_menu")
        clock.advance(0.5)
    assert left_game_over and d.rows[-1]["parameters"]["option"] in {o["name"] for o in st["options"]}


def test_a_popup_option_swallowed_by_a_game_over_beneath_works_after_main_menu(monkeypatch):
    # The campaign's seed 13: "ignore" was accepted, then the player died under the popup, so
    # the queued dismissal was dropped (ExecuteMenuSelect now routes to the game over) and the
    # popup stayed. Released without effect, "ignore" became futile; main_menu (named by the
    # refusal) left the game over, and the same-looking popup must then be answered again.
    clock = Clock(monkeypatch)
    d = Driver(stuck_seconds=20)
    st = sample("menu__popup", options=[{"name": "ignore", "enabled": True}])  # its only option
    game_over_beneath, sent = False, []
    for _ in range(400):
        p = d.see(st)
        assert p.wish != "stop", d.rows[-1].get("stuck_on")
        if p.wish == "execute":
            option = p.parameters["option"]
            sent.append(option)
            if option == "main_menu":
                game_over_beneath = False
                d.answer("accepted")
            elif game_over_beneath:
                d.answer("rejected", f"Unknown game over option: {option}. Use: main_menu")
            elif len(sent) == 1:
                d.answer("accepted")  # accepted, then swallowed: the game over came beneath
                game_over_beneath = True
            else:
                d.answer("accepted")
                break
        clock.advance(0.05)
    assert "main_menu" in sent and sent[-1] != "main_menu", sent


def test_popups_coming_and_going_do_not_hide_a_screen_that_never_moves(monkeypatch):
    # The campaign's seed 11: a "Combat ended. Waiting for rewards..." read that never moved,
    # with a popup every few seconds (each dismissed, each a "change"): 3,689 reads, no stall.
    clock = Clock(monkeypatch)
    d = Driver(stuck_seconds=20)
    ended = sample("monster__combat_ended")
    popup = sample("menu__popup", options=[{"name": "ok", "enabled": True}])
    seen = 0.0
    for n in range(2000):
        p = d.see(popup if n % 10 == 9 else ended)
        if p.wish == "stop":
            break
        if p.wish == "execute":
            d.answer("accepted")
        clock.advance(0.1)
        seen += 0.1
    assert p.wish == "stop" and p.reason == "stuck", "popups must not count as progress"
    assert d.rows[-1]["stall"]["screen"].startswith("monster")
    assert seen <= 20 + 1, f"stopped after {seen:.0f}s: stuck_seconds from the last real change"
