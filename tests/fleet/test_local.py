"""Local fleets, whole-process: real ``supervisor fleet start`` processes running real sessions
of the built-in game; everything is read back from the fleet root."""

from __future__ import annotations

import os
import signal

import pytest

from supervisor.fleet import control
from supervisor.fleet.results import read_fleet
from tests.fleet.helpers import attempt, finish, journal, rows, start_fleet, supervisor, write_fleet
from tests.fleet.sts2_fake import FakeSts2Game
from tests.harness import wait_for

pytestmark = pytest.mark.timeout(120)


def _max_overlap(spans: list[tuple[float, float]]) -> int:
    edges = sorted([(s, 1) for s, _ in spans] + [(e, -1) for _, e in spans])
    level = peak = 0
    for _, step in edges:
        level += step
        peak = max(peak, level)
    return peak


def test_a_matrix_fleet_runs_every_cell_at_the_concurrency_and_a_failure_stops_nothing(tmp_path):
    fleet = write_fleet(
        tmp_path,
        set={"session.max_steps": 40, "actors.policy.max_restarts": 0},
        matrix={"game.seed": [1, 2], "policy.module": ["sts2", "no_such.policy"]},
    )
    root = str(tmp_path / "fleet")
    code, out = finish(start_fleet(fleet, root, "--concurrency", "2"), timeout=100)
    assert code == 1, out  # two sessions failed
    got = rows(root)
    assert [r["cell"] for r in got] == [
        "game.seed=1 policy.module=sts2",
        "game.seed=1 policy.module=no_such.policy",
        "game.seed=2 policy.module=sts2",
        "game.seed=2 policy.module=no_such.policy",
    ]
    for r in got[0::2]:  # the good sessions ran to their end beside the failing ones
        assert (r["outcome"], r["exit_code"], r["reason"], r["steps"]) == ("ok", 0, "max_steps", 40), r
        assert r["accepted"] > 0 and r["duration_s"] > 0 and os.path.isdir(os.path.join(root, r["session_dir"]))
    for r in got[1::2]:
        # the policy cannot be imported: it exits at once and may not be restarted
        assert (r["outcome"], r["exit_code"], r["reason"]) == ("failed", 1, "restart_intensity"), r
    assert {r["game.seed"] for r in got} == {1, 2} and len({tuple(sorted(r)) for r in got}) == 1
    spans = [(attempt(root, r["slot"], 1)["started_at"], attempt(root, r["slot"], 1)["ended_at"]) for r in got]
    assert _max_overlap(spans) == 2
    assert "done 4/4" in out and "failed 2" in out  # the live fleet line
    status = control.status(root)
    # steps from the journals themselves (observation rows; the demo policy does not pipeline),
    # not from the rows the fleet wrote: the failing sessions observed before their policy died
    counted = {
        r["slot"]: sum(x["event"] == "observation" for x in journal(os.path.join(root, r["session_dir"]))) for r in got
    }
    assert {r["slot"]: r["steps"] for r in got} == counted
    assert [attempt(root, r["slot"], 1)["exit_code"] for r in got] == [0, 1, 0, 1]
    steps = sum(counted.values())
    assert status["state"] == "finished" and status["outcomes"]["ok"] == 2 and status["steps"] == steps >= 80
    totals = read_fleet(root)["totals"]
    assert (totals["sessions"], totals["ok"], totals["failed"], totals["steps"]) == (4, 2, 2, steps)

    verify = supervisor("capture", "verify", root)
    assert verify.returncode == 0, verify.stdout + verify.stderr
    assert "4 session(s): 4 intact" in verify.stdout
    report = supervisor("fleet", "report", root)
    assert report.returncode == 0, report.stderr
    line = next(ln for ln in report.stdout.splitlines() if ln.startswith("game.seed=2 policy.module=sts2 "))
    assert line.split()[2:7] == ["1", "1", "0", "0", "0"] and line.split()[7] == "40"


