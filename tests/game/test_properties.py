"""Property test: random valid action sequences never crash the game or break its
invariants (hp ≤ max_hp, energy ≥ 0, indices in range, unique entity ids)."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from actors.game.http import start_server
from actors.game.knobs import Knobs

from .conftest import SP, http_client

KNOB_SETS = [
    Knobs(),
    Knobs(waiting_reads=1, enemy_turn_reads=1),
    Knobs(effect_delay_reads=1, overlay_linger_reads=1, reject_every_nth=5),
]


def candidates(state: dict) -> list[dict]:
    """Plausible (well-typed) actions for a state; some may be refused — that is fine."""
    st_ = state["state_type"]
    out: list[dict] = [{"action": "proceed"}]
    block = state.get(st_) if isinstance(state.get(st_), dict) else {}
    if st_ == "menu":  # menu fields are at the top level; "quit" would close the server
        names = [o if isinstance(o, str) else o["name"] for o in state.get("options", [])]
        names = [n for n in names if n != "quit"]
        names += [c["id"] for c in state.get("characters", [])]
        out += [{"action": "menu_select", "option": n} for n in names]
    if "player" in state:  # potions work (or are refused) on every in-run screen
        out += [
            {"action": a, "slot": pot["slot"]}
            for pot in state["player"]["potions"]
            for a in ("use_potion", "discard_potion")
        ]
    if st_ in ("monster", "elite", "boss") and "battle" in state:
        out += combat_candidates(state)
    elif st_ == "hand_select":
        out += [{"action": "combat_select_card", "card_index": c["index"]} for c in block["cards"]] + [
            {"action": "combat_confirm_selection"}
        ]
    elif st_ == "fake_merchant":
        out += [{"action": "shop_purchase", "index": i["index"]} for i in block["shop"]["items"]]
    elif st_ == "event":
        out += [{"action": "advance_dialogue"}]
        out += [{"action": "choose_event_option", "index": o["index"]} for o in block["options"]]
    elif st_ == "map":
        out += [{"action": "choose_map_node", "index": o["index"]} for o in block["next_options"]]
    elif st_ == "rewards":
        out += [{"action": "claim_reward", "index": i["index"]} for i in block["items"]]
    elif st_ == "card_reward":
        out += [{"action": "select_card_reward", "card_index": c["index"]} for c in block["cards"]] + [
            {"action": "skip_card_reward"}
        ]
    elif st_ == "card_select":
        out += [{"action": "select_card", "index": c["index"]} for c in block["cards"]]
        out += [{"action": "confirm_selection"}, {"action": "cancel_selection"}]
    elif st_ == "bundle_select":
        out += [{"action": "select_bundle", "index": b["index"]} for b in block["bundles"]]
        out += [{"action": "confirm_bundle_selection"}, {"action": "cancel_bundle_selection"}]
    elif st_ == "relic_select":
        out += [{"action": "select_relic", "index": r["index"]} for r in block["relics"]]
        out += [{"action": "skip_relic_selection"}]
    elif st_ == "crystal_sphere":
        out += [{"action": "crystal_sphere_click_cell", "x": c["x"], "y": c["y"]} for c in block["clickable_cells"]][:6]
        out += [{"action": "crystal_sphere_set_tool", "tool": t} for t in ("big", "small")]
        out += [{"action": "crystal_sphere_proceed"}]
    elif st_ == "shop":
        out += [{"action": "shop_purchase", "index": i["index"]} for i in block["items"]]
    elif st_ == "rest_site":
        out += [{"action": "choose_rest_option", "index": o["index"]} for o in block["options"]]
    elif st_ == "treasure":
        out += [{"action": "claim_treasure_relic", "index": 0}]
    elif st_ == "game_over":
        out += [{"action": "menu_select", "option": "main_menu"}]
    return out


def combat_candidates(state: dict) -> list[dict]:
    p = state["player"]
    ids = [e["entity_id"] for e in state["battle"]["enemies"]]
    out: list[dict] = [{"action": "end_turn"}] * 2
    for c in p["hand"]:
        out += [{"action": "play_card", "card_index": c["index"], "target": t} for t in ids[:2]] + [
            {"action": "play_card", "card_index": c["index"]}
        ]
    for pot in p["potions"]:
        out += [
            {"action": "use_potion", "slot": pot["slot"], "target": ids[0]},
            {"action": "discard_potion", "slot": pot["slot"]},
        ]
    return out


def check_invariants(state: dict) -> None:
    p = state.get("player")
    if p is not None:
        assert 0 <= p["hp"] <= p["max_hp"], p
        assert p["gold"] >= 0
        assert len(p["potions"]) <= p["max_potion_slots"]
        if "energy" in p:
            assert p["energy"] >= 0
            assert [c["index"] for c in p["hand"]] == list(range(len(p["hand"])))
            assert p["draw_pile_count"] == len(p["draw_pile"])
    st_ = state["state_type"]
    if st_ in ("monster", "elite", "boss") and "battle" not in state:  # combat ended
        assert state["message"] == "Combat ended. Waiting for rewards..."
        assert "energy" not in state["player"]
    if st_ in ("monster", "elite", "boss") and "battle" in state:
        ids = [e["entity_id"] for e in state["battle"]["enemies"]]
        assert len(ids) == len(set(ids)) and ids
        assert all(0 < e["hp"] <= e["max_hp"] for e in state["battle"]["enemies"])
    for key in ("items", "cards", "options", "next_options", "bundles", "relics"):
        block = state.get(st_)
        if isinstance(block, dict) and isinstance(block.get(key), list):
            idx = [x["index"] for x in block[key] if isinstance(x, dict) and "index" in x]
            assert idx == list(range(len(idx))), (st_, key, idx)


@pytest.mark.timeout(60)
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(
    seed=st.integers(1, 6),
    knobs=st.sampled_from(KNOB_SETS),
    picks=st.lists(st.integers(0, 10_000), min_size=20, max_size=80),
)
def test_random_valid_actions_keep_invariants(seed, knobs, picks):
    srv = start_server("127.0.0.1", 0, seed, knobs)
    try:
        with http_client(srv.url) as c:
            for step, pick in enumerate(picks):
                if step % 10 == 9:
                    md = c.get(SP, params={"format": "markdown"})
                    assert md.status_code == 200 and md.text.startswith("# ")
                reply = c.get(SP)
                assert reply.status_code == 200, reply.text
                state = reply.json()
                check_invariants(state)
                options = candidates(state)
                body = options[pick % len(options)]
                result = c.post(SP, json=body)
                assert result.status_code == 200, (body, result.text)
                assert result.json()["status"] in ("ok", "error")
    finally:
        srv.shutdown()
