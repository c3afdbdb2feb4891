"""``supervisor capture frames``: the retained frames a user can clip and review, listed from
the recording's journal; and the clip refusal that points at it."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from tests.emulator.tools.evidence_helpers import play_demo
from tests.harness import REPO


@pytest.fixture(scope="module")
def played(tmp_path_factory):
    return play_demo(tmp_path_factory.mktemp("demo"))


def supervisor(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "supervisor", "capture", *args], cwd=REPO, capture_output=True, text=True, timeout=60
    )


def test_frames_lists_every_retained_frame_of_the_journal(played):
    with open(played.path / "events.jsonl", "rb") as fh:
        samples = [r for r in map(json.loads, fh) if r.get("kind") == "sample" and r.get("png")]
    r = supervisor("frames", str(played.path), "--json")
    assert r.returncode == 0, r.stderr
    listed = json.loads(r.stdout)["frames"]
    assert [(f["frame"], f["actionIndex"], f["png"]) for f in listed] == [
        (s["frame"], s["actionIndex"], s["png"]) for s in samples
    ] and samples
    text = supervisor("frames", str(played.path))
    assert f"{samples[0]['frame']:>7}" in text.stdout and "--start-frame" in text.stdout


def test_a_clip_refusal_names_the_nearest_frames_in_words(played, tmp_path):
    first = json.loads(supervisor("frames", str(played.path), "--json").stdout)["frames"][0]["frame"]
    r = supervisor(
        "clip", str(played.path), "--out", str(tmp_path / "x.gif"), "--start-frame", "0", "--end-frame", str(first)
    )
    assert r.returncode == 1 and "none before" in r.stderr and "None" not in r.stderr, r.stderr


def test_a_path_that_is_not_a_recording_is_a_usage_error(tmp_path):
    r = supervisor("frames", str(tmp_path))
    assert r.returncode == 2 and "is not a recording" in r.stderr