def test_stop_reaches_every_session_and_each_one_finalizes(tmp_path):
    fleet = write_fleet(
        tmp_path,
        sessions=3,
        set={"session.max_steps": 100000, "session.stop_on_run_end": False, "session.stuck_seconds": 0},
    )
    root = str(tmp_path / "fleet")
    proc = start_fleet(fleet, root, "--concurrency", "2")
    wait_for(
        lambda: (
            len(control.live_supervisors(root)) == 2
            and all(
                len(journal(os.path.join(c, "sessions", s))) > 20
                for c in _captures(root)
                for s in os.listdir(os.path.join(c, "sessions"))
            )
        ),
        60,
        "two running sessions with journals",
    )
    stop = supervisor("fleet", "stop", root, "--runtime-dir", str(tmp_path / "runtime"))
    assert stop.returncode == 0 and "SIGTERM to 2 running session(s)" in stop.stdout, stop.stdout + stop.stderr
    code, out = finish(proc, timeout=60)
    assert code == 0, out
    got = rows(root)
    assert [r["outcome"] for r in got] == ["stopped", "stopped", "not_run"]
    for r in got[:2]:
        end = journal(os.path.join(root, r["session_dir"]))[-1]
        assert end["event"] == "session_end" and end["reason"] == "sigterm" and r["exit_code"] == 143
    assert not os.path.exists(os.path.join(root, "s0002", "capture"))
    assert control.status(root)["state"] == "stopped"
    assert supervisor("capture", "verify", root).returncode == 0


def test_a_signal_to_the_fleet_interrupts_it_and_names_the_resume(tmp_path):
    """Ctrl-C (or SIGTERM) to the driver is not a verdict on its sessions: the running one stops at
    once and finalizes, no row is written for it or for the one never started, and the fleet is
    left interrupted, with the command that finishes it (`fleet stop` ends a fleet for good)."""
    fleet = write_fleet(
        tmp_path,
        sessions=2,
        set={"session.max_steps": 100000, "session.stop_on_run_end": False, "session.stuck_seconds": 0},
    )
    root = str(tmp_path / "fleet")
    proc = start_fleet(fleet, root, "--concurrency", "1")
    wait_for(lambda: control.live_supervisors(root), 30, "a running session")
    proc.send_signal(signal.SIGINT)
    code, out = finish(proc, timeout=60)
    assert code == 130, out
    assert not os.path.exists(os.path.join(root, "results.jsonl")) and not control.live_supervisors(root)
    (sid,) = os.listdir(os.path.join(root, "s0000", "capture", "sessions"))
    end = journal(os.path.join(root, "s0000", "capture", "sessions", sid))[-1]
    assert (end["event"], end["reason"]) == ("session_end", "sigterm")
    assert attempt(root, "s0000", 1)["interrupted"] and not os.path.exists(os.path.join(root, "s0001"))
    assert f"resume  supervisor fleet start --resume {root}" in out
    st = control.status(root)
    assert (st["state"], st["done"], st["resume_command"]) == (
        "interrupted",
        0,
        f"supervisor fleet start --resume {root}",
    )
    listed = supervisor("fleet", "status", "--runtime-dir", str(tmp_path / "runtime"))
    assert (
        "(local, interrupted): done 0/2" in listed.stdout
        and "finish it with: supervisor fleet start --resume" in listed.stdout
    ), listed.stdout + listed.stderr


def _captures(root: str) -> list[str]:
    return [
        os.path.join(root, s, "capture")
        for s in sorted(os.listdir(root))
        if os.path.isdir(os.path.join(root, s, "capture", "sessions"))
    ]


def test_one_outside_game_never_gets_two_sessions_at_once(tmp_path):
    game = FakeSts2Game()
    try:
        fleet = write_fleet(
            tmp_path,
            sessions=2,
            set={
                "game.builtin": False,
                "game.base_url": game.base_url,
                "session.max_steps": 5,
                "session.stuck_seconds": 0,
            },
        )
        root = str(tmp_path / "fleet")
        code, out = finish(start_fleet(fleet, root, "--concurrency", "2"), timeout=90)
    finally:
        game.stop()
    assert code == 0, out
    got = rows(root)
    assert [r["outcome"] for r in got] == ["ok"] * 2 and game.posts >= 2
    spans = [(attempt(root, r["slot"], 1)["started_at"], attempt(root, r["slot"], 1)["ended_at"]) for r in got]
    assert _max_overlap(spans) == 1  # held back one after another, though 2 were allowed
