"""The retry rule's evidence read from journal files: attempts with and without results, torn
lines, lines that do not parse. (The whole rule, with real sessions and a killed Ray worker,
is in test_ray.py.)"""

from __future__ import annotations

import json

from supervisor.fleet.inflight import judge


def _journal(tmp_path, sid: str, lines: list) -> str:
    d = tmp_path / "capture" / "sessions" / sid
    d.mkdir(parents=True)
    text = "".join((json.dumps(x) + "\n") if isinstance(x, dict) else x for x in lines)
    (d / "events.jsonl").write_text(text, encoding="utf-8")
    return str(tmp_path / "capture")


START = {"event": "session_start"}


def attempt(n: int) -> dict:
    return {"event": "action_attempt", "attempt_id": f"a-{n:06d}"}


def result(n: int) -> dict:
    return {"event": "action_result", "attempt_id": f"a-{n:06d}", "outcome": "accepted"}


def test_every_attempt_with_a_result_proves_nothing_was_in_flight(tmp_path):
    root = _journal(tmp_path, "s1", [START, attempt(1), result(1), attempt(2), result(2)])
    v = judge(root, ["s1"])
    assert v.idle and v.detail == "all 2 action attempt(s) have a result"


def test_an_attempt_without_a_result_needs_review(tmp_path):
    root = _journal(tmp_path, "s1", [START, attempt(1), result(1), attempt(2)])
    v = judge(root, ["s1"])
    assert not v.idle and v.open_attempts == ["a-000002"]


def test_no_journal_or_no_attempts_means_nothing_was_sent(tmp_path):
    root = _journal(tmp_path, "s1", [START])
    assert judge(root, ["s1"]).idle and judge(root, []).idle
    assert judge(root, ["s1"]).detail == "no action attempt was recorded, so none was sent"


def test_a_torn_last_row_was_never_acknowledged_but_a_torn_result_leaves_its_attempt_open(tmp_path):
    torn_attempt = _journal(tmp_path / "a", "s1", [START, attempt(1), result(1), '{"event": "action_att'])
    assert judge(torn_attempt, ["s1"]).idle
    torn_result = _journal(tmp_path / "b", "s1", [START, attempt(1), '{"event": "action_res'])
    assert judge(torn_result, ["s1"]).open_attempts == ["a-000001"]


def test_an_unreadable_middle_line_proves_nothing_unless_the_recorder_named_it_torn(tmp_path):
    bad = _journal(tmp_path / "a", "s1", [START, "not json\n", attempt(1), result(1)])
    v = judge(bad, ["s1"])
    assert not v.idle and "line 2 does not parse" in v.detail
    resumed = _journal(
        tmp_path / "b", "s1", [START, '{"event": "act\n', {"event": "recorder_resumed"}, attempt(1), result(1)]
    )
    assert judge(resumed, ["s1"]).idle
