"""The built-in policy in whole-process sessions against the built-in game: joining a game in
progress, popups and tutorials mid-run, and a stall that ends ``stuck`` with a last line that
says where. Real ``supervisor start`` processes (run sparingly: each is a few seconds).
"""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.timeout(180)


def test_a_session_started_inside_a_run_plays_on_and_says_it_joined(session_factory):
    s = session_factory("game.knobs={start_in_run: 1, start_floor: 2}", args=("--max-steps", "60"))
    assert s.wait(120) == 0, s.stderr
    props = s.events("proposal")
    joins = [p for p in props if "session_join" in p]
    assert len(joins) == 1 and joins[0]["session_join"]["how"] == "in_run"
    assert joins[0]["observation_id"] == props[0]["observation_id"], "said on the first decision"
    assert any(p["run_id"] for p in props), "the run's identity is picked up"
    results = s.events("action_result")
    assert sum(r["outcome"] == "accepted" for r in results) >= 20, "it plays on"


def test_a_main_menu_with_a_saved_run_is_continued(session_factory):
    s = session_factory("game.knobs={start_saved_run: 1}", args=("--max-steps", "40"))
    assert s.wait(120) == 0, s.stderr
    props = s.events("proposal")
    assert props[0]["action"] == "menu_select" and props[0]["parameters"] == {"option": "continue"}
    assert props[0]["session_join"]["how"] == "continue_saved_run"
    assert [p for p in props if "session_join" in p] == [props[0]]
    obs = s.events("observation")
    assert any(o["state_type"] not in ("menu", "unknown") for o in obs[1:]), "the saved run goes on"
    assert props[0]["run_id"] is None and props[0]["session_join"]["run_id"] is None, "not known yet"
    assert any(p["run_id"] for p in props[1:]), "the continued run's identity is picked up"


def test_popups_and_tutorials_mid_run_are_dismissed_and_the_run_ends(session_factory):
    s = session_factory(
        "game.knobs={popup_every_reads: 9, ftue_unready_reads: 2}",
        "policy.settings={tutorials: true}",
        "session.stop_on_run_end=true",
    )
    assert s.wait(170) == 0, s.stderr
    assert s.summary()["reason"] == "run_ended"
    stats = s.game_stats()
    assert stats["duplicate_guarded_actions"] == 0 and stats["intent_violations"] == []
    popups = [p for p in s.events("proposal") if p.get("popup_screen")]
    assert {p["popup_screen"] for p in popups} >= {"popup", "tutorial", "tutorial_prompt"}
    assert not [r for r in s.events("action_result") if "Blocking popup active" in str(r.get("response"))]


def test_a_stall_is_journalled_then_ends_stuck_within_stuck_seconds_naming_the_screen(session_factory):
    s = session_factory(
        "game.knobs={ftue_unready_reads: 1000000}", "policy.settings={tutorials: true}", "session.stuck_seconds=6"
    )
    assert s.wait(120) == 1, s.stderr
    assert s.summary()["reason"] == "stuck"
    last = s.stderr.strip().splitlines()[-1]
    assert last == "stuck on screen menu:tutorial; last refusals: none", s.stderr[-2000:]
    props = s.events("proposal")
    status = {r["proposal_id"]: r for r in s.events("proposal_status")}
    stall = [p for p in props if "stall" in p]
    assert status[stall[0]["proposal_id"]]["status"] == "wait" and stall[0]["stall"]["screen"] == "menu:tutorial"
    stop = status[props[-1]["proposal_id"]]
    assert stop["status"] == "session_stopped" and stop["stop_reason"] == "stuck" and len(stall) >= 2
    assert props[-1]["stall"]["seconds"] <= 6 + 1, "ends within session.stuck_seconds of the last change"
