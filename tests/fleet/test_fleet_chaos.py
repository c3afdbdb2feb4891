"""The quick variant of the fleet fault campaign (``bench/fleet_chaos.py``; the full campaign and
its figures are in docs/reliability.md, "Fleet fault campaign").

Three real fleets of two sessions of the built-in game, each struck once while a session runs:
the driver's whole process group killed and then, at a random moment, its resume's; a SIGTERM
to the driver; one session's supervisor killed while the driver lives. Each is finished with
``fleet start --resume`` and judged against the same fleet run without faults. The tests check
the campaign's report, then in the kept evidence that each fault did what it says, and that
the judge is able to fail.
"""

from __future__ import annotations

import json
import os
import shutil
import sys

import pytest

from tests.fleet.helpers import QUICK_FAULTS, attempt, journal, quick_campaign
from tests.harness import REPO

sys.path.insert(0, os.path.join(REPO, "bench"))  # bench/ is not a package
import fleet_chaos

pytestmark = pytest.mark.timeout(300)


@pytest.fixture(scope="module")
def campaign(tmp_path_factory):
    done = quick_campaign(tmp_path_factory)
    assert done["report"] is not None, done["stderr"]
    return done, {t["fault"]: t for t in done["report"]["runs"]}


def sessions_of(root: str, slot: str) -> list[list[dict]]:
    """The journals of a slot's sessions, oldest first (by their first row's time)."""
    base = os.path.join(root, slot, "capture", "sessions")
    found = [journal(os.path.join(base, sid)) for sid in os.listdir(base)]
    return sorted(found, key=lambda rows: rows[0]["recorded_at"])


def test_every_fault_lands_and_no_trial_breaks_a_promise(campaign):
    done, trials = campaign
    report = done["report"]
    assert [t["fault"] for t in report["runs"]] == QUICK_FAULTS
    assert all(t["landed"] for t in report["runs"]), [(t["fault"], t["detail"]) for t in report["runs"]]
    assert report["violating_trials"] == 0, [(t["fault"], t["violations"]) for t in report["runs"]]
    assert done["returncode"] == 0, done["stderr"]
    assert all(t["rows"] == 2 for t in report["runs"])
    # a kill mid-session always cuts one (a SIGTERM may reach a session as it ends by itself)
    assert trials["resume:kill"]["reruns"] >= 1 and trials["supervisor:kill"]["reruns"] == 1


def test_a_session_the_dying_driver_stopped_runs_again_rather_than_failing(campaign):
    """The driver's process group killed while a session runs: the session's supervisor gets its
    parent-death SIGTERM and finalizes (reason sigterm); the resume runs it again and its row is
    the unfaulted fleet's, with the reason in its detail, never a failed cell no game caused."""
    _, trials = campaign
    trial = trials["resume:kill"]
    assert [d["kind"] for d in trial["drivers"]][:2] == ["start", "resume"] and trial["drivers"][0]["code"] == -9
    rows = {r["slot"]: r for r in map(json.loads, open(os.path.join(trial["root"], "results.jsonl")))}
    stopped = 0
    for slot, row in rows.items():
        journals = sessions_of(trial["root"], slot)
        assert row["outcome"] == "ok" and row["attempts"] >= len(journals), row
        for cut in journals[:-1]:
            end = cut[-1]
            if end["event"] == "session_end":  # told to stop by the dying driver (or the killed resume)
                assert end["reason"] == "sigterm" and end["exit_code"] == 143
                stopped += 1
        if len(journals) > 1:
            assert "told to stop before its end" in row["detail"] and "run again" in row["detail"], row["detail"]
    assert stopped >= 1


def test_a_signal_to_the_driver_leaves_the_fleet_to_its_resume(campaign):
    _, trials = campaign
    trial = trials["driver:term"]
    assert [(d["kind"], d["code"]) for d in trial["drivers"]] == [("start", 143), ("resume", 0)]
    log = open(os.path.join(os.path.dirname(trial["root"]), "drivers.log"), encoding="utf-8").read()
    assert f"resume  supervisor fleet start --resume {trial['root']}" in log
    assert "interrupted by SIGTERM; stopping" in log


def test_a_killed_supervisor_is_judged_by_its_journal_and_run_again(campaign):
    """SIGKILL of one supervisor while the driver lives is not a failure of the session: its
    journal proves no action in flight, so the driver runs it again."""
    _, trials = campaign
    trial = trials["supervisor:kill"]
    slot = trial["detail"].split()[0]
    row = next(r for r in map(json.loads, open(os.path.join(trial["root"], "results.jsonl"))) if r["slot"] == slot)
    assert (row["outcome"], row["attempts"]) == ("ok", 2), row
    assert "lost (its supervisor (pid" in row["detail"] and "killed by SIGKILL" in row["detail"], row["detail"]
    first = attempt(trial["root"], slot, 1)
    assert first["lost"] and first["exit_code"] is None
    cut = sessions_of(trial["root"], slot)[0]
    assert all(r["event"] != "session_end" for r in cut)  # killed: nothing finalized it


def test_the_judge_catches_a_session_run_twice_and_a_result_that_differs(campaign, tmp_path):
    done, trials = campaign
    trial = trials["driver:term"]
    root = str(tmp_path / "root")
    shutil.copytree(trial["root"], root)
    path = os.path.join(root, "results.jsonl")
    rows = [json.loads(line) for line in open(path, encoding="utf-8")]
    reference = [json.loads(line) for line in open(os.path.join(done["keep"], "reference", "root", "results.jsonl"))]
    with open(path, "w", encoding="utf-8") as fh:
        for r in rows + [dict(rows[0], steps=rows[0]["steps"] - 1)]:
            fh.write(json.dumps(r) + "\n")
    judged = fleet_chaos.Trial(0, "driver:term", root=root, drivers=[{"kind": "resume", "code": 0}])
    fleet_chaos.judge(judged, 2, reference)
    twice = sorted([0, 1, rows[0]["index"]])
    assert f"rows for sessions {twice}, planned [0, 1]" in judged.violations, judged.violations
    assert any("differs from the unfaulted fleet" in v and "'steps'" in v for v in judged.violations)
