"""The quick variant of ``bench/pipeline.py`` (the full run is a documented command,
docs/performance.md, the game path): its parts on a short real session — the pipeline's steps
read from the journal, the one-process baseline replaying that session on a fresh game,
seeing the same states and running the session's policy to the same decisions (and refusing
a journal whose decision its policy does not make), and the intent-acknowledgement probe
against a real recorder process timing both intent paths."""

from __future__ import annotations

import copy
import datetime
import json
import math
import os
import sys

import pytest

from protocol.journal import scan_file
from tests.harness import REPO

sys.path.insert(0, os.path.join(REPO, "bench"))  # bench/ is not a package
from ack_probe import AckProbe
from journal_diff import masked
from pipeline_baseline import DecisionMismatch, replay
from pipeline_sessions import run_one
from pipeline_steps import action_steps, stamp

pytestmark = pytest.mark.timeout(180)

STEPS = 40


@pytest.fixture(scope="module")
def session(tmp_path_factory):
    base = tmp_path_factory.mktemp("pipeline-bench")
    s, rss = run_one(str(base / "round"), os.path.join(REPO, "run", "profiles", "demo.yaml"), STEPS, 120)
    return base, s, rss


@pytest.fixture(scope="module")
def baseline(session):
    """The baseline's journal rows, replaying the session above."""
    base, s, _ = session
    return scan_file(replay(s.rows, str(base / "baseline"))).rows


def observation_rows(rows: list[dict]) -> list[dict]:
    return [r for r in rows if r["event"] == "observation"]


def of_kind(rows: list[dict], kind: str) -> list[dict]:
    return [r for r in rows if r["event"] == kind]


def decision(row: dict) -> dict:
    """A proposal row as two runs of the same decision write it (journal_diff's masking, and
    the proposal id, which the baseline draws afresh)."""
    return masked({k: v for k, v in row.items() if k not in ("proposal_id", "sequence")}, {})


