"""``supervisor fleet start --resume`` decides each session from its slot's evidence, takes over
what a dead driver left running instead of asking the user to, and refuses only while the
fleet's driver itself runs. Whole fleets killed and resumed are in test_fleet_chaos.py; these
tests start from a copy of its unfaulted fleet (a real fleet root, two finished sessions) with
one thing changed, as a crash at that moment leaves it."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time

import pytest

from supervisor.fleet import control
from supervisor.fleet import resume as resume_mod
from supervisor.fleet.results import read_fleet, write_fleet
from tests.fleet.helpers import attempt, finish, quick_campaign, resume_fleet, rows, supervisor

pytestmark = pytest.mark.timeout(300)
COMPARED = ("cell", "outcome", "exit_code", "reason", "steps", "runs", "wins", "accepted", "rejected", "unknown")


@pytest.fixture(scope="module")
def reference(tmp_path_factory) -> str:
    """The unfaulted fleet root of the quick campaign (read only)."""
    done = quick_campaign(tmp_path_factory)
    return os.path.join(done["keep"], "reference", "root")


def crashed_copy(reference: str, tmp_path, keep_rows: int = 0) -> str:
    """A copy of the finished fleet as its driver's death would leave it: running, its first
    ``keep_rows`` rows written."""
    root = str(tmp_path / "fleet")
    shutil.copytree(reference, root)
    kept = rows(root)[:keep_rows]
    with open(os.path.join(root, "results.jsonl"), "w", encoding="utf-8") as fh:
        fh.writelines(json.dumps(r) + "\n" for r in kept)
    info = read_fleet(root)
    info.pop("totals", None)
    write_fleet(root, {**info, "state": "running"})
    for slot in ("s0000", "s0001")[keep_rows:]:  # attempt records as a running runner leaves them
        path = os.path.join(root, slot, "attempt-1.json")
        rec = json.load(open(path, encoding="utf-8"))
        with open(path, "w", encoding="utf-8") as fh:
            json.dump({**rec, "exit_code": None, "ended_at": None, "session_ids": []}, fh)
    return root


def session_dir(root: str, slot: str) -> str:
    base = os.path.join(root, slot, "capture", "sessions")
    (sid,) = os.listdir(base)
    return os.path.join(base, sid)


def cut_after(session: str, last_event: str) -> tuple[int, dict]:
    """Cut the journal right after its last row of ``last_event`` (what a crash at that moment
    leaves on disk); (that row's line number, the row)."""
    path = os.path.join(session, "events.jsonl")
    with open(path, "rb") as fh:
        lines = fh.read().split(b"\n")
    n = max(i for i, line in enumerate(lines) if line.startswith(b"{") and json.loads(line).get("event") == last_event)
    with open(path, "wb") as fh:
        fh.write(b"\n".join(lines[: n + 1]) + b"\n")
    return n + 1, json.loads(lines[n])


def test_an_action_in_flight_needs_review_naming_its_line_and_a_session_that_ended_gets_its_row(reference, tmp_path):
    root = crashed_copy(reference, tmp_path)
    line, open_attempt = cut_after(session_dir(root, "s0000"), "action_attempt")  # acknowledged, maybe sent
    runtime = str(tmp_path / "runtime")
    code, out = finish(resume_fleet(root, runtime), timeout=60)
    assert code == 1, out  # one session needs review
    assert (
        "resume: 0 kept, 1 ended by themselves (rows written now), 1 need review, 0 run again "
        "(stopped or cut short, no action in flight), 0 never started" in out
    ), out
    review, ended = rows(root)
    assert review["outcome"] == "needs_review" and review["attempts"] == 1
    assert (
        f"events.jsonl line {line}: action_attempt {open_attempt['attempt_id']} has no action_result"
        in review["detail"]
        and "Not run again" in review["detail"]
    ), review["detail"]
    assert "cut short" in review["detail"] and not os.path.exists(os.path.join(root, "s0000", "attempt-2.json"))
    want = next(r for r in map(json.loads, open(os.path.join(reference, "results.jsonl"))) if r["slot"] == "s0001")
    assert {k: ended[k] for k in COMPARED} == {k: want[k] for k in COMPARED}
    assert "ended by itself (max_steps)" in ended["detail"] and ended["duration_s"] > 0
    # kept, not run again: its slot holds the one session the dead driver started, which the row names
    assert (ended["attempts"], ended["session_id"]) == (1, want["session_id"]), ended
    assert os.path.basename(session_dir(root, "s0001")) == want["session_id"]
    assert not os.path.exists(os.path.join(root, "s0001", "attempt-2.json"))
    assert control.status(root)["state"] == "finished"


def test_a_torn_last_line_is_read_past_and_an_unreadable_line_in_the_middle_needs_review(reference, tmp_path):
    """Both sessions cut short after an action's result (no action in flight). s0000's journal
    has a line in the middle that does not parse (and no recorder_resumed row naming it torn):
    it proves nothing, so the session needs review, named by that line. s0001's ends in a torn
    line (a crash while appending the next row, never acknowledged): it is read past, and the
    session runs again."""
    root = crashed_copy(reference, tmp_path)
    garbled = session_dir(root, "s0000")
    cut_after(garbled, "action_result")
    path = os.path.join(garbled, "events.jsonl")
    with open(path, "rb") as fh:
        lines = fh.read().split(b"\n")
    bad = len(lines) // 2  # a line in the middle, with rows after it
    lines[bad - 1] = lines[bad - 1][: len(lines[bad - 1]) // 2] + b"\x00\xff not json"
    with open(path, "wb") as fh:
        fh.write(b"\n".join(lines))
    torn = session_dir(root, "s0001")
    cut_after(torn, "action_result")
    with open(os.path.join(torn, "events.jsonl"), "ab") as fh:
        fh.write(b'{"event": "action_attempt", "attempt_id": "a-0')  # no newline: torn
    code, out = finish(resume_fleet(root, str(tmp_path / "runtime")), timeout=120)
    assert code == 1, out  # one session needs review
    assert (
        "resume: 0 kept, 0 ended by themselves (rows written now), 1 need review, 1 run again "
        "(stopped or cut short, no action in flight), 0 never started" in out
    ), out
    review, again = rows(root)
    sid = os.path.basename(garbled)
    assert review["outcome"] == "needs_review" and review["attempts"] == 1, review
    assert (
        f"{sid}/events.jsonl line {bad}: does not parse" in review["detail"] and "Not run again" in review["detail"]
    ), review["detail"]
    assert os.path.basename(session_dir(root, "s0000")) == sid  # not run again
    assert not os.path.exists(os.path.join(root, "s0000", "attempt-2.json"))
    assert again["outcome"] == "ok" and again["attempts"] == 2 and again["reason"] == "max_steps", again
    assert again["session_id"] != os.path.basename(torn)
    judged = attempt(root, "s0001", 1)["judged"]
    assert "cut short" in judged and "action attempt(s) have a result" in judged and judged.endswith("run again")


def test_status_and_report_of_a_fleet_whose_driver_died_say_so_and_name_the_resume(reference, tmp_path):
    root = crashed_copy(reference, tmp_path, keep_rows=1)
    command = f"supervisor fleet start --resume {root}"
    status = supervisor("fleet", "status", root)
    assert status.returncode == 0 and "(local, interrupted): done 1/2" in status.stdout, status.stdout
    assert f"is gone with 1 of 2 sessions done; finish it with: {command}" in status.stdout
    report = supervisor("fleet", "report", root)
    assert report.returncode == 0 and f"finish it with: {command}" in report.stdout, report.stdout
    as_json = json.loads(supervisor("fleet", "report", root, "--json").stdout)
    assert (as_json["state"], as_json["resume_command"]) == ("interrupted", command)
    lock = control.take_driver_lock(root)  # a driver holds it: the fleet runs, nothing to resume
    try:
        assert control.status(root)["state"] == "running" and control.status(root)["resume_command"] is None
    finally:
        os.close(lock)


def test_a_resume_refuses_only_while_the_fleets_driver_runs(reference, tmp_path):
    root = crashed_copy(reference, tmp_path)
    lock = control.take_driver_lock(root)
    try:
        refused = supervisor("fleet", "start", "--resume", root, "--runtime-dir", str(tmp_path / "runtime"))
    finally:
        os.close(lock)
    assert (
        refused.returncode == 2 and "the fleet's driver (pid" in refused.stderr and "is still running" in refused.stderr
    ), refused.stderr
    assert rows(root) == []  # decided nothing, wrote nothing
    empty = tmp_path / "made"  # a driver killed after making its root, before recording the fleet
    empty.mkdir()
    (empty / "driver.lock").write_text("")
    early = supervisor("fleet", "start", "--resume", str(empty))
    assert early.returncode == 2 and "died before it recorded the fleet, and no session ran" in early.stderr


def _process(*args: str, env: dict | None = None) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-c", *args], env=env, stdout=subprocess.PIPE, text=True)


def test_a_resume_takes_over_what_the_dead_driver_left_instead_of_asking(tmp_path):
    """A supervisor still running after the driver died (it missed, or is still acting on, its
    parent-death signal) is told to stop and waited for; an actor of a killed session that
    outlives the wait is killed. Each process is confirmed to be what its record says first."""
    root = tmp_path / "fleet"
    # s0000: a session whose supervisor was killed, with one of its actors still running
    sid = "20261206T000000Z-0123456789abcdef0123456789abcdef"
    session = root / "s0000" / "capture" / "sessions" / sid
    session.mkdir(parents=True)
    orphan = _process("import time; time.sleep(60)", env={**os.environ, "GAMERIG_SESSION": sid})
    stranger = _process("import time; time.sleep(60)", env={**os.environ, "GAMERIG_SESSION": "another"})
    session.joinpath("events.jsonl").write_text(
        "".join(
            json.dumps(r) + "\n"
            for r in (
                {"event": "session_start", "recorded_at": "2026-12-06T00:00:00.000001Z"},
                {"event": "actor_start", "actor": "policy", "pid": orphan.pid},
                {"event": "actor_start", "actor": "observer", "pid": stranger.pid},
            )
        ),
        encoding="utf-8",
    )
    # s0001: a supervisor still running; it finalizes when told to stop
    survivor = _process(
        "import signal, sys, time\n"
        "signal.signal(signal.SIGTERM, lambda *a: sys.exit(0))\n"
        "print('up', flush=True)\ntime.sleep(60)",
        "supervisor",
    )
    assert survivor.stdout.readline() == "up\n"
    runtime = root / "s0001" / "runtime"
    runtime.mkdir(parents=True)
    runtime.joinpath("x.json").write_text(
        json.dumps({"pid": survivor.pid, "session_id": "x", "started_at": time.time()}), encoding="utf-8"
    )
    said: list[str] = []
    try:
        resume_mod.take_over(str(root), say=said.append, orphan_wait_s=0.5)
        assert survivor.wait(5) == 0  # it was told to stop (SIGTERM) and finalized
        assert orphan.wait(5) == -signal.SIGKILL  # outlived the wait for orphans: killed
        assert stranger.poll() is None  # its pid is in the journal, but it is not that session's
    finally:
        for p in (orphan, stranger, survivor):
            p.kill()
            p.wait()
    text = "\n".join(said)
    assert f"1 session(s) of the dead driver still stopping here: s0001 (supervisor pid {survivor.pid})" in text
    assert "every session of the dead driver here has finalized" in text
    assert (
        f"the policy actor (pid {orphan.pid}) of session {sid} still ran 0s after its supervisor died; killed" in text
    ), text
