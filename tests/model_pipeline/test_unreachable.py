"""A model server that is not there is never silent: ``supervisor start``'s last lines,
``capture coverage``, ``capture audit`` and the fleet's results say so, and
``model.on_unreachable: stop`` ends the session (exit 1, ``model_unreachable``)."""

from __future__ import annotations

import os
import socket
import subprocess
import sys

from supervisor.fleet.report import table
from supervisor.fleet.results import journal_facts
from tests.harness import REPO, Session

MODEL_DEMO = os.path.join(REPO, "run", "profiles", "model-demo.yaml")


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]  # nothing listens once it is closed


def capture_cmd(*args: str) -> str:
    r = subprocess.run(
        [sys.executable, "-m", "supervisor", "capture", *args], cwd=REPO, capture_output=True, text=True, timeout=60
    )
    return r.stdout + r.stderr


def test_a_model_that_never_answers_is_said_everywhere(tmp_path):
    s = Session(
        str(tmp_path / "s"),
        MODEL_DEMO,
        f"model.base_url=http://127.0.0.1:{closed_port()}/v1",
        "model.on_unreachable=fallback",
    )
    assert s.wait(120) == 0, s.stderr[-2000:]
    errors = s.events("model_error")
    assert errors and all(e["kind"] == "transport" for e in errors)
    n = len(errors)
    assert f"model 0 answers, {n} errors (transport {n})" in s.stderr, s.stderr[-800:]
    assert "warning: the model never answered" in s.stderr
    assert f"model errors: {n} in 1 session(s), 0 answers; never answered in" in capture_cmd("coverage", s.capture)
    assert "the model never answered" in capture_cmd("audit", s.session_dir)
    facts = journal_facts(s.session_dir)
    assert (facts["model_errors"], facts["model_answers"]) == (n, 0)
    row = {
        "index": 0,
        "slot": "s0000",
        "cell": "-",
        "outcome": "ok",
        "steps": facts["steps"],
        "runs": 0,
        "wins": 0,
        "duration_s": 1.0,
        **facts,
    }
    assert f"model errors: {n} in 1 sessions; 1 never got an answer (slots s0000)" in table([row])


def test_on_unreachable_stop_ends_the_session_after_the_questions_in_a_row(tmp_path):
    s = Session(
        str(tmp_path / "s"),
        MODEL_DEMO,
        f"model.base_url=http://127.0.0.1:{closed_port()}/v1",
        "model.on_unreachable=stop",
        "model.unreachable_after=2",
    )
    assert s.wait(120) == 1, s.stderr[-2000:]
    assert s.summary()["reason"] == "model_unreachable"
    assert len(s.events("model_error")) >= 2
    assert "session ended: model_unreachable (exit 1)" in s.stderr


def test_the_profile_refuses_a_bad_on_unreachable(tmp_path):
    r = subprocess.run(
        [sys.executable, "-m", "supervisor", "validate", MODEL_DEMO, "--set", "model.on_unreachable=maybe"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert r.returncode == 2 and "model.on_unreachable" in r.stderr and "fallback, stop" in r.stderr, r.stderr
