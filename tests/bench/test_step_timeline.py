"""``bench/step_timeline.py``: one short session with every frame logged
(``GAMERIG_HOPLOG``, ``actors/runtime/hoplog.py``), each executed step walked along its six
messages. The segments must tile the step: they add up to the observation-to-observation time
of every step, each hop's parts are in causal order, and the six messages were all seen."""

from __future__ import annotations

import json
import math
import os
import sys

import pytest

import protocol
from actors.runtime import hoplog
from actors.runtime.recorder_client import follow_message
from tests.harness import REPO

sys.path.insert(0, os.path.join(REPO, "bench"))

import step_timeline
from pipeline_steps import stamp

pytestmark = pytest.mark.timeout(240)


def test_the_segments_of_every_step_add_up_to_the_step_and_follow_each_other(tmp_path):
    rows = step_timeline.run_session(str(tmp_path), os.path.join(REPO, "run", "profiles", "demo.yaml"), 40)
    hops = step_timeline.Hops(str(tmp_path / "hops"))
    found = step_timeline.steps(rows, hops)
    executed = sum(1 for r in rows if r["event"] == "action_result")
    assert len(found) >= executed // 2 > 0, (len(found), executed)
    keys = [k for k, _, _ in step_timeline.SEGMENTS]
    obs = {r["observation_id"]: r for r in rows if r["event"] == "observation"}
    after = {r.get("after_attempt_id"): r for r in rows if r["event"] == "observation" and r.get("after_attempt_id")}
    attempt_of = {r["observation_id"]: r["attempt_id"] for r in rows if r["event"] == "action_attempt"}
    for s in found:
        # the step's length, from the journal's own stamps: its read to the read after its result
        nxt = after[attempt_of[s["observation_id"]]]
        want = (stamp(nxt) - stamp(obs[s["observation_id"]])) * 1000
        assert math.isclose(s["total"], want, abs_tol=1e-6), (s["total"], want)
        for k in keys:  # every segment in causal order: a hop paired with another step's would not be
            assert s[k] >= -0.05, (k, s)  # one clock (time.time) in every process
        assert s["actuator"] >= s["request_ms"] - 0.5, s  # the POST lies inside the actuator's turn
    msgs = step_timeline.per_message(hops)
    for kind in ("rows", "record_proposal", "intent_ack", "record_result", "store_observation"):
        assert msgs[kind]["n"] >= len(found), (kind, msgs[kind])
    post = hops.http["POST /api/v1/singleplayer"]  # the actuator's client and the game, each logged
    assert len(post["game"]) == len(post["cpu"]) == len(post["wall"]) == executed, {k: len(v) for k, v in post.items()}
    for cpu, wall in zip(post["cpu"], post["wall"]):
        assert 0 < cpu <= wall + 0.05, (cpu, wall)  # a thread's CPU time within its wall time
    assert max(post["game"]) > 0 and min(post["game"]) >= 0


def test_the_command_shows_the_session_s_and_the_baseline_s_requests_side_by_side(tmp_path):
    out = tmp_path / "figures.json"
    assert step_timeline.main(["--steps", "30", "--keep", str(tmp_path / "work"), "--json", str(out)]) == 0
    figures = json.loads(out.read_text())
    for route in ("GET /api/v1/singleplayer", "POST /api/v1/singleplayer"):
        sides = figures["http"][route]
        assert set(sides) == {"session", "baseline"}, sides
        for side in sides.values():
            assert all(side[k] > 0 for k in ("game", "cpu", "wall")), sides
    assert figures["steps"] > 0


def test_frames_are_logged_only_with_the_variable_and_never_after_close(tmp_path, monkeypatch):
    monkeypatch.setattr(protocol, "encode", protocol.encode)  # restored after the test
    monkeypatch.setattr(protocol, "decode", protocol.decode)
    env = protocol.wrap(follow_message(0), session="s", sender="t")
    monkeypatch.delenv(hoplog.ENV, raising=False)
    encode = protocol.encode
    assert hoplog.install("x") is False and protocol.encode is encode
    monkeypatch.setenv(hoplog.ENV, str(tmp_path))
    assert hoplog.install("x") is True
    data = protocol.encode(env)
    assert protocol.decode(data).id == env.id
    hoplog.close()
    protocol.encode(env)  # after close: still encodes, writes nothing
    [log] = list(tmp_path.iterdir())
    lines = [ln.split() for ln in log.read_text().splitlines()]
    assert [ln[0] for ln in lines] == ["S", "R"] and lines[0][2] == lines[1][2] == env.id, lines
