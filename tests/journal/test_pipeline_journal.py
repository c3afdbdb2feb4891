"""What real sessions record: layout, common fields, links, dispositions, rejections, dry
runs, concurrent writers of one capture root, and injected recorder failures.

Every session here is a real ``supervisor start`` against the built-in game (real HTTP).
"""

from __future__ import annotations

import json
import os
import re

import pytest

from protocol.journal import COMMON_FIELDS

from .conftest import read_rows, verify

pytestmark = pytest.mark.timeout(120)

SESSION_ID = re.compile(r"^\d{8}T\d{6}Z-[0-9a-f]{32}$")


def _feed(root: str, name: str) -> list[dict]:
    with open(os.path.join(root, name), "rb") as fh:
        data = fh.read()
    assert data.endswith(b"\n")
    return [json.loads(line) for line in data.split(b"\n")[:-1]]


def _summary(session_dir: str) -> dict:
    with open(os.path.join(session_dir, "session.json")) as fh:
        return json.load(fh)


def _game_stats(rows: list[dict]) -> dict:
    return [r for r in rows if r["event"] == "builtin_game_stats"][-1]["stats"]


def test_layout_and_session_identity(demo_captures):
    ran = demo_captures.normal
    sid = os.path.basename(ran.session_dir)
    assert SESSION_ID.match(sid)
    assert sid != os.path.basename(demo_captures.dry_run.session_dir)
    assert {"decisions.jsonl", "sessions.jsonl", "sessions"} <= set(os.listdir(ran.root))
    assert {"events.jsonl", "session.json", "observations"} <= set(os.listdir(ran.session_dir))
    obs = [r for r in read_rows(ran.session_dir) if r["event"] == "observation"]
    assert [r["path"] for r in obs] == [f"sessions/{sid}/observations/{i:06d}.json" for i in range(1, len(obs) + 1)]


def test_every_row_has_the_common_fields_and_sequences_from_1(demo_captures):
    sd = demo_captures.normal.session_dir
    rows = read_rows(sd)
    for row in rows:
        assert set(COMMON_FIELDS) <= set(row), row
        assert row["schema_version"] == 1 and row["session"] == os.path.basename(sd)
        assert row["recorded_at"].endswith("Z")
    assert [r["sequence"] for r in rows] == list(range(1, len(rows) + 1))
    assert rows[0]["event"] == "session_start"
    assert rows[-1]["event"] == "session_end"
    first_obs = next(i for i, r in enumerate(rows) if r["event"] == "observation")
    assert first_obs > 0
    assert not any({"success", "succeeded"} & set(r) for r in rows)


def test_observation_files_hold_the_parsed_state_and_hash_to_their_rows(demo_captures):
    ran = demo_captures.normal
    import hashlib

    for row in [r for r in read_rows(ran.session_dir) if r["event"] == "observation"]:
        with open(os.path.join(ran.root, row["path"]), "rb") as fh:
            data = fh.read()
        assert hashlib.sha256(data).hexdigest() == row["sha256"]
        state = json.loads(data)
        assert isinstance(state, dict) and state.get("state_type") == row["state_type"]
        assert row["step"] == int(row["observation_id"][2:])


def test_observation_rows_carry_the_runs_progress_as_their_files_show_it(demo_captures):
    ran = demo_captures.normal
    seen = 0
    for row in [r for r in read_rows(ran.session_dir) if r["event"] == "observation"]:
        with open(os.path.join(ran.root, row["path"]), "rb") as fh:
            state = json.loads(fh.read())
        run, player = state.get("run") or {}, state.get("player") or {}
        want = {
            "act": run.get("act"),
            "floor": run.get("floor"),
            "hp": player.get("hp"),
            "max_hp": player.get("max_hp"),
            "gold": player.get("gold"),
        }
        if isinstance(player.get("hand"), list) and "draw_pile_count" in player:
            want["deck"] = (
                len(player["hand"])
                + player["draw_pile_count"]
                + player["discard_pile_count"]
                + player["exhaust_pile_count"]
            )
        want = {k: v for k, v in want.items() if v is not None}
        assert row.get("progress") == (want or None), (row, want)
        seen += "deck" in want
    assert seen >= 5


