"""``supervisor fleet start --resume``: a fleet whose driver and running sessions were killed
(as a reboot kills them) is finished from its root: the finished session is kept, the ones never
started run, a session whose journal ends on an acknowledged intent without a result is marked
needs_review naming that line (never run again), and one whose journal proves nothing in flight
runs again."""
from __future__ import annotations

import json
import os
import signal

import psutil
import pytest

from supervisor.fleet import control, resume as resume_mod
from tests.fleet.helpers import attempt, finish, journal, resume_fleet, rows, start_fleet, supervisor, write_fleet
from tests.harness import wait_for

pytestmark = pytest.mark.timeout(120)


def attempts_in(root: str, slot: str) -> int:
    sessions = os.path.join(root, slot, "capture", "sessions")
    if not os.path.isdir(sessions) or not os.listdir(sessions):
        return 0
    session = os.path.join(sessions, os.listdir(sessions)[0])
    if not os.path.exists(os.path.join(session, "events.jsonl")):  # the directory comes first
        return 0
    return sum(r["event"] == "action_attempt" for r in journal(session))


def alive(proc: psutil.Process) -> bool:
    """Running and not a zombie (a dead orphan this container's init has not reaped yet)."""
    try:
        return proc.status() != psutil.STATUS_ZOMBIE
    except psutil.Error:
        return False


def cut_after(session_dir: str, last_event: str) -> tuple[int, dict]:
    """Cut the journal right after its last row of ``last_event`` (what a crash at that moment
    leaves on disk); (that row's line number, the row)."""
    path = os.path.join(session_dir, "events.jsonl")
    with open(path, "rb") as fh:
        lines = fh.read().split(b"\n")
    n = max(i for i, line in enumerate(lines) if line.startswith(b"{") and
            json.loads(line).get("event") == last_event)
    with open(path, "wb") as fh:
        fh.write(b"\n".join(lines[:n + 1]) + b"\n")
    return n + 1, json.loads(lines[n])


def test_a_killed_fleet_resumes_keeping_what_finished_and_never_rerunning_an_action_in_flight(tmp_path):
    fleet = write_fleet(tmp_path, set={"session.stop_on_run_end": False},
                        matrix={"session.max_steps": [20, 5000, 300, 21, 22]})
    root = str(tmp_path / "fleet")
    runtime = os.path.join(str(tmp_path), "runtime")
    proc = start_fleet(fleet, root, "--concurrency", "2")
    wait_for(lambda: os.path.exists(os.path.join(root, "results.jsonl")) and attempts_in(root, "s0002") >= 10,
             timeout=60, what="s0000 finished and s0002 acting")
    refused = supervisor("fleet", "start", "--resume", root, "--runtime-dir", runtime)
    assert refused.returncode == 2 and "is still running" in refused.stderr, refused.stderr
    # the driver and every running session's supervisor die at once; their actors, orphaned, exit
    # on their own a few heartbeats later, and a resume waits for them (one might still append an
    # intent to the journal it judges)
    running = [attempt(root, s, 1)["supervisor_pid"] for s in ("s0001", "s0002")]
    actors = [c for pid in running for c in psutil.Process(pid).children()]
    assert len(actors) >= 10, actors
    proc.send_signal(signal.SIGKILL)
    for pid in running:
        os.killpg(pid, signal.SIGKILL)
    proc.communicate(timeout=10)
    wait_for(lambda: not control.live_supervisors(root), timeout=20, what="the killed sessions gone")
    said = []
    resume_mod.refuse_if_running(root, {}, say=said.append)
    assert not [a.pid for a in actors if alive(a)], said
    assert [r["slot"] for r in rows(root)] == ["s0000"]
    kept = rows(root)[0]
    sessions = {s: os.path.join(root, s, "capture", "sessions") for s in ("s0001", "s0002")}
    s1 = os.path.join(sessions["s0001"], os.listdir(sessions["s0001"])[0])
    s2 = os.path.join(sessions["s0002"], os.listdir(sessions["s0002"])[0])
    line, open_attempt = cut_after(s1, "action_attempt")  # an acknowledged intent, maybe sent
    cut_after(s2, "action_result")  # every attempt resolved: nothing in flight

    code, out = finish(resume_fleet(root, runtime), timeout=90)
    assert code == 1, out  # one session needs review
    assert "resume: 1 kept, 0 finished while the driver was down, 1 need review, 1 run again " \
           "(no action in flight), 2 never started" in out, out
    got = rows(root)
    assert [r["slot"] for r in got] == ["s0000", "s0001", "s0002", "s0003", "s0004"]
    assert got[0] == kept  # kept as it was
    review = got[1]
    assert review["outcome"] == "needs_review"
    assert f"events.jsonl line {line}: action_attempt {open_attempt['attempt_id']} has no action_result" \
        in review["detail"], review["detail"]
    assert not os.path.exists(os.path.join(root, "s0001", "attempt-2.json"))  # never run again
    rerun = got[2]
    assert (rerun["outcome"], rerun["attempts"], rerun["steps"]) == ("ok", 2, 300), rerun
    assert "proves no action in flight" in rerun["detail"] and "run again" in rerun["detail"]
    assert [(r["outcome"], r["steps"], r["attempts"]) for r in got[3:]] == [("ok", 21, 1), ("ok", 22, 1)]
    status = control.status(root)
    assert status["state"] == "finished" and status["done"] == 5
