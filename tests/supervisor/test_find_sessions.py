"""``status``, ``stop`` and ``attach`` find the user's running sessions from any folder (the
per-user registry, ``supervisor.rundir``), and say where they looked when there is none."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from tests.harness import DEMO, Session, wait_for


def supervisor(cwd, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "supervisor", *args], cwd=str(cwd), capture_output=True, text=True, timeout=90
    )


def test_status_and_stop_from_another_folder_find_the_session(tmp_path, monkeypatch):
    registry_base = tmp_path / "xdg"
    registry_base.mkdir(mode=0o700)
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(registry_base))  # the session and the commands share it
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    s = Session(str(tmp_path / "s"), DEMO, "session.stop_on_run_end=false", "session.max_steps=20000")
    try:
        wait_for(lambda: len(s.events("observation")) > 5, 30, "steps")
        st = supervisor(elsewhere, "status", "--json")
        found = json.loads(st.stdout)
        assert [x["session_id"] for x in found["sessions"]] == [os.path.basename(s.session_dir)], st.stdout
        assert str(registry_base / "gamerig") in found["looked_in"]
        stop = supervisor(elsewhere, "stop")
        assert stop.returncode == 0 and "finalized" in stop.stdout, stop.stdout + stop.stderr
        assert s.wait(60) == 0
        after = supervisor(elsewhere, "status")
        assert after.stdout.startswith("no running sessions (looked in ") and str(elsewhere) in after.stdout
        assert os.listdir(registry_base / "gamerig") == []  # the pointer went with the session
    finally:
        if s.proc.poll() is None:
            s.proc.kill()
        s.proc.communicate()
