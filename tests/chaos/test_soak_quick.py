"""The quick variant of the soak (``bench/soak.py``; the long soak and its last figures are in
docs/reliability.md, "Long runs").

One real session of the demo profile played past its first run, sampled for RSS per actor,
with the recorder killed (SIGKILL) twice along the way. The command's report must show every
actor sampled, a resume time for each kill, and the session ending by its step budget; the
kept journal must show the two ``recorder_resumed`` rows, and ``capture verify`` must find the
session intact. (Memory growth and resume times are figures for the bench, not assertions:
a timed test on a shared machine would be a coin toss.)
"""

from __future__ import annotations

import glob
import json
import os
import re
import subprocess
import sys

import pytest

from tests.harness import REPO

pytestmark = pytest.mark.timeout(180)

ACTORS = ("recorder", "game", "policy", "actuator", "observer", "supervisor")


def test_quick_soak_samples_every_actor_and_times_each_recorder_resume(tmp_path):
    capture = tmp_path / "capture"
    capture.mkdir()
    out = subprocess.run(
        [
            sys.executable,
            os.path.join(REPO, "bench", "soak.py"),
            "--steps",
            "400",
            "--profile",
            "demo",
            "--every",
            "1",
            "--kill-recorder-at",
            "120,260",
            "--capture",
            str(capture),
        ],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=170,
    )
    assert out.returncode == 0, out.stdout + out.stderr
    report = out.stdout
    assert "session exit code 0; " in report, report
    for actor in ACTORS:
        assert re.search(rf"^{actor}\s+\d+\.\d+\s+\d+\.\d+\s+", report, re.M), f"{actor} not sampled:\n{report}"
    resumes = re.findall(r"recorder killed at (\d+) rows: resumed in (\d+\.\d+)", report)
    assert len(resumes) == 2, report
    assert int(resumes[0][0]) < int(resumes[1][0])

    journal = glob.glob(str(capture / "sessions" / "*" / "events.jsonl"))
    assert len(journal) == 1
    with open(journal[0], encoding="utf-8") as fh:
        events = [json.loads(line)["event"] for line in fh]
    assert events.count("recorder_resumed") == 2
    assert events[-1] == "session_end"
    verify = subprocess.run(
        [sys.executable, "-m", "supervisor", "capture", "verify", os.path.dirname(journal[0]), "--json"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert verify.returncode == 0, verify.stdout + verify.stderr
