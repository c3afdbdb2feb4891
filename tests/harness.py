"""Whole-process test harness: run real ``supervisor start`` sessions and read what they left.

Nothing here fakes a gamerig part: sessions are real processes on real ZeroMQ sockets
against the real built-in game. Waits are on conditions with deadlines, never bare sleeps.
"""

from __future__ import annotations

import fcntl
import glob
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEMO = os.path.join(REPO, "run", "profiles", "demo.yaml")


def built_once(tmp_path_factory, name: str, build: Callable[[str], dict]) -> dict:
    """What ``build(directory)`` returns, built by the first pytest-xdist worker that asks and
    read back by the others: a module fixture otherwise runs once in every worker that gets
    one of its tests, and the expensive ones (a whole fault campaign, a fleet) cost a worker
    20-30 s each time. The result must be JSON; the directory is shared by every worker and
    its tests must only read it (copy it to change it). A failed build is tried again by the
    next worker that asks."""
    base = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        base = base.parent  # the run's directory, above each worker's own
    directory = base / f"built-once-{name}"
    with open(base / f"built-once-{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # the others wait for the one building it
        done = directory / "built.json"
        if done.exists():
            return json.loads(done.read_text(encoding="utf-8"))
        directory.mkdir(exist_ok=True)
        result = build(str(directory))
        done.write_text(json.dumps(result), encoding="utf-8")
        return result


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
        self.cmd = [
            sys.executable,
            "-m",
            "supervisor",
            "start",
            profile,
            "--set",
            f"capture.root={self.capture}",
            "--set",
            f"supervisor.runtime_dir={self.runtime}",
            "--set",
            "supervisor.progress=plain",
            *[a for s in sets for a in ("--set", s)],
            *args,
        ]
        self.proc = subprocess.Popen(self.cmd, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.stdout = self.stderr = ""

    def wait(self, timeout: float = 90) -> int:
        try:
            self.stdout, self.stderr = self.proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.stdout, self.stderr = self.proc.communicate()
            raise AssertionError(f"session did not end within {timeout}s:\n{self.stderr[-3000:]}") from None
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
