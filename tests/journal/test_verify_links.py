"""Join checks and feed checks of the verifier, against careful forgeries.

Each forgery rewrites a copy of a real session with a *valid* hash chain and summary pins
(``rechain``), so only the join checks (or the feed checks) can see what changed; the
verifier must still call it damaged and name the row.
"""

from __future__ import annotations

import json
import os

import pytest

from .conftest import findings, fresh_copy, read_rows, rechain, verify

pytestmark = pytest.mark.timeout(120)


@pytest.fixture
def copy(demo_captures, tmp_path):
    ran = demo_captures.normal
    return fresh_copy(ran.root, ran.session_dir, str(tmp_path / "copy"))


def _first(rows: list[dict], event: str, nth: int = 0, **match) -> int:
    hits = [i for i, r in enumerate(rows) if r["event"] == event and all(r.get(k) == v for k, v in match.items())]
    return hits[nth]


def _damaged(report: dict, code: str) -> list[int]:
    return [f["line"] for f in findings(report, "damaged") if f["code"] == code]


def test_rechained_copy_of_an_untouched_journal_is_intact(copy):
    root, sd = copy
    rechain(sd, read_rows(sd))
    assert verify(sd)[0] == 0


def test_proposal_must_name_an_earlier_observation(copy):
    root, sd = copy
    rows = read_rows(sd)
    i = _first(rows, "proposal", 2)
    rows[i]["observation_id"] = "o-999999"
    rechain(sd, rows)
    code, report = verify(sd)
    assert code == 4 and _damaged(report, "unresolved_reference") == [i + 1]


def test_status_must_name_an_earlier_proposal(copy):
    root, sd = copy
    rows = read_rows(sd)
    i = _first(rows, "proposal_status", 3)
    j = _first(rows, "proposal", 0, proposal_id=rows[i]["proposal_id"])
    rows.insert(j, rows.pop(i))  # the status now comes before its proposal
    rechain(sd, rows)
    code, report = verify(sd)
    assert code == 4 and _damaged(report, "unresolved_reference") == [j + 1]


def test_attempt_needs_an_execute_disposition_and_the_same_observation(copy):
    root, sd = copy
    rows = read_rows(sd)
    i = _first(rows, "action_attempt", 1)
    k = _first(rows, "proposal_status", 0, proposal_id=rows[i]["proposal_id"])
    rows[k]["status"] = "wait"
    j = _first(rows, "action_attempt", 3)
    rows[j]["observation_id"] = "o-000001"
    rechain(sd, rows)
    code, report = verify(sd)
    assert code == 4
    assert _damaged(report, "attempt_not_executable") == [i + 1]
    assert _damaged(report, "attempt_observation_mismatch") == [j + 1]


def test_result_must_name_an_earlier_attempt(copy):
    root, sd = copy
    rows = read_rows(sd)
    i = _first(rows, "action_result", 2)
    rows[i]["attempt_id"] = "a-999999"
    rechain(sd, rows)
    code, report = verify(sd)
    assert code == 4 and i + 1 in _damaged(report, "unresolved_reference")


def test_after_attempt_id_only_on_the_first_read_after_an_attempt(copy):
    root, sd = copy
    rows = read_rows(sd)
    i = _first(rows, "observation", 3)
    assert "after_attempt_id" in rows[i]
    first_read = dict(rows[i])
    del rows[i]["after_attempt_id"]
    rechain(sd, rows)
    code, report = verify(sd)
    assert code == 4 and _damaged(report, "after_attempt_missing") == [i + 1]

    rows[i] = first_read
    # a read that follows another read (no attempt between) claims the same attempt
    rows.insert(i + 1, dict(first_read, observation_id="o-000000"))
    rechain(sd, rows)
    code, report = verify(sd)
    assert code == 4 and _damaged(report, "after_attempt_misplaced") == [i + 2]


def test_observation_error_may_only_name_the_last_successful_read(demo_captures, tmp_path):
    ran = demo_captures.rejecting
    root, sd = fresh_copy(ran.root, ran.session_dir, str(tmp_path / "copy"))
    rows = read_rows(sd)
    i = _first(rows, "observation_error", 0)
    rows[i]["last_observation_id"] = "o-999999"
    rechain(sd, rows)
    code, report = verify(sd)
    assert code == 4 and _damaged(report, "unresolved_reference") == [i + 1]


def test_an_attempt_without_result_must_be_listed_as_unresolved(copy):
    root, sd = copy
    rows = read_rows(sd)
    i = _first(rows, "action_result", 4)
    attempt = rows.pop(i)["attempt_id"]
    rechain(sd, rows)
    code, report = verify(sd)
    end = _first(rows, "session_end")
    assert code == 4 and end + 1 in _damaged(report, "end_mismatch")
    assert attempt in " ".join(f["message"] for f in findings(report, "damaged"))


def test_an_action_is_never_attempted_twice(copy):
    root, sd = copy
    rows = read_rows(sd)
    i = _first(rows, "action_attempt", 2)
    twin = dict(rows[i], attempt_id="a-900000")
    rows.insert(i + 1, twin)
    rechain(sd, rows)
    code, report = verify(sd)
    assert code == 4 and _damaged(report, "attempt_twice") == [i + 2]


def test_rows_must_carry_schema_version_1(copy):
    root, sd = copy
    rows = read_rows(sd)
    rows[7]["schema_version"] = 2
    rechain(sd, rows)
    code, report = verify(sd)
    assert code == 4 and _damaged(report, "schema_version") == [8]


def test_decide_feed_rows_resolve_and_are_never_counted_twice(copy):
    root, sd = copy
    path = os.path.join(root, "decisions.jsonl")
    with open(path, "rb") as fh:
        lines = fh.read().split(b"\n")[:-1]
    row = json.loads(lines[3])
    unknown = dict(row, proposal_id="p-999999")
    lines += [lines[3], json.dumps(unknown, sort_keys=True).encode()]
    with open(path, "wb") as fh:
        fh.write(b"\n".join(lines) + b"\n")
    code, report = verify(root)
    assert code == 4
    feed = {f["code"]: f["line"] for f in findings(report, "damaged")}
    assert feed == {"decide_duplicate": len(lines) - 1, "decide_unresolved": len(lines)}


def test_partial_line_inside_a_feed_is_damaged(copy):
    root, sd = copy
    path = os.path.join(root, "sessions.jsonl")
    with open(path, "rb") as fh:
        data = fh.read()
    with open(path, "wb") as fh:
        fh.write(b'{"session":"x","rec\n' + data)
    code, report = verify(root)
    assert code == 4
    assert [(f["code"], f["line"]) for f in findings(report, "damaged")] == [("feed_unparseable_row", 1)]
