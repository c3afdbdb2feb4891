"""Dispositions: suppressed duplicates and dry-run previews have proposals but no attempts;
only executed proposals and previews reach decisions.jsonl; exclusive creation."""

from __future__ import annotations

import json
import os

import pytest

from actors.recorder import files

pytestmark = pytest.mark.timeout(120)
DELAYED = "game.knobs={effect_delay_reads: 2}"


def _decide_rows(s):
    path = os.path.join(s.capture, "decisions.jsonl")
    with open(path, encoding="utf-8") as fh:
        return [json.loads(line) for line in fh]


def test_suppressed_duplicates_and_waits_have_no_attempt_and_no_decide_row(session_factory):
    s = session_factory(DELAYED, args=("--max-steps", "40"))
    assert s.wait() == 0, s.stderr
    status = {r["proposal_id"]: r["status"] for r in s.events("proposal_status")}
    assert "suppressed" in status.values(), "an unchanged read after an action is a duplicate"
    attempted = {r["proposal_id"] for r in s.events("action_attempt")}
    assert attempted == {p for p, st in status.items() if st == "execute"}
    decide = _decide_rows(s)
    assert {d["proposal_id"] for d in decide} == attempted
    assert all(d["event"] == "decide" and d["disposition"] == "execute" for d in decide)
    props = {r["proposal_id"]: r for r in s.events("proposal")}
    for pid, st in status.items():
        if st == "suppressed":  # the duplicate names the action it would have repeated
            assert props[pid]["action"] and "duplicate" in props[pid]["reason"]


def test_dry_run_previews_are_decide_rows_and_never_feed_suppression(session_factory):
    s = session_factory(DELAYED, args=("--dry-run", "--max-steps", "10"))
    assert s.wait() == 0, s.stderr
    assert {r["status"] for r in s.events("proposal_status")} == {"dry_run"}
    decide = _decide_rows(s)
    assert len(decide) == 10 and {d["disposition"] for d in decide} == {"dry_run"}
    assert {d["proposal_id"] for d in decide} == {r["proposal_id"] for r in s.events("proposal")}


def test_session_directories_and_observation_files_are_created_exclusively(tmp_path):
    root = str(tmp_path)
    files.create_session_dir(root, "S")
    with pytest.raises(FileExistsError):
        files.create_session_dir(root, "S")
    rel = files.observation_relpath("S", 1)
    files.write_observation(root, rel, {"state_type": "menu"})
    before = open(os.path.join(root, rel), "rb").read()
    with pytest.raises(FileExistsError):
        files.write_observation(root, rel, {"state_type": "other"})
    assert open(os.path.join(root, rel), "rb").read() == before
