"""SIGINT and SIGTERM to the supervisor finalize the session: a ``session_end`` row with the
signal as its reason, a ``session.json``, a ``sessions.jsonl`` row, and a capture that
verifies as complete and intact. The same two runs check the outcome-file attribution: a
file that appears in ``capture.outcome_dir`` during the session is a candidate, and a
failed attribution is an ``outcome_error`` that leaves the exit status alone.
"""

from __future__ import annotations

import json
import os
import shutil
import signal

import pytest

from .conftest import finish, popen_session, read_rows, session_dirs, verify, wait_for

pytestmark = pytest.mark.timeout(120)


def _observations(sd: str) -> int:
    if not os.path.exists(os.path.join(sd, "events.jsonl")):
        return 0
    return sum(1 for r in read_rows(sd) if r["event"] == "observation")


def _feed(root: str) -> list[dict]:
    with open(os.path.join(root, "sessions.jsonl")) as fh:
        return [json.loads(ln) for ln in fh]


def test_sigint_and_sigterm_finalize_the_session(tmp_path):
    runs = {}
    for sig in (signal.SIGINT, signal.SIGTERM):
        root, outcomes = str(tmp_path / sig.name), tmp_path / f"outcomes-{sig.name}"
        outcomes.mkdir()
        (outcomes / "before.run").write_text("{}")
        proc = popen_session(root, str(tmp_path / f"rt-{sig.name}"), 5000, "--set", f"capture.outcome_dir={outcomes}")
        runs[sig] = (root, outcomes, proc)
    for sig, (root, outcomes, proc) in runs.items():
        sd = wait_for(lambda: next(iter(session_dirs(root)), None), "the session directory")
        wait_for(lambda: _observations(sd) >= 5, f"5 observations before {sig.name}")
        if sig == signal.SIGTERM:
            (outcomes / "new.run").write_text("{}")
        else:
            shutil.rmtree(outcomes)  # attribution will fail
        proc.send_signal(sig)
    for sig, (root, _outcomes, proc) in runs.items():
        code, out = finish(proc)
        sd = session_dirs(root)[0]
        rows = read_rows(sd)
        reason = sig.name.lower()
        assert code == {"sigint": 130, "sigterm": 143}[reason], out
        assert rows[-1]["event"] == "session_end" and rows[-1]["reason"] == reason
        with open(os.path.join(sd, "session.json")) as fh:
            assert json.load(fh)["reason"] == reason
        feed = _feed(root)
        assert [r["reason"] for r in feed] == [reason]
        if sig == signal.SIGTERM:
            assert rows[-1]["outcome_file_candidates"] == ["new.run"]
            assert feed[0]["outcome_files"] == ["new.run"] and "outcome_error" not in feed[0]
        else:
            errors = [r for r in rows if r["event"] == "outcome_error"]
            assert len(errors) == 1 and rows[-1]["outcome_file_candidates"] is None
            assert feed[0]["outcome_error"] and feed[0]["exit_code"] == 130
        assert verify(root)[0] == 0
