"""A session's journal followed as it grows: only new bytes are read, a row still being
written waits, and a page is read back by offset."""

from __future__ import annotations

import os
import shutil

from supervisor.view import sessions
from supervisor.view.track import Track

from .helpers import journal_rows
from .test_browser import demo_session


def test_a_growing_journal_is_followed_from_where_it_stopped(demo_capture, tmp_path):
    src = demo_session(demo_capture)
    sid = os.path.basename(src)
    root = tmp_path / "cap"
    dst = root / "sessions" / sid
    shutil.copytree(os.path.join(src, "observations"), dst / "observations")
    with open(os.path.join(src, "events.jsonl"), "rb") as fh:
        data = fh.read()
    lines = data.splitlines(keepends=True)
    half = len(lines) // 2
    journal = dst / "events.jsonl"
    journal.write_bytes(b"".join(lines[:half]) + lines[half][:20])  # a row being written
    t = Track(sid, str(dst), str(root))
    while t.follow(100):
        pass
    assert t.lines == half and t.tail_torn and t.offset == len(b"".join(lines[:half]))
    first = t.steps
    with open(journal, "ab") as fh:
        fh.write(lines[half][20:] + b"".join(lines[half + 1 :]))
    assert t.changed()
    read = 0
    while n := t.follow(100):
        read += n
    assert read == len(lines) - half and not t.tail_torn  # only the new lines were read
    rows = journal_rows(src)
    assert t.steps == sum(r["event"] == "observation" for r in rows) > first
    assert t.facts.facts()["accepted"] == sum(
        r["event"] == "action_result" and r["outcome"] == "accepted" for r in rows
    )
    page = sessions.page(t, 100, 100)
    want = [r["observation_id"] for r in rows if r["event"] == "observation"][100:200]
    assert [s["observation_id"] for s in page["steps"]] == want
    results = {r["attempt_id"]: r["outcome"] for r in rows if r["event"] == "action_result"}
    attempts = {r["proposal_id"]: r["attempt_id"] for r in rows if r["event"] == "action_attempt"}
    for s in page["steps"]:
        for p in s["proposals"]:
            if p["proposal_id"] in attempts:
                assert p["result"]["outcome"] == results[attempts[p["proposal_id"]]]
