"""``supervisor attach metrics-tap --plain | head``: when the reader of its output goes away,
the tap detaches quietly (no traceback) and the session goes on."""

from __future__ import annotations

import subprocess
import sys

from tests.harness import DEMO, REPO, Session, wait_for


def test_a_closed_pipe_detaches_the_tap_without_a_traceback(tmp_path):
    s = Session(str(tmp_path / "s"), DEMO, "session.stop_on_run_end=false", "session.max_steps=20000")
    try:
        wait_for(lambda: len(s.events("observation")) > 5, 30, "steps")
        r = subprocess.run(
            f"{sys.executable} -m supervisor attach metrics-tap --plain --interval 0.2 "
            f"--runtime-dir {s.runtime} | head -n 2",
            shell=True,
            cwd=REPO,
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert len(r.stdout.splitlines()) == 2 and r.stdout.startswith("seq "), r.stdout
        assert "Traceback" not in r.stderr and "BrokenPipe" not in r.stderr and "detached" in r.stderr, r.stderr
        before = len(s.events("observation"))
        wait_for(lambda: len(s.events("observation")) > before + 5, 30, "the session to go on")
        wait_for(lambda: s.events("tap_detached"), 10, "the tap's detach recorded")
    finally:
        if s.proc.poll() is None:
            s.proc.kill()
        s.proc.communicate()