def _at(row: dict) -> float:
    return (
        datetime.datetime.strptime(row["recorded_at"], "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=datetime.UTC).timestamp()
    )


def independent_steps(rows: list[dict]) -> list[str]:
    """The observations whose proposal was sent and whose attempt the next read names, found
    here from the ids alone (not with the bench's own walk)."""
    out, obs = [], [r for r in rows if r["event"] == "observation"]
    for o, nxt in zip(obs, obs[1:]):
        attempts = [
            r["attempt_id"]
            for r in rows
            if r["event"] == "action_attempt" and r["observation_id"] == o["observation_id"]
        ]
        results = {r["attempt_id"] for r in rows if r["event"] == "action_result"}
        if attempts and attempts[0] in results and nxt.get("after_attempt_id") == attempts[0]:
            out.append(o["observation_id"])
    return out


def independent_times(rows: list[dict]) -> dict[str, dict[str, float]]:
    """Stage times in ms per executed step from the rows' recorded_at."""
    out = {}
    obs = [r for r in rows if r["event"] == "observation"]
    for o, nxt in zip(obs, obs[1:]):
        prop = next((r for r in rows if r["event"] == "proposal" and r["observation_id"] == o["observation_id"]), None)
        att = prop and next(
            (r for r in rows if r["event"] == "action_attempt" and r["proposal_id"] == prop["proposal_id"]), None
        )
        res = att and next(
            (r for r in rows if r["event"] == "action_result" and r["attempt_id"] == att["attempt_id"]), None
        )
        if res is None or nxt.get("after_attempt_id") != att["attempt_id"]:
            continue
        t = [_at(x) for x in (o, prop, att, res, nxt)]
        out[o["observation_id"]] = {
            "obs_prop": (t[1] - t[0]) * 1e3,
            "prop_att": (t[2] - t[1]) * 1e3,
            "att_res": (t[3] - t[2]) * 1e3,
            "res_obs": (t[4] - t[3]) * 1e3,
            "total": (t[4] - t[0]) * 1e3,
        }
    return out


def test_the_pipeline_session_yields_executed_steps_with_every_stage(session):
    _, s, rss = session
    steps = action_steps(s.rows)
    assert s.code == 0 and len(observation_rows(s.rows)) == STEPS
    assert len(steps) >= STEPS // 2, "most demo steps execute an action"
    assert [st["observation_id"] for st in steps] == independent_steps(s.rows)
    by_obs = {st["observation_id"]: st for st in steps}
    for oid, times in independent_times(s.rows).items():  # each stage from the rows' own stamps
        st = by_obs[oid]
        for key, want in times.items():
            assert math.isclose(st[key], want, abs_tol=1e-6) and want >= 0, (oid, key, st[key], want)
    assert rss.peak > 0 and rss.samples


def test_the_baseline_replays_the_session_and_sees_its_states_byte_for_byte(session, baseline):
    _, s, _ = session
    rows = baseline
    mine, theirs = observation_rows(s.rows), observation_rows(rows)
    assert len(theirs) == len(mine)
    assert [r["sha256"] for r in theirs] == [r["sha256"] for r in mine]
    kinds = ("proposal", "proposal_status", "action_attempt", "action_result")
    assert [sum(r["event"] == k for r in rows) for k in kinds] == [sum(r["event"] == k for r in s.rows) for k in kinds]
    assert len(action_steps(rows)) == len(action_steps(s.rows))


def test_the_baseline_runs_the_sessions_policy_to_the_same_decisions_within_the_step(session, baseline):
    _, s, _ = session
    rows = baseline
    mine, theirs = of_kind(rows, "proposal"), of_kind(s.rows, "proposal")
    assert [decision(r) for r in mine] == [decision(r) for r in theirs]
    assert [r["status"] for r in of_kind(rows, "proposal_status")] == [
        r["status"] for r in of_kind(s.rows, "proposal_status")
    ]
    # its own decide_ms, timed between its observation row and its proposal row
    obs = {r["observation_id"]: r for r in observation_rows(rows)}
    assert [r["decide_ms"] for r in mine] != [r["decide_ms"] for r in theirs]
    for r in mine:
        assert isinstance(r["decide_ms"], float) and r["decide_ms"] > 0
        assert stamp(r) - stamp(obs[r["observation_id"]]) >= r["decide_ms"] / 1000 - 1e-6


@pytest.mark.parametrize(
    "field,value", [("parameters", {"option": "not-what-the-policy-chose"}), ("action", "end_turn")]
)
def test_the_baseline_refuses_a_proposal_its_policy_does_not_make(session, field, value):
    base, s, _ = session
    rows = copy.deepcopy(s.rows)
    target = of_kind(rows, "proposal")[2]
    was = target[field]
    target[field] = value
    with pytest.raises(DecisionMismatch) as err:
        replay(rows, str(base / f"altered-{field}"))
    text = str(err.value)
    assert target["observation_id"] in text and field in text
    assert json.dumps(was) in text and json.dumps(value) in text


def test_the_baseline_refuses_a_disposition_the_policys_wish_does_not_get(session):
    base, s, _ = session
    rows = copy.deepcopy(s.rows)
    prop = of_kind(rows, "proposal")[1]
    status = next(r for r in of_kind(rows, "proposal_status") if r["proposal_id"] == prop["proposal_id"])
    assert status["status"] == "execute"
    status["status"] = "dry_run"
    with pytest.raises(DecisionMismatch) as err:
        replay(rows, str(base / "altered-status"))
    assert prop["observation_id"] in str(err.value) and '"dry_run"' in str(err.value)


def test_the_baseline_refuses_a_session_whose_policy_consulted_a_model(session, tmp_path):
    _, s, _ = session
    rows = copy.deepcopy(s.rows)
    rows[0]["profile"]["model"]["base_url"] = "http://127.0.0.1:9/v1"
    with pytest.raises(ValueError, match="configures a model"):
        replay(rows, str(tmp_path))
    assert not os.listdir(tmp_path), "refused before any work"


def test_the_probe_times_both_intent_paths_against_a_real_recorder(session):
    base, s, _ = session
    root = s.rows[0]["profile"]["capture"]["root"]
    states = [json.load(open(os.path.join(root, r["path"]), encoding="utf-8")) for r in observation_rows(s.rows)[:3]]
    os.makedirs(base / "ack")
    probe = AckProbe(str(base / "ack"), s.rows[0]["profile"])
    try:
        out = probe.probe(states, 4)
        journal = scan_file(os.path.join(probe.root, "sessions", probe.sid, "events.jsonl")).rows
    finally:
        probe.close()
    assert {k: len(v) for k, v in out.items()} == dict.fromkeys(
        ("store_observation", "record_proposal", "record_intent", "record_result", "await_intent"), 4
    )
    assert all(v > 0 for values in out.values() for v in values)
    requesters = [r["requester"] for r in journal if r["event"] == "action_attempt"]
    assert requesters.count("bench-standing") == 4 and requesters.count("bench-probe") == 4
