"""Whole-process test harness: run real ``supervisor start`` sessions and read what they left.

Nothing here fakes a gamerig part: sessions are real processes on real ZeroMQ sockets
against the real built-in game. Waits are on conditions with deadlines, never bare sleeps.
"""
from __future__ import annotations

import glob
import json
import os
import signal
import subprocess
import sys
import time
from typing import Callable

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEMO = os.path.join(REPO, "run", "profiles", "demo.yaml")


def wait_for(predicate: Callable[[], object], timeout: float, what: str, every: float = 0.02):
    """Poll ``predicate`` until it returns something truthy; fail with ``what`` on timeout."""
    end = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > end:
            raise AssertionError(f"timed out after {timeout}s waiting for {what}")
        time.sleep(every)


class Session:
    """A ``supervisor start`` subprocess with its capture root and runtime dir under ``base``."""

    def __init__(self, base: str, profile: str = DEMO, *sets: str, args: tuple[str, ...] = ()):
        self.capture = os.path.join(base, "capture")
        self.runtime = os.path.join(base, "runtime")
        self.cmd = [sys.executable, "-m", "supervisor", "start", profile,
                    "--set", f"capture.root={self.capture}",
                    "--set", f"supervisor.runtime_dir={self.runtime}",
                    "--set", "supervisor.progress=plain", *[a for s in sets for a in ("--set", s)],
                    *args]
        self.proc = subprocess.Popen(self.cmd, cwd=REPO, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, text=True)
        self.stdout = self.stderr = ""

    def wait(self, timeout: float = 90) -> int:
        try:
            self.stdout, self.stderr = self.proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.stdout, self.stderr = self.proc.communicate()
            raise AssertionError(f"session did not end within {timeout}s:\n{self.stderr[-3000:]}")
        return self.proc.returncode

    def signal(self, sig: int) -> None:
        self.proc.send_signal(sig)

    # -- what the session left --------------------------------------------------------
    @property
    def session_dir(self) -> str:
        dirs = glob.glob(os.path.join(self.capture, "sessions", "*"))
        assert len(dirs) == 1, dirs
        return dirs[0]

    def has_session_dir(self) -> bool:
        return len(glob.glob(os.path.join(self.capture, "sessions", "*", "events.jsonl"))) == 1

    def rows(self) -> list[dict]:
        out = []
        try:
            with open(os.path.join(self.session_dir, "events.jsonl"), "rb") as fh:
                for line in fh:
                    try:
                        out.append(json.loads(line))
                    except ValueError:
                        pass
        except (FileNotFoundError, AssertionError):
            return []
        return out

    def events(self, name: str) -> list[dict]:
        return [r for r in self.rows() if r.get("event") == name]

    def summary(self) -> dict:
        with open(os.path.join(self.session_dir, "session.json"), encoding="utf-8") as fh:
            return json.load(fh)

    def record(self) -> dict:
        recs = glob.glob(os.path.join(self.runtime, "*.json"))
        assert len(recs) == 1, recs
        with open(recs[0], encoding="utf-8") as fh:
            return json.load(fh)

    def endpoint(self, name: str) -> str:
        return self.record()["control"].replace("control.sock", f"{name}.sock")

    def actor_pid(self, actor: str) -> int:
        starts = [r for r in self.events("actor_start") if r["actor"] == actor]
        assert starts, f"no actor_start for {actor}"
        return starts[-1]["pid"]

    def log(self, actor: str) -> str:
        paths = glob.glob(os.path.join(self.runtime, "*.logs", f"{actor}.log"))
        return "".join(open(p, encoding="utf-8", errors="replace").read() for p in paths)

    def game_stats(self) -> dict:
        lines = [ln for ln in self.log("game").splitlines() if "GAME_STATS " in ln]
        assert lines, "the game logged no GAME_STATS line"
        return json.loads(lines[-1].split("GAME_STATS ", 1)[1])

    def base_url(self) -> str:
        return self.events("session_start")[0]["profile"]["game"]["base_url"]


def kill(pid: int, sig: int = signal.SIGKILL) -> None:
    os.kill(pid, sig)
