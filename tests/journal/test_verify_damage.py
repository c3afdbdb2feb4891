"""``supervisor capture verify`` on a real capture and on damaged copies of it.

Every damage here is made to a copy of a real session's capture; the verifier must call it
damaged (exit 4) and name the row concerned, or incomplete (exit 3) for torn and cut-off
journals, and exit 0 only for the untouched capture.
"""

from __future__ import annotations

import json
import os

import pytest

from .conftest import codes, findings, fresh_copy, line_of, read_lines, read_rows, verify, write_lines

pytestmark = pytest.mark.timeout(120)


@pytest.fixture
def copy(demo_captures, tmp_path):
    """A fresh copy of the normal session's capture root: (root, session dir)."""
    ran = demo_captures.normal
    return fresh_copy(ran.root, ran.session_dir, str(tmp_path / "copy"))


def _edit(session_dir: str, line: int, change) -> None:
    lines = read_lines(session_dir)
    row = json.loads(lines[line - 1])
    change(row)
    lines[line - 1] = json.dumps(row, sort_keys=True, separators=(",", ":")).encode()
    write_lines(session_dir, lines)


def _named(report: dict, code: str) -> list[dict]:
    return [f for f in findings(report) if f["code"] == code]


def test_real_capture_is_complete_and_intact(demo_captures):
    for path in (demo_captures.normal.session_dir, demo_captures.normal.root):
        code, report = verify(path)
        assert code == 0, findings(report)
        assert report["verdict"] == "intact" and report["exit_code"] == 0
        assert not [f for f in findings(report) if f["severity"] != "note"]
    code, text = verify(demo_captures.normal.root, json_out=False, process=True)
    assert code == 0 and "verdict: INTACT (exit 0)" in text


def test_root_report_lists_every_session_and_both_feeds(demo_captures):
    code, report = verify(demo_captures.normal.root)
    assert code == 0
    assert report["kind"] == "capture_root"
    names = {s["session"] for s in report["sessions"]}
    assert {
        os.path.basename(demo_captures.normal.session_dir),
        os.path.basename(demo_captures.dry_run.session_dir),
    } <= names
    assert [f["name"] for f in report["feeds"]] == ["decisions.jsonl", "sessions.jsonl"]
    assert all(f["exists"] and f["rows"] > 0 for f in report["feeds"])


def test_usage_errors_exit_2(tmp_path):
    assert verify(str(tmp_path / "nowhere"), process=True)[0] == 2
    (tmp_path / "plain").mkdir()
    code, report = verify(str(tmp_path / "plain"))
    assert code == 2 and "neither a session directory" in report["error"]


def test_edited_row_is_damaged_and_named(copy):
    root, sd = copy
    n = line_of(sd, lambda r: r["event"] == "proposal", 3)
    _edit(sd, n, lambda r: r.update(reason="edited afterwards"))
    code, report = verify(sd)
    assert code == 4
    assert [(f["line"], f["event"]) for f in _named(report, "row_changed")] == [(n, "proposal")]


def test_hand_edit_that_breaks_canonical_encoding_names_the_row(copy):
    root, sd = copy
    n = line_of(sd, lambda r: r["event"] == "action_result", 2)
    lines = read_lines(sd)
    lines[n - 1] = lines[n - 1].replace(b'"outcome":"accepted"', b'"outcome": "rejected"')
    write_lines(sd, lines)
    code, report = verify(sd)
    assert code == 4
    assert n in {f["line"] for f in _named(report, "non_canonical_row")}


def test_reordered_rows_are_damaged(copy):
    root, sd = copy
    n = line_of(sd, lambda r: r["event"] == "observation", 5)
    lines = read_lines(sd)
    lines[n - 1], lines[n] = lines[n], lines[n - 1]
    write_lines(sd, lines)
    code, report = verify(sd)
    assert code == 4
    named = {f["line"] for f in findings(report, "damaged")}
    assert {"rows_missing", "rows_out_of_order"} <= codes(report, "damaged")
    assert named and min(named) == n and max(named) <= n + 1


def test_removed_middle_row_is_damaged_and_the_gap_named(copy):
    root, sd = copy
    n = line_of(sd, lambda r: r["event"] == "proposal_status", 4)
    lines = read_lines(sd)
    removed = json.loads(lines.pop(n - 1))
    write_lines(sd, lines)
    code, report = verify(sd)
    assert code == 4
    gap = _named(report, "rows_missing")
    assert [(f["line"], f["sequence"]) for f in gap] == [(n, removed["sequence"] + 1)]
    assert f"sequence {removed['sequence']} is missing" in gap[0]["message"]