def test_after_attempt_id_is_on_the_first_successful_read_after_an_attempt_only(demo_captures):
    rows = read_rows(demo_captures.normal.session_dir)
    awaiting, carried = None, 0
    for row in rows:
        if row["event"] == "action_attempt":
            awaiting = row["attempt_id"]
        elif row["event"] == "observation":
            assert row.get("after_attempt_id") == awaiting, row
            carried += awaiting is not None
            awaiting = None
    assert carried >= 10
    end = rows[-1]
    assert end["awaiting_observation_after_attempt"] == ([awaiting] if awaiting else [])


def _check_links(rows: list[dict]) -> tuple[dict, dict]:
    """Assert every key resolves backwards; return proposals (with _status) and attempts."""
    observations, proposals, attempts = set(), {}, {}
    for row in rows:
        ev = row["event"]
        if ev == "observation":
            observations.add(row["observation_id"])
        elif ev == "proposal":
            assert row["observation_id"] in observations
            proposals[row["proposal_id"]] = dict(row)
        elif ev == "proposal_status":
            assert row["proposal_id"] in proposals
            proposals[row["proposal_id"]]["_status"] = row["status"]
        elif ev == "action_attempt":
            prop = proposals[row["proposal_id"]]
            assert prop["_status"] == "execute"
            assert row["observation_id"] == prop["observation_id"]
            attempts[row["attempt_id"]] = row
        elif ev == "action_result":
            assert row["attempt_id"] in attempts
            assert row["outcome"] in ("accepted", "rejected", "unknown")
    return proposals, attempts


def test_links_resolve_backwards_and_waits_have_no_attempt(demo_captures):
    rows = read_rows(demo_captures.normal.session_dir)
    proposals, attempts = _check_links(rows)
    preflight = {r["observation_id"] for r in rows if r["event"] == "observation" and r["phase"] == "preflight"}
    linked = {a["observation_id"] for a in attempts.values()} & preflight
    results = {r["attempt_id"] for r in rows if r["event"] == "action_result"}
    assert linked, "no preflight action went through the recording path"
    assert all(a in results for a, att in attempts.items() if att["observation_id"] in linked)
    stats = _game_stats(rows)  # the game checks the intent row is on disk before each POST
    assert stats["posts"] == stats["posts_with_intent"] == len(attempts)
    proposals, attempts = _check_links(read_rows(demo_captures.rejecting.session_dir))
    waits = {p for p, row in proposals.items() if row["_status"] == "wait"}
    assert waits, "the rejecting session has no wait proposals"
    assert not waits & {a["proposal_id"] for a in attempts.values()}
    sid = os.path.basename(demo_captures.rejecting.session_dir)
    fed = {d["proposal_id"] for d in _feed(demo_captures.rejecting.root, "decisions.jsonl") if d["session"] == sid}
    assert fed and not fed & waits


def test_observation_error_names_the_last_successful_read_and_reads_stay_separate(demo_captures):
    rows = read_rows(demo_captures.rejecting.session_dir)
    last, errors = None, 0
    for row in rows:
        if row["event"] == "observation":
            last = row["observation_id"]
        elif row["event"] == "observation_error":
            errors += 1
            assert row["last_observation_id"] == last
            assert row["error"]
    assert errors, "the game failed no state read"
    obs = [r for r in rows if r["event"] == "observation"]
    assert len(obs) == len({r["observation_id"] for r in obs})
    assert len({r["sha256"] for r in obs}) < len(obs), "no identical states were read twice"


def test_rejected_requests_are_attempts_with_a_result(demo_captures):
    ran = demo_captures.rejecting
    rows = read_rows(ran.session_dir)
    rejected = [r for r in rows if r["event"] == "action_result" and r["outcome"] == "rejected"]
    assert rejected
    attempts = {r["attempt_id"]: r for r in rows if r["event"] == "action_attempt"}
    for res in rejected:
        assert res["attempt_id"] in attempts and res["response"]
    assert _summary(ran.session_dir)["action_results"]["rejected"] == len(rejected)
    assert verify(ran.root)[0] == 0


