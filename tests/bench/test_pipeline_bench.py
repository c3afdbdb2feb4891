"""The quick variant of ``bench/pipeline.py`` (the full run is a documented command,
docs/performance.md "Game path"): its parts on a short real session — the pipeline's steps
read from the journal, the one-process baseline replaying that session on a fresh game and
seeing the same states, and the intent-acknowledgement probe against a real recorder process
timing both intent paths."""
from __future__ import annotations

import json
import os
import sys

import pytest

from protocol.journal import scan_file
from tests.harness import REPO

sys.path.insert(0, os.path.join(REPO, "bench"))  # bench/ is not a package
import pipeline as bench  # noqa: E402
from pipeline_baseline import AckProbe, replay  # noqa: E402

pytestmark = pytest.mark.timeout(180)

STEPS = 40


@pytest.fixture(scope="module")
def session(tmp_path_factory):
    base = tmp_path_factory.mktemp("pipeline-bench")
    s, rss = bench.run_one(str(base / "round"), os.path.join(REPO, "run", "profiles", "demo.yaml"), STEPS, 120)
    return base, s, rss


def observation_rows(rows: list[dict]) -> list[dict]:
    return [r for r in rows if r["event"] == "observation"]


def test_the_pipeline_session_yields_executed_steps_with_every_stage(session):
    _, s, rss = session
    steps = bench.action_steps(s.rows)
    assert s.code == 0 and len(observation_rows(s.rows)) == STEPS
    assert len(steps) >= STEPS // 2, "most demo steps execute an action"
    for step in steps:
        stages = step["obs_prop"] + step["prop_att"] + step["att_res"] + step["res_obs"]
        assert step["total"] > 0 and abs(stages - step["total"]) < 1e-6
    assert rss.peak > 0 and rss.samples


def test_the_baseline_replays_the_session_and_sees_its_states_byte_for_byte(session):
    base, s, _ = session
    rows = scan_file(replay(s.rows, str(base / "baseline"))).rows
    mine, theirs = observation_rows(s.rows), observation_rows(rows)
    assert len(theirs) == len(mine)
    assert [r["sha256"] for r in theirs] == [r["sha256"] for r in mine]
    kinds = ("proposal", "proposal_status", "action_attempt", "action_result")
    assert [sum(r["event"] == k for r in rows) for k in kinds] == \
           [sum(r["event"] == k for r in s.rows) for k in kinds]
    assert len(bench.action_steps(rows)) == len(bench.action_steps(s.rows))


def test_the_probe_times_both_intent_paths_against_a_real_recorder(session):
    base, s, _ = session
    root = s.rows[0]["profile"]["capture"]["root"]
    states = [json.load(open(os.path.join(root, r["path"]), encoding="utf-8"))
              for r in observation_rows(s.rows)[:3]]
    os.makedirs(base / "ack")
    probe = AckProbe(str(base / "ack"), s.rows[0]["profile"])
    try:
        out = probe.probe(states, 4)
        journal = scan_file(os.path.join(probe.root, "sessions", probe.sid, "events.jsonl")).rows
    finally:
        probe.close()
    assert {k: len(v) for k, v in out.items()} == {k: 4 for k in (
        "store_observation", "record_proposal", "record_intent", "record_result", "await_intent")}
    assert all(v > 0 for values in out.values() for v in values)
    requesters = [r["requester"] for r in journal if r["event"] == "action_attempt"]
    assert requesters.count("bench-standing") == 4 and requesters.count("bench-probe") == 4