def test_truncation_after_the_summary_is_damaged(copy):
    root, sd = copy
    lines = read_lines(sd)
    write_lines(sd, lines[:-3])
    code, report = verify(sd)
    assert code == 4
    cut = _named(report, "journal_truncated")
    assert len(cut) == 1 and cut[0]["line"] == len(lines) - 3


def test_tampered_observation_file_is_damaged_and_its_row_named(copy):
    root, sd = copy
    row = [r for r in read_rows(sd) if r["event"] == "observation"][4]
    path = os.path.join(root, row["path"])
    with open(path, "rb") as fh:
        data = fh.read()
    with open(path, "wb") as fh:
        fh.write(data.replace(b"{", b"{ ", 1))
    code, report = verify(sd)
    assert code == 4
    hit = _named(report, "observation_changed")
    assert [f["line"] for f in hit] == [
        line_of(sd, lambda r: r.get("observation_id") == row["observation_id"] and r["event"] == "observation")
    ]


def test_missing_observation_file_is_damaged(copy):
    root, sd = copy
    row = [r for r in read_rows(sd) if r["event"] == "observation"][2]
    os.remove(os.path.join(root, row["path"]))
    code, report = verify(sd)
    assert code == 4 and "observation_missing" in codes(report, "damaged")


def test_summary_that_disagrees_with_the_journal_is_damaged(copy):
    root, sd = copy
    path = os.path.join(sd, "session.json")
    with open(path) as fh:
        summary = json.load(fh)
    summary["steps"] += 1
    summary["action_results"]["rejected"] += 1
    with open(path, "w") as fh:
        json.dump(summary, fh)
    code, report = verify(sd)
    assert code == 4
    assert {f["field"] for f in _named(report, "summary_mismatch")} == {"steps", "action_results"}


def test_summary_pin_of_the_last_row_detects_an_edit_of_the_last_row(copy):
    root, sd = copy
    n = len(read_lines(sd))
    _edit(sd, n, lambda r: r.update(reason="rewritten"))
    code, report = verify(sd)
    assert code == 4
    assert [f["line"] for f in _named(report, "last_row_changed")] == [n]


def test_rows_appended_after_finalization_are_damaged(copy):
    root, sd = copy
    lines = read_lines(sd)
    last = json.loads(lines[-1])
    write_lines(sd, lines + [lines[-1]])
    code, report = verify(sd)
    assert code == 4
    assert (len(lines) + 1, last["sequence"]) in {(f["line"], f["sequence"]) for f in findings(report, "damaged")}


def test_session_id_must_match_the_directory(copy, tmp_path):
    root, sd = copy
    other = os.path.join(os.path.dirname(sd), "20990101T000000Z-" + "0" * 32)
    os.rename(sd, other)
    code, report = verify(other)
    assert code == 4 and "session_mismatch" in codes(report, "damaged")


def test_torn_last_line_is_incomplete_and_named(copy):
    root, sd = copy
    lines = read_lines(sd)
    with open(os.path.join(sd, "events.jsonl"), "ab") as fh:
        fh.write(b'{"event":"observation","seq')
    code, report = verify(sd)
    assert code == 3
    torn = _named(report, "torn_last_row")
    assert [(f["severity"], f["line"]) for f in torn] == [("incomplete", len(lines) + 1)]
    assert codes(report, "damaged") == set()


def test_unnamed_non_json_line_in_the_middle_is_damaged(copy):
    root, sd = copy
    lines = read_lines(sd)
    lines.insert(40, b'{"event":"observ')
    write_lines(sd, lines)
    code, report = verify(sd)
    assert code == 4
    assert [f["line"] for f in _named(report, "unparseable_row")] == [41]


def test_no_summary_is_incomplete(copy):
    root, sd = copy
    os.remove(os.path.join(sd, "session.json"))
    code, report = verify(sd)
    assert code == 3 and codes(report, "incomplete") == {"summary_missing"}