def test_dry_run_has_proposals_and_previews_but_no_attempts(demo_captures):
    ran = demo_captures.dry_run
    rows = read_rows(ran.session_dir)
    statuses = [r["status"] for r in rows if r["event"] == "proposal_status"]
    assert statuses and set(statuses) <= {"dry_run", "wait", "suppressed", "session_stopped"}
    assert "dry_run" in statuses
    assert not [r for r in rows if r["event"] in ("action_attempt", "action_result")]
    assert rows[0]["dry_run"] is True and _summary(ran.session_dir)["dry_run"] is True
    sid = os.path.basename(ran.session_dir)
    decides = [d for d in _feed(ran.root, "decisions.jsonl") if d["session"] == sid]
    previews = [r["proposal_id"] for r in rows if r["event"] == "proposal_status" and r["status"] == "dry_run"]
    assert sorted(d["proposal_id"] for d in decides) == sorted(previews)
    assert {d["disposition"] for d in decides} == {"dry_run"}
    assert _game_stats(rows)["posts"] == 0


def test_decide_rows_carry_their_proposals_ids_once(demo_captures):
    ran = demo_captures.normal
    sid = os.path.basename(ran.session_dir)
    rows = read_rows(ran.session_dir)
    props = {r["proposal_id"]: r for r in rows if r["event"] == "proposal"}
    executed = {r["proposal_id"] for r in rows if r["event"] == "proposal_status" and r["status"] == "execute"}
    decides = [d for d in _feed(ran.root, "decisions.jsonl") if d["session"] == sid]
    assert sorted(d["proposal_id"] for d in decides) == sorted(executed)
    for d in decides:
        assert d["event"] == "decide"
        assert d["observation_id"] == props[d["proposal_id"]]["observation_id"]


def test_two_sessions_sharing_a_root_leave_whole_lines_in_the_feeds(demo_captures):
    normal, dry = demo_captures.normal, demo_captures.dry_run
    assert normal.root == dry.root
    decides = _feed(normal.root, "decisions.jsonl")  # every line parses: no partial lines
    spans = {}
    for sid in {os.path.basename(normal.session_dir), os.path.basename(dry.session_dir)}:
        times = sorted(d["recorded_at"] for d in decides if d["session"] == sid)
        assert times
        spans[sid] = (times[0], times[-1])
    (a0, a1), (b0, b1) = spans.values()
    assert a0 <= b1 and b0 <= a1, f"the two sessions did not write at the same time: {spans}"
    feed = _feed(normal.root, "sessions.jsonl")
    assert sorted(r["session"] for r in feed) == sorted(spans)
    for r in feed:
        assert r["recording_path"] == f"sessions/{r['session']}/events.jsonl"
        assert "outcome_files" in r
    code, report = verify(normal.root)
    assert code == 0 and report["session_verdicts"]["intact"] == 2


def test_recording_failure_before_the_acknowledgement_prevents_the_request(injected_captures):
    ran = injected_captures.before_post
    rows = read_rows(ran.session_dir)
    executes = [r for r in rows if r["event"] == "proposal_status" and r["status"] == "execute"]
    attempts = [r for r in rows if r["event"] == "action_attempt"]
    assert len(executes) == 2 and len(attempts) == 1
    stats = _game_stats(rows)
    assert stats["posts"] == 1 and stats["posts_with_intent"] == 1
    # whichever asks first, the recorder or the actuator, the session stops
    assert ran.exit_code != 0 and rows[-1]["reason"] in ("journal_failed", "intent_not_recorded")
    assert verify(ran.session_dir)[0] == 0


def test_recording_failure_after_the_post_stops_and_leaves_the_attempt_unresolved(injected_captures):
    ran = injected_captures.after_post
    rows = read_rows(ran.session_dir)
    attempts = [r["attempt_id"] for r in rows if r["event"] == "action_attempt"]
    results = [r["attempt_id"] for r in rows if r["event"] == "action_result"]
    assert attempts == ["a-000001", "a-000002"] and results == ["a-000001"]
    assert _game_stats(rows)["posts"] == 2
    end = rows[-1]
    # whichever asks first, the recorder or the actuator, the session stops
    assert end["event"] == "session_end"
    assert end["reason"] in ("journal_failed", "result_not_recorded") and end["exit_code"] != 0
    assert end["unresolved_attempts"] == ["a-000002"]
    assert _summary(ran.session_dir)["unresolved_attempts"] == ["a-000002"]
    assert _summary(ran.session_dir)["action_results"]["rejected"] == 0
    assert verify(ran.session_dir)[0] == 0
