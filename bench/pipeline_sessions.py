"""A real session of the game path as the benches start it: ``supervisor start PROFILE`` as a
subprocess (six processes), its capture and runtime files in a work directory of its own
(``start_session``, ``finish_session``: the journal's rows once it has ended), and the summed
RSS of its process tree sampled while it runs (``RssSampler``, ``run_one``). ``REPO`` is the
tree the session runs from (``bench/step_ab.py`` points it at another checkout)."""

from __future__ import annotations

import dataclasses
import glob
import os
import subprocess
import sys
import threading
import time

import psutil
from pipeline_steps import read_rows

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


class RssSampler(threading.Thread):
    """Summed RSS of process trees (each root and its descendants), every ``every`` s."""

    def __init__(self, pids: list[int], every: float = 0.2):
        super().__init__(daemon=True)
        self.roots = [psutil.Process(p) for p in pids]
        self.every = every
        self.stop = threading.Event()
        self.peak = 0
        self.peak_parts: dict[str, int] = {}
        self.samples: list[int] = []

    def run(self) -> None:
        while not self.stop.wait(self.every):
            parts: dict[str, int] = {}
            for root in self.roots:
                try:
                    procs = [root, *root.children(recursive=True)]
                except psutil.Error:
                    continue
                for p in procs:
                    try:
                        name = proc_name(p.cmdline())
                        parts[name] = parts.get(name, 0) + p.memory_info().rss
                    except psutil.Error:
                        pass
            total = sum(parts.values())
            if total:
                self.samples.append(total)
            if total > self.peak:
                self.peak, self.peak_parts = total, parts


def proc_name(cmdline: list[str]) -> str:
    if "-m" in cmdline and cmdline.index("-m") + 1 < len(cmdline):
        module = cmdline[cmdline.index("-m") + 1]
        return module.split(".")[-1] if module.startswith("actors.") else module
    return os.path.basename(cmdline[0]) if cmdline else "?"


@dataclasses.dataclass
class Session:
    workdir: str
    proc: subprocess.Popen
    spawned: float
    log: object
    rows: list[dict] = dataclasses.field(default_factory=list)
    code: int | None = None

    @property
    def journal(self) -> str | None:
        found = glob.glob(os.path.join(self.workdir, "capture", "sessions", "*", "events.jsonl"))
        return found[0] if found else None


def start_session(workdir: str, profile: str, steps: int, env: dict | None = None, sets: dict | None = None) -> Session:
    """``supervisor start PROFILE`` as a subprocess, its capture and runtime files in
    ``workdir``; ``sets`` adds ``--set key=value`` pairs (after the bench's own)."""
    os.makedirs(workdir, exist_ok=True)
    sets = {
        "session.stop_on_run_end": "false",
        "session.max_steps": str(steps),
        "capture.root": os.path.join(workdir, "capture"),
        "supervisor.runtime_dir": os.path.join(workdir, "runtime"),
        "supervisor.progress": "off",
        **(sets or {}),
    }
    cmd = [sys.executable, "-m", "supervisor", "start", profile]
    for key, value in sets.items():
        cmd += ["--set", f"{key}={value}"]
    log = open(os.path.join(workdir, "supervisor.out"), "w", encoding="utf-8")
    spawned = time.time()
    proc = subprocess.Popen(cmd, cwd=REPO, stdout=log, stderr=subprocess.STDOUT, env={**os.environ, **(env or {})})
    return Session(workdir, proc, spawned, log)


def finish_session(s: Session, timeout: float) -> Session:
    try:
        s.code = s.proc.wait(timeout)
    except subprocess.TimeoutExpired:
        s.proc.terminate()
        s.code = s.proc.wait(30)
    s.log.close()
    if s.journal is None or s.code != 0:
        with open(os.path.join(s.workdir, "supervisor.out"), encoding="utf-8", errors="replace") as fh:
            tail = fh.read()[-1500:]
        raise RuntimeError(f"the session in {s.workdir} failed (exit {s.code}); its output ends:\n{tail}")
    s.rows = read_rows(s.journal)
    return s


def run_one(workdir: str, profile: str, steps: int, timeout: float, env: dict | None = None):
    s = start_session(workdir, profile, steps, env)
    sampler = RssSampler([s.proc.pid])
    sampler.start()
    try:
        finish_session(s, timeout)
    finally:
        sampler.stop.set()
        sampler.join()
    return s, sampler
