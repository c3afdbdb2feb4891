"""``supervisor stop`` as a user runs it, against a real running session: it returns once the
session is finalized (``capture verify`` right after it is clean), or at once with
``--no-wait``."""

from __future__ import annotations

import subprocess
import sys

from tests.harness import DEMO, REPO, Session, wait_for


def supervisor(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "supervisor", *args], cwd=REPO, capture_output=True, text=True, timeout=90
    )


def test_stop_returns_after_the_finalize_so_verify_right_after_is_clean(tmp_path):
    s = Session(str(tmp_path / "s"), DEMO, "session.stop_on_run_end=false", "session.max_steps=20000")
    try:
        wait_for(lambda: len(s.events("observation")) > 20, 30, "twenty steps")
        r = supervisor("stop", "--runtime-dir", s.runtime)
        assert r.returncode == 0 and "finalized" in r.stdout, r.stdout + r.stderr
        v = supervisor("capture", "verify", s.capture)  # at once, no waiting
        assert v.returncode == 0, v.stdout + v.stderr
        assert "sessions_row_missing" not in v.stdout
    finally:
        if s.proc.poll() is None:
            s.proc.kill()
        s.proc.communicate()


def test_no_wait_returns_once_the_stop_is_accepted(tmp_path):
    s = Session(str(tmp_path / "s"), DEMO, "session.stop_on_run_end=false", "session.max_steps=20000")
    try:
        wait_for(lambda: len(s.events("observation")) > 20, 30, "twenty steps")
        r = supervisor("stop", "--runtime-dir", s.runtime, "--no-wait", "--json")
        assert r.returncode == 0 and '"finalized": null' in r.stdout, r.stdout + r.stderr
        assert s.wait(60) in (0, 130)
        assert s.summary()["reason"]
    finally:
        if s.proc.poll() is None:
            s.proc.kill()
