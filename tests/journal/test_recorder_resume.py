"""kill -9 of the recorder mid-session, then resume: the journal continues, the torn row is
left as it is and marked, and the verifier reports incomplete evidence naming that line.

Deterministic: the supervisor is stopped (SIGSTOP) while the recorder is killed and a partial
line is appended (a torn write), then continued (SIGCONT); it restarts the recorder
(``restart: permanent``), which resumes the same journal.
"""

from __future__ import annotations

import dataclasses
import os
import signal

import pytest

from .conftest import findings, finish, popen_session, read_rows, session_dirs, verify, wait_for

pytestmark = pytest.mark.timeout(120)

TORN = b'{"event":"observation","observation_id":"o-0'


@dataclasses.dataclass
class Crash:
    session_dir: str
    exit_code: int
    torn_line: int
    prefix: bytes  # the journal's bytes up to and including the partial line
    observations_before: int
    torn_length: int = len(TORN)


def _ppid(pid: int) -> int:
    with open(f"/proc/{pid}/stat") as fh:
        return int(fh.read().rsplit(")", 1)[1].split()[1])


def _state(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0]
    except FileNotFoundError:
        return "gone"


def _observations(session_dir: str) -> int:
    return sum(1 for r in read_rows(session_dir) if r["event"] == "observation")


def crash_recorder(tmp_path, *, orphan_file: bool = False) -> Crash:
    root = str(tmp_path / "capture")
    proc = popen_session(root, str(tmp_path / "rt"), 30)
    sd = wait_for(lambda: next(iter(session_dirs(root)), None), "the session directory")
    wait_for(
        lambda: os.path.exists(os.path.join(sd, "events.jsonl")) and _observations(sd) >= 10,
        "10 observations in the journal",
    )
    journal = os.path.join(sd, "events.jsonl")
    os.kill(proc.pid, signal.SIGSTOP)
    try:
        pid = [r["pid"] for r in read_rows(sd) if r["event"] == "actor_start" and r["actor"] == "recorder"][-1]
        assert _ppid(pid) == proc.pid, "the recorder is not this supervisor's child"
        os.kill(pid, signal.SIGKILL)
        wait_for(lambda: _state(pid) in ("Z", "gone"), "the recorder to die", 10)
        with open(journal, "rb") as fh:
            before = fh.read()
        # a SIGKILL can itself cut a row that crosses a page boundary (a short write):
        # then that real torn row is the one to find; otherwise simulate one
        natural = b"" if before.endswith(b"\n") else before[before.rfind(b"\n") + 1 :]
        seen = _observations(sd)
        if orphan_file:  # the crash came after storing a read, before recording it
            name = os.path.join(sd, "observations", f"{seen + 1:06d}.json")
            with open(name, "x") as fh:
                fh.write('{"state_type": "torn"}')
        if not natural:
            with open(journal, "ab") as fh:
                fh.write(TORN)
    finally:
        os.kill(proc.pid, signal.SIGCONT)
    code, _ = finish(proc)
    if natural:
        return Crash(sd, code, before.count(b"\n") + 1, before, seen, len(natural))
    return Crash(sd, code, before.count(b"\n") + 1, before + TORN, seen)


def test_kill_9_of_the_recorder_resumes_the_same_journal_and_verify_names_the_torn_row(tmp_path):
    crash = crash_recorder(tmp_path)
    assert crash.exit_code == 0
    with open(os.path.join(crash.session_dir, "events.jsonl"), "rb") as fh:
        after = fh.read()
    assert after.startswith(crash.prefix + b"\n"), "an earlier byte of the journal was rewritten"
    rows = read_rows(crash.session_dir)
    assert [r["sequence"] for r in rows] == list(range(1, len(rows) + 1))
    resumed = [
        r
        for r in rows
        if r["event"] == "recorder_resumed" and any(t["line"] == crash.torn_line for t in r["torn_rows"])
    ]
    assert len(resumed) == 1
    torn = resumed[0]["torn_rows"]
    assert torn == [
        {
            "line": crash.torn_line,
            "offset": len(crash.prefix) - crash.torn_length,
            "length": crash.torn_length,
            "sha256": torn[0]["sha256"],
            "terminated": False,
        }
    ]
    assert resumed[0]["resumed_after_sequence"] == resumed[0]["sequence"] - 1
    assert any(r["event"] == "actor_restart" and r["actor"] == "recorder" for r in rows)
    assert rows[-1]["event"] == "session_end" and rows[-1]["reason"] == "max_steps"
    assert _observations(crash.session_dir) > crash.observations_before

    code, report = verify(crash.session_dir)
    assert code == 3 and report["verdict"] == "incomplete"
    assert [(f["code"], f["line"]) for f in findings(report) if f["severity"] != "note"] == [
        ("torn_row", crash.torn_line)
    ]
    code, text = verify(os.path.dirname(os.path.dirname(crash.session_dir)), json_out=False, process=True)
    assert code == 3 and f"line {crash.torn_line}" in text and "INCOMPLETE (exit 3)" in text


def test_resume_after_a_crash_between_storing_a_read_and_recording_it(tmp_path):
    """The orphan observation file is left as it is; its number is skipped."""
    crash = crash_recorder(tmp_path, orphan_file=True)
    rows = read_rows(crash.session_dir)
    assert rows[-1]["event"] == "session_end" and rows[-1]["reason"] == "max_steps"
    assert crash.exit_code == 0
    code, report = verify(crash.session_dir)
    assert code == 3 and {f["code"] for f in findings(report, "incomplete")} == {"torn_row"}
