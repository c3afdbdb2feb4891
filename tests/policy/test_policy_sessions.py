"""The policy in whole-process sessions against the built-in game (hostile knobs on)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys

import pytest

from tests.harness import REPO, kill, wait_for

pytestmark = pytest.mark.timeout(180)
HOSTILE = os.path.join(REPO, "run", "profiles", "hostile.yaml")
GUARDED = {
    "select_card",
    "shop_purchase",
    "crystal_sphere_click_cell",
    "select_bundle",
    "combat_select_card",
    "claim_treasure_relic",
    "choose_rest_option",
}


def test_several_runs_with_every_hostile_knob_and_no_duplicated_guarded_action(session_factory):
    s = session_factory("game.knobs.replace_run_after_actions=30", profile=HOSTILE, args=("--max-steps", "300"))
    assert s.wait(170) == 0, s.stderr
    stats = s.game_stats()
    assert stats["duplicate_guarded_actions"] == 0
    assert stats["intent_violations"] == [] and stats["posts"] == len(s.events("action_attempt"))
    assert stats["runs_started"] >= 2, "the same-seed replacement starts a second run"
    assert s.events("run_identity_changed") and s.events("run_identity_unavailable")
    results = s.events("action_result")
    assert any(r["outcome"] == "rejected" for r in results), "reject_every_nth is on"


def test_policy_killed_after_guarded_actions_rebuilds_and_never_repeats_them(session_factory):
    s = session_factory("game.seed=2", "game.knobs={effect_delay_reads: 2, slow_confirm_reads: 2}")
    kills = 0
    for _ in range(2):
        seen = len(s.events("action_result"))

        def guarded_result():
            rows = s.rows()
            props = {r["proposal_id"]: r for r in rows if r["event"] == "proposal"}
            atts = {r["attempt_id"]: r for r in rows if r["event"] == "action_attempt"}
            res = [r for r in rows if r["event"] == "action_result"][seen:]
            return any(
                props[atts[r["attempt_id"]]["proposal_id"]]["action"] in GUARDED and r["outcome"] == "accepted"
                for r in res
            )

        if s.proc.poll() is not None:
            break
        wait_for(lambda: guarded_result() or s.proc.poll() is not None, 120, "a guarded action")
        if s.proc.poll() is None:
            kill(s.actor_pid("policy"))  # while its evidence is still pending (delayed effects)
            kills += 1
            wait_for(
                lambda: (
                    len([r for r in s.events("actor_start") if r["actor"] == "policy"]) > kills
                    or s.proc.poll() is not None
                ),
                60,
                "the policy restart",
            )
    done = len(s.events("action_result"))
    wait_for(
        lambda: len(s.events("action_result")) >= done + 30 or s.proc.poll() is not None,
        120,
        "thirty more results after the last restart",
    )
    s.signal(signal.SIGTERM)
    assert s.wait(120) in (0, 143), s.stderr
    assert kills >= 2
    assert s.game_stats()["duplicate_guarded_actions"] == 0
    assert s.summary()["actor_restarts"]["policy"] == kills
    props = [r["observation_id"] for r in s.events("proposal")]
    assert len(props) == len(set(props)), "one proposal per observation, also across restarts"


def test_a_same_seed_run_replacement_stops_before_acting_in_the_new_run(session_factory):
    s = session_factory("game.knobs={replace_run_after_actions: 25}", "session.stop_on_run_end=true")
    assert s.wait(170) == 0, s.stderr
    rows = s.rows()
    assert s.summary()["reason"] == "run_changed"
    changed = [i for i, r in enumerate(rows) if r["event"] == "run_identity_changed" and r["previous_run_id"]]
    assert changed, "the replacement run's id was reported"
    after = rows[changed[0] :]
    assert not [r for r in after if r["event"] == "action_attempt"], "no action in the new run"
    stop = [r for r in after if r["event"] == "proposal_status"][-1]
    assert stop["status"] == "session_stopped" and stop["stop_reason"] == "run_changed"


def test_identity_outages_give_null_run_ids_in_decision_rows(session_factory):
    s = session_factory("game.knobs={identity_outage_every: 3}", args=("--max-steps", "80"))
    assert s.wait(120) == 0, s.stderr
    obs = {r["observation_id"]: r for r in s.events("observation")}
    props = s.events("proposal")
    out = [p for p in props if (obs[p["observation_id"]].get("run_identity") or {}).get("status") == "error"]
    ok = [p for p in props if (obs[p["observation_id"]].get("run_identity") or {}).get("status") == "ok"]
    assert out and ok
    assert all(p["run_id"] is None for p in out) and all(p["run_id"] for p in ok)
    with open(os.path.join(s.capture, "decisions.jsonl"), encoding="utf-8") as fh:
        decide = [json.loads(line) for line in fh]
    assert {d["proposal_id"] for d in decide} <= {p["proposal_id"] for p in props}
    assert any(d["run_id"] is None for d in decide) and any(d["run_id"] for d in decide)
    assert len(s.events("run_identity_unavailable")) >= len(out)


def test_dry_run_consumes_nothing_and_previews_feed_no_suppression(session_factory):
    s = session_factory(args=("--dry-run", "--max-steps", "12"))
    assert s.wait(120) == 0, s.stderr
    props = s.events("proposal")
    assert [r["status"] for r in s.events("proposal_status")] == ["dry_run"] * 12
    # nothing was executed, so the same screen gets the same preview every time
    assert len({(p["action"], json.dumps(p["parameters"])) for p in props}) == 1
    assert s.events("action_attempt") == [] and s.game_stats()["posts"] == 0


def test_the_documented_example_policy_plays_a_run_to_game_over(session_factory):
    s = session_factory("policy.module=actors.policy.example_first_choice")
    assert s.wait(120) == 0, s.stderr
    assert s.summary()["reason"] == "run_ended"
    assert {p["source"] for p in s.events("proposal")} == {"policy"}


def test_audit_replays_a_capture_and_reports_exceptions(session_factory):
    s = session_factory(args=("--max-steps", "40"))
    assert s.wait(120) == 0, s.stderr

    def run(*a):
        return subprocess.run(
            [sys.executable, "-m", "supervisor", "capture", "audit", *a],
            cwd=REPO,
            capture_output=True,
            text=True,
            timeout=60,
        )

    ok = run(s.capture, "--json")
    assert ok.returncode == 0, ok.stderr
    report = json.loads(ok.stdout)["sessions"][0]
    assert report["observations"] == 40 and report["exceptions"] == [] and report["divergences"] == 0
    assert sum(sum(v.values()) for v in report["by_screen"].values()) == 40
    bad = run(s.session_dir, "--policy", "tests.policy.broken_policy:BrokenOnMaps")
    assert bad.returncode == 1 and "cannot read maps" in bad.stdout and "EXCEPTION" in bad.stdout
    assert run(os.path.join(s.capture, "nope")).returncode == 2
