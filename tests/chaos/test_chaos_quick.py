"""The quick variant of the fault campaign (``bench/chaos.py``; the full campaign and its last
figures are in docs/reliability.md, "Fault campaign").

Four whole-pipeline sessions (real ``supervisor start`` processes, the built-in game with
the hostile knobs, the demo cartridge in PyBoy), each with one chosen fault: a SIGKILL of the
actuator, of the emulator, of the supervisor, and the game closing one connection without an
answer. The command judges each run from its evidence; this test runs that documented
command, checks its report, and checks in each kept journal that the fault really happened.
A last test shows the judge is able to fail: one byte changed in a kept journal is a violation.
"""

from __future__ import annotations

import glob
import json
import os
import shutil
import subprocess
import sys
from types import SimpleNamespace

import pytest

from tests.harness import REPO, built_once

sys.path.insert(0, os.path.join(REPO, "bench"))  # bench/ is not a package
from chaos_judge import Run, judge

pytestmark = pytest.mark.timeout(240)

FAULTS = ["kill:actuator", "pyboy/kill:emulator", "supervisor:kill", "game:close", "journal:fsync"]


def rows(session_dir: str) -> list[dict]:
    out = []
    with open(os.path.join(session_dir, "events.jsonl"), "rb") as fh:
        for line in fh:
            try:
                out.append(json.loads(line))
            except ValueError:
                pass
    return out


def _run_campaign(keep: str) -> dict:
    cmd = [
        sys.executable,
        os.path.join(REPO, "bench", "chaos.py"),
        "--runs",
        str(len(FAULTS)),
        "--seed",
        "7",
        "--jobs",
        "2",
        "--timeout",
        "120",
        "--faults",
        ",".join(FAULTS),
        "--json",
        "--keep",
        keep,
    ]
    proc = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True, timeout=230)
    return {"returncode": proc.returncode, "stderr": proc.stderr, "report": json.loads(proc.stdout)}


@pytest.fixture(scope="module")
def campaign(tmp_path_factory):
    done = built_once(tmp_path_factory, "chaos-quick", _run_campaign)  # kept runs: read only
    report = done["report"]
    return SimpleNamespace(**done), report, {r["fault"]: r for r in report["runs"]}


def test_each_fault_lands_and_no_run_violates_a_promise(campaign):
    proc, report, runs = campaign
    assert [r["fault"] for r in report["runs"]] == [f.split("/")[-1] for f in FAULTS]
    assert all(r["landed"] for r in report["runs"]), [(r["fault"], r["detail"]) for r in report["runs"]]
    assert report["violating_runs"] == 0, [(r["fault"], r["violations"]) for r in report["runs"]]
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert all(r["left_over"] == [] for r in report["runs"])


def test_a_killed_actor_is_recorded_restarted_and_the_session_ends_normally(campaign):
    _, _, runs = campaign
    for fault, actor in (("kill:actuator", "actuator"), ("kill:emulator", "emulator")):
        r = runs[fault]
        journal = rows(r["session_dir"])
        exits = [
            x
            for x in journal
            if x.get("event") == "actor_exit" and x.get("actor") == actor and x.get("signal") == "SIGKILL"
        ]
        starts = [x for x in journal if x.get("event") == "actor_start" and x.get("actor") == actor]
        assert exits and len(starts) >= 2, fault
        assert (r["exit_code"], r["verdict"]) == (0, "intact") and r["reason"] in ("max_steps", "run_ended")
    game = runs["kill:actuator"]
    assert game["intent_violations"] == 0 and game["duplicates"] == 0
    assert game["posts"] <= game["attempts"]


def test_a_killed_supervisor_leaves_incomplete_evidence_at_its_last_row(campaign):
    _, _, runs = campaign
    r = runs["supervisor:kill"]
    journal = rows(r["session_dir"])
    assert r["exit_code"] == -9 and r["verdict"] == "incomplete"
    assert not [x for x in journal if x.get("event") == "session_end"]
    assert r["last_sequence"] == journal[-1]["sequence"]


def test_a_closed_connection_is_one_unknown_or_failed_read_never_a_resend(campaign):
    _, _, runs = campaign
    r = runs["game:close"]
    journal = rows(r["session_dir"])
    if r["detail"].startswith("POST"):
        assert [x for x in journal if x.get("event") == "action_result" and x.get("outcome") == "unknown"]
    else:
        assert [x for x in journal if x.get("event") == "observation_error"]
    assert r["posts"] == r["attempts"] and r["intent_violations"] == 0


def test_a_failed_journal_fsync_ends_the_session_and_its_rows_are_never_acknowledged(campaign):
    _, _, runs = campaign
    r = runs["journal:fsync"]
    assert r["exit_code"] == 1 and r["reason"] in ("journal_failed", "intent_not_recorded", "result_not_recorded")
    assert r["verdict"] in ("intact", "incomplete") and r["intent_violations"] == 0 and r["duplicates"] == 0
    assert r["posts"] <= r["attempts"]


def test_the_judge_fails_a_journal_with_one_changed_byte(campaign, tmp_path):
    _, _, runs = campaign
    src = runs["kill:actuator"]["session_dir"]
    dst = str(tmp_path / os.path.basename(src))
    shutil.copytree(src, dst)
    path = os.path.join(dst, "events.jsonl")
    data = bytearray(open(path, "rb").read())
    at = data.index(b'"event":"observation"') + len(b'"event":"')
    data[at] = ord("O")  # "Observation": a row edited after the fact
    open(path, "wb").write(bytes(data))
    run = Run(1, "pyboy", "kill:actuator", landed=True, exit_code=0, session_dir=dst, reported=("max_steps", 0))
    judge(run, None, None)
    assert any("damaged" in v for v in run.violations), run.violations
    assert glob.glob(os.path.join(dst, "observations", "*"))


def test_a_kill_counts_as_landed_only_when_the_journal_shows_that_pid_killed(campaign):
    _, _, runs = campaign
    r = runs["kill:emulator"]
    shown = Run(
        2,
        "pyboy",
        "kill:emulator",
        landed=True,
        exit_code=0,
        detail=r["detail"],
        session_dir=r["session_dir"],
        reported=(r["reason"], 0),
    )
    judge(shown, None, None)
    assert shown.landed, shown.detail
    # a signal sent to another pid (an actor that had just ended by itself) killed nothing
    other = Run(
        2,
        "pyboy",
        "kill:emulator",
        landed=True,
        exit_code=0,
        detail="pid 1",
        session_dir=r["session_dir"],
        reported=(r["reason"], 0),
    )
    judge(other, None, None)
    assert not other.landed and "no SIGKILL exit" in other.detail
