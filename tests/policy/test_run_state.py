"""RunContext: run identity and card evidence with its provenance and discard rules."""

from __future__ import annotations

from actors.policy.context import PolicyContext
from actors.policy.run_state import RunContext


def ok(rid, seed="S1"):
    return {"status": "ok", "run_id": rid, "seed": seed}


def combat(act=1, floor=3):
    return {
        "state_type": "monster",
        "run": {"act": act, "floor": floor},
        "player": {
            "hand": [{"name": "Strike"}],
            "draw_pile": [{"name": "Defend"}, {"name": "Wound"}],
            "discard_pile": [],
            "exhaust_pile": [],
        },
        "battle": {"enemies": []},
    }


def make(stop=True):
    pc = PolicyContext()
    return pc, RunContext(pc, stop)


def test_evidence_needs_a_reported_run_id_and_carries_full_provenance():
    pc, rc = make()
    rc.observe(combat(), {"step": 4})
    assert rc.evidence is None, "no run id, no evidence"
    rc.observe(combat(), {"step": 5, "run_identity": ok("r1")})
    ev = rc.evidence
    assert ev["source"] == "combat_piles" and ev["run_id"] == "r1" and ev["observed_step"] == 5
    assert (ev["act"], ev["floor"]) == (1, 3) and ev["persistent_deck"] is False
    assert ev["piles_present"] == ["hand", "draw_pile", "discard_pile", "exhaust_pile"]
    assert ev["freshness"] == "observed_combat_piles"
    assert ev["card_counts"] == {"Defend": 1, "Strike": 1, "Wound": 1}, "temporary cards are kept"
    fields = rc.decision_fields()
    assert fields["run_id"] == "r1" and fields["run_seed"] == "S1"
    assert fields["deck_provenance"]["source"] == "combat_piles"


def test_evidence_is_historical_in_the_rewards_of_the_same_room_and_dies_on_a_room_change():
    pc, rc = make()
    rc.observe(combat(), {"step": 1, "run_identity": ok("r1")})
    rc.observe({"state_type": "rewards", "run": {"act": 1, "floor": 3}}, {"step": 2, "run_identity": ok("r1")})
    assert rc.evidence["freshness"] == "historical_combat_piles"
    rc.observe({"state_type": "map", "run": {"act": 1, "floor": 4}}, {"step": 3, "run_identity": ok("r1")})
    assert rc.evidence is None


def test_missing_room_coordinates_discard_evidence():
    pc, rc = make()
    rc.observe(combat(), {"step": 1, "run_identity": ok("r1")})
    rc.observe({"state_type": "rewards"}, {"step": 2})
    assert rc.evidence is None


def test_an_identity_outage_discards_evidence_keeps_guards_and_nulls_the_decision_run_id():
    pc, rc = make()
    rc.observe(combat(), {"step": 1, "run_identity": ok("r1")})
    pc.toggles.add(3)
    rc.observe(combat(), {"step": 2, "run_identity": {"status": "error", "error": "HTTP 500"}})
    assert rc.evidence is None and pc.toggles == {3}
    assert rc.decision_fields()["run_id"] is None
    assert rc.last_known_run_id == "r1", "the last known id is kept privately"


def test_a_new_run_id_resets_memory_and_stops_with_run_changed():
    pc, rc = make(stop=True)
    rc.observe(combat(), {"step": 1, "run_identity": ok("r1")})
    pc.toggles.add(1)
    pc.rejections["x"] = 2
    rc.observe(combat(), {"step": 2, "run_identity": {"status": "missing", "reason": "parse_error"}})
    rc.observe(combat(), {"step": 3, "run_identity": ok("r2")})
    assert pc.toggles == set() and pc.rejections == {} and rc.evidence is not None
    assert rc.evidence["run_id"] == "r2" and rc.stop_reason == "run_changed"


def test_without_stop_on_run_end_a_new_run_is_played():
    pc, rc = make(stop=False)
    rc.observe(combat(), {"step": 1, "run_identity": ok("r1")})
    rc.observe(combat(), {"step": 2, "run_identity": ok("r2")})
    assert rc.stop_reason is None and rc.changes == 1


def test_menu_and_game_over_clear_run_evidence_and_a_later_run_is_not_a_replacement():
    pc, rc = make(stop=True)
    rc.observe(combat(), {"step": 1, "run_identity": ok("r1")})
    rc.observe({"state_type": "game_over"}, {"step": 2})
    assert rc.evidence is None and rc.decision_fields()["run_id"] is None
    rc.observe(combat(), {"step": 3, "run_identity": ok("r2")})
    assert rc.stop_reason is None


def test_accepted_non_combat_actions_discard_evidence_except_opening_or_skipping_a_card_reward():
    pc, rc = make()
    rc.observe(combat(), {"step": 1, "run_identity": ok("r1")})
    rc.record_result(
        {"action": "claim_reward", "reward_type": "card", "state_type": "rewards"}, {"outcome": "accepted"}
    )
    rc.record_result({"action": "skip_card_reward", "state_type": "card_reward"}, {"outcome": "accepted"})
    assert rc.evidence is not None
    rc.record_result(
        {"action": "claim_reward", "reward_type": "gold", "state_type": "rewards"}, {"outcome": "rejected"}
    )
    assert rc.evidence is not None, "a rejected request discards nothing"
    rc.record_result(
        {"action": "claim_reward", "reward_type": "gold", "state_type": "rewards"}, {"outcome": "accepted"}
    )
    assert rc.evidence is None