def test_cut_off_session_without_session_end_is_incomplete(copy):
    root, sd = copy
    os.remove(os.path.join(sd, "session.json"))
    end = line_of(sd, lambda r: r["event"] == "session_end")
    write_lines(sd, read_lines(sd)[: end - 1])
    code, report = verify(sd)
    assert code == 3
    assert {"no_session_end", "summary_missing"} <= codes(report, "incomplete")
    assert codes(report, "damaged") == set()


def test_damaged_wins_over_incomplete(copy):
    root, sd = copy
    _edit(sd, 12, lambda r: r.update(injected=True))
    with open(os.path.join(sd, "events.jsonl"), "ab") as fh:
        fh.write(b'{"torn')
    code, report = verify(sd)
    assert code == 4 and report["verdict"] == "damaged"
    assert codes(report, "incomplete") and codes(report, "damaged")


def test_empty_journal_is_incomplete(copy):
    root, sd = copy
    os.remove(os.path.join(sd, "session.json"))
    write_lines(sd, [], terminated=False)
    code, report = verify(sd)
    assert code == 3 and "journal_empty" in codes(report, "incomplete")


def test_unreferenced_files_and_missing_feed_rows_are_notes(copy):
    root, sd = copy
    with open(os.path.join(sd, "observations", "999999.json"), "w") as fh:
        fh.write("{}")
    path = os.path.join(root, "decisions.jsonl")
    with open(path, "rb") as fh:
        lines = fh.read().split(b"\n")[:-1]
    sid = os.path.basename(sd)
    mine = [i for i, ln in enumerate(lines) if json.loads(ln)["session"] == sid]
    del lines[mine[2]]
    with open(path, "wb") as fh:
        fh.write(b"\n".join(lines) + b"\n")
    code, report = verify(root)
    assert code == 0
    assert codes(report, "note") == {"orphan_observation_file", "decide_missing"}


def test_progress_goes_to_stderr_only_when_it_is_a_terminal(demo_captures):
    import pty
    import subprocess

    from .conftest import REPO, SUPERVISOR

    master, slave = pty.openpty()
    try:
        proc = subprocess.run(
            [SUPERVISOR, "capture", "verify", demo_captures.normal.root],
            cwd=REPO,
            stdout=subprocess.PIPE,
            stderr=slave,
            timeout=60,
        )
        os.close(slave)
        slave = -1
        tty_err = b""
        while True:
            try:
                chunk = os.read(master, 4096)
            except OSError:
                break
            if not chunk:
                break
            tty_err += chunk
    finally:
        os.close(master)
        if slave != -1:
            os.close(slave)
    assert proc.returncode == 0 and b"verifying 1/2 sessions" in tty_err
    assert b"verifying" not in proc.stdout
    piped = subprocess.run(
        [SUPERVISOR, "capture", "verify", demo_captures.normal.root], cwd=REPO, capture_output=True, timeout=60
    )
    assert piped.returncode == 0 and piped.stderr == b""


def test_a_named_torn_line_stays_torn_even_if_it_parses(copy):
    """A write cut just before its newline leaves a whole JSON object; once a resumed
    recorder ends that line and names it in recorder_resumed, it is still a torn row."""
    from protocol.journal import encode_row, line_digest

    root, sd = copy
    os.remove(os.path.join(sd, "session.json"))
    end = line_of(sd, lambda r: r["event"] == "session_end")
    lines = read_lines(sd)[: end - 1]
    last = json.loads(lines[-1])
    torn = encode_row(
        dict(last, sequence=last["sequence"] + 1, prev_sha256=line_digest(lines[-1]), event="observation_error")
    )
    offset = sum(len(ln) + 1 for ln in lines)
    resumed = encode_row(
        {
            **{k: last[k] for k in ("schema_version", "session", "ts")},
            "recorded_at": last["recorded_at"],
            "event": "recorder_resumed",
            "sequence": last["sequence"] + 1,
            "prev_sha256": line_digest(lines[-1]),
            "start_count": 2,
            "resumed_after_sequence": last["sequence"],
            "torn_rows": [
                {
                    "line": len(lines) + 1,
                    "offset": offset,
                    "length": len(torn),
                    "sha256": line_digest(torn),
                    "terminated": False,
                }
            ],
        }
    )
    write_lines(sd, lines + [torn, resumed])
    code, report = verify(sd)
    assert code == 3 and codes(report, "damaged") == set()
    assert [(f["code"], f["line"]) for f in findings(report, "incomplete") if f["code"] == "torn_row"] == [
        ("torn_row", len(lines) + 1)
    ]
