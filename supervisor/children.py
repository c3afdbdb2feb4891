"""Child processes: one ``Child`` per actor. Starting, signalling, reaping, sampling.

The supervisor's loop calls ``poll()`` on each child; an exit is reported once, with the exit
code, or the negative signal number when a signal ended the process.
"""

from __future__ import annotations

import dataclasses
import os
import signal
import subprocess
import sys
import time

import psutil


def describe_exit(code: int | None) -> dict:
    if code is None:
        return {"code": None, "signal": None}
    if code < 0:
        try:
            name = signal.Signals(-code).name
        except ValueError:
            name = str(-code)
        return {"code": None, "signal": name}
    return {"code": code, "signal": None}


@dataclasses.dataclass
class Child:
    name: str
    module: str
    args: list[str]
    env: dict[str, str]
    log_path: str
    proc: subprocess.Popen | None = None
    started_at: float = 0.0
    start_count: int = 0
    last_heard: float = 0.0
    welcomed: bool = False
    status: dict = dataclasses.field(default_factory=dict)
    stopping: bool = False
    ps: psutil.Process | None = None
    cpus: list[int] | None = None  # CPU affinity set right after the start (None: inherited)
    sample: dict = dataclasses.field(default_factory=dict)

    @property
    def pid(self) -> int | None:
        return self.proc.pid if self.proc else None

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def start(self) -> None:
        self.start_count += 1  # 1 for the first start, as in the actor_start row
        env = dict(os.environ)
        env.update(self.env)
        env["GAMERIG_START_COUNT"] = str(self.start_count)
        log = open(self.log_path, "ab")
        try:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", self.module, *self.args],
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )  # Ctrl-C reaches the supervisor only
        finally:
            log.close()
        self.started_at = self.last_heard = time.monotonic()
        self.welcomed = False
        self.stopping = False
        try:
            self.ps = psutil.Process(self.proc.pid)
            if self.cpus:
                self.ps.cpu_affinity(self.cpus)
            self.ps.cpu_percent(None)
        except psutil.Error:
            self.ps = None

    def poll(self) -> int | None:
        """The exit code if the process has exited (once per exit), else None."""
        if self.proc is None:
            return None
        code = self.proc.poll()
        return code

    def signal(self, sig: int) -> None:
        if self.alive():
            try:
                self.proc.send_signal(sig)
            except ProcessLookupError:
                pass

    def kill(self) -> None:
        self.signal(signal.SIGKILL)

    def wait(self, timeout: float) -> int | None:
        if self.proc is None:
            return None
        try:
            return self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            return None

    def take_sample(self) -> dict:
        if self.ps is None or not self.alive():
            return {}
        try:
            with self.ps.oneshot():
                self.sample = {"rss_bytes": self.ps.memory_info().rss, "cpu_percent": self.ps.cpu_percent(None)}
        except psutil.Error:
            self.sample = {}
        return self.sample
