"""Fleets on Ray: a one-node cluster on loopback (``LocalRayHead``) running real sessions, a
fleet whose driver is killed and resumed with ``--ray-address``, and the retry rule with a Ray
worker killed while its session has, or has not, an action in flight: the journal decides.
The outside game is ``FakeSts2Game``, a real HTTP server whose answers the test holds."""

from __future__ import annotations

import glob
import json
import os
import signal

import pytest

pytest.importorskip("ray", reason="Ray is not installed: pip install -e '.[test]' installs it")

from supervisor.fleet.matrix import game_resource
from supervisor.fleet.ray_head import LocalRayHead
from tests.fleet.helpers import attempt, finish, journal, resume_fleet, rows, start_fleet, supervisor, write_fleet
from tests.fleet.sts2_fake import FakeSts2Game
from tests.harness import wait_for

pytestmark = pytest.mark.timeout(180)


@pytest.fixture(scope="module")
def game():
    g = FakeSts2Game()
    yield g
    g.stop()


@pytest.fixture(scope="module")
def head(game):
    h = LocalRayHead(num_cpus=2, resources={game_resource(game.base_url): 1})
    try:
        yield h.wait_ready()
    finally:
        h.stop()


def test_a_fleet_on_ray_survives_its_driver(tmp_path, head):
    """Two sessions as Ray tasks; the driver's process group is killed while both run. Ray kills
    the dead driver's workers, each supervisor gets its parent-death SIGTERM and finalizes; the
    resume on Ray runs both again: one row each, the unfaulted fleet's results."""
    fleet = write_fleet(tmp_path, set={"session.max_steps": 50}, matrix={"game.seed": [1, 2]})
    root = str(tmp_path / "fleet")
    cmd = start_fleet(fleet, root, "--ray-address", head.address, env=head.env, own_group=True)
    wait_for(lambda: all(_attempts(root, s) >= 1 for s in ("s0000", "s0001")), 90, "both sessions acting")
    runners = [attempt(root, s, 1)["runner_pid"] for s in ("s0000", "s0001")]
    assert all(r != cmd.pid for r in runners)  # each ran inside a Ray worker
    os.killpg(cmd.pid, signal.SIGKILL)
    cmd.communicate(timeout=10)
    code, out = finish(
        resume_fleet(root, str(tmp_path / "runtime"), "--ray-address", head.address, env=head.env), timeout=120
    )
    assert code == 0, out
    assert "ray, concurrency" not in out and "resume: 0 kept" in out and "2 run again" in out, out
    got = rows(root)
    assert [(r["slot"], r["outcome"], r["steps"], r["reason"], r["attempts"]) for r in got] == [
        ("s0000", "ok", 50, "max_steps", 2),
        ("s0001", "ok", 50, "max_steps", 2),
    ], got
    for r in got:
        assert "told to stop before its end" in r["detail"], r["detail"]
        first = journal(
            os.path.join(root, r["slot"], "capture", "sessions", attempt(root, r["slot"], 1)["session_ids"][0])
        )
        assert (first[-1]["event"], first[-1]["reason"]) == ("session_end", "sigterm")  # finalized, not cut
        assert attempt(root, r["slot"], 2)["node"]  # the rerun ran as a Ray task too
    assert supervisor("capture", "verify", root).returncode == 0  # every session, cut ones too, finalized


def _attempts(root: str, slot: str) -> int:
    dirs = glob.glob(os.path.join(root, slot, "capture", "sessions", "*", "events.jsonl"))
    if len(dirs) != 1:
        return 0
    with open(dirs[0], encoding="utf-8") as fh:
        return sum('"action_attempt"' in line for line in fh)


def _outside_game_fleet(tmp_path, game) -> str:
    return write_fleet(
        tmp_path,
        sessions=1,
        set={
            "game.builtin": False,
            "game.base_url": game.base_url,
            "game.timeout_s": 60,
            "session.max_steps": 5,
            "session.stuck_seconds": 0,
            "supervisor.heartbeat_s": 0.2,
            "supervisor.stop_timeout_s": 1,
        },
    )


def _session_journal(root: str) -> list[dict]:
    dirs = glob.glob(os.path.join(root, "s0000", "capture", "sessions", "*"))
    return journal(dirs[0]) if len(dirs) == 1 and os.path.exists(os.path.join(dirs[0], "events.jsonl")) else []


def test_a_worker_killed_with_an_action_in_flight_is_never_rerun(tmp_path, head, game):
    game.reset(hold_posts=True)
    root = str(tmp_path / "fleet")
    proc = start_fleet(_outside_game_fleet(tmp_path, game), root, "--ray-address", head.address, env=head.env)
    try:
        wait_for(
            lambda: game.held == 1 and any(r["event"] == "action_attempt" for r in _session_journal(root)),
            60,
            "an action attempt held by the game",
        )
        os.kill(attempt(root, "s0000", 1)["runner_pid"], signal.SIGKILL)
        code, out = finish(proc, timeout=60)
    finally:
        game.release()
    assert code == 1, out
    (row,) = rows(root)
    assert row["outcome"] == "needs_review" and row["attempts"] == 1, row
    assert (
        "attempt 1 lost (WorkerCrashedError" in row["detail"]
        and "action_attempt a-000001 has no action_result" in row["detail"]
    )
    assert not os.path.exists(os.path.join(root, "s0000", "attempt-2.json"))
    assert game.posts == 1  # the action was sent once, and never again
    # the worker's death SIGTERMed the supervisor: it finalized with the attempt unresolved
    events = _session_journal(root)
    assert "action_result" not in [r["event"] for r in events]
    assert (events[-1]["event"], events[-1]["reason"]) == ("session_end", "sigterm") and "a-000001" in json.dumps(
        events[-1]["unresolved_attempts"]
    )


def test_a_worker_killed_with_no_action_in_flight_is_run_again(tmp_path, head, game):
    game.reset(hold_gets=True)
    root = str(tmp_path / "fleet")
    proc = start_fleet(_outside_game_fleet(tmp_path, game), root, "--ray-address", head.address, env=head.env)
    try:
        wait_for(lambda: game.held == 1 and _session_journal(root), 60, "a state read held by the game")
        os.kill(attempt(root, "s0000", 1)["runner_pid"], signal.SIGKILL)
        wait_for(lambda: os.path.exists(os.path.join(root, "s0000", "attempt-2.json")), 60, "the second attempt")
        game.release()
        code, out = finish(proc, timeout=60)
    finally:
        game.release()
    assert code == 0, out
    (row,) = rows(root)
    assert (row["outcome"], row["attempts"], row["reason"], row["steps"]) == ("ok", 2, "max_steps", 5), row
    assert "attempt 1 lost (WorkerCrashedError" in row["detail"] and "no action attempt was recorded" in row["detail"]
    first, second = (attempt(root, "s0000", n) for n in (1, 2))
    assert first["lost"] and first["session_ids"] and second["session_ids"] and second["exit_code"] == 0
    assert first["session_ids"] != second["session_ids"] and game.posts >= 1
