"""The recording's frame budget (``maxFrames``) is visible while a session runs, ends it
with ``recording_limit`` when reached, and the shipped profile's budget fits its own
``max_steps`` of exploring steps."""

from __future__ import annotations

import re

import pytest

from actors.emulator.recording.limits import SPECS
from supervisor import profile as prof

from .conftest import PYBOY_DEMO, recording_dir

pytestmark = pytest.mark.timeout(90)


def test_the_progress_line_shows_the_frame_budget_until_it_ends_the_session(pyboy_session):
    s = pyboy_session(
        "policy.module=pyboy_explore",
        "emulator.frames_per_step=100",
        "emulator.recording_limits={maxFrames: 2000}",
        "supervisor.progress=plain",
    )
    assert s.wait(80) == 1, s.stderr[-3000:]
    assert s.summary()["reason"] == "recording_limit"
    shown = [
        (int(a.replace(",", "")), int(b.replace(",", "")))
        for a, b in re.findall(r"frames ([\d,]+)/([\d,]+) \(\d+%\)", s.stderr)
    ]
    assert shown, f"no frame budget in the progress lines:\n{s.stderr[-2000:]}"
    assert all(budget == 2000 and 0 <= run <= 2000 for run, budget in shown)
    assert shown[-1] == (2000, 2000), f"the last progress line shows the budget used up:\n{s.stderr[-2000:]}"
    assert '"limitReached": "maxFrames"' in (recording_dir(s) / "recording.json").read_text()


def test_the_shipped_profile_budget_fits_a_long_session():
    p = prof.load(PYBOY_DEMO)
    limits = p["emulator"]["recording_limits"]
    steps, frames = p["session"]["max_steps"], p["emulator"]["frames_per_step"]
    assert limits["maxFrames"] == SPECS["max_frames"].maximum, "an hour of game time, the most allowed"
    assert steps * frames + 600 <= limits["maxFrames"], "max_steps of exploring ends the session first"
    assert limits["maxWallTimeMs"] == SPECS["max_wall_time_ms"].maximum
