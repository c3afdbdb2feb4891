"""The processes of ``bench/agent.py``'s sessions: the stand-in model server as its own process
(``Standin``), and a running session watched (``Monitor``, ``watched``): its journal's new
rows counted as model decisions and steps, the RSS and CPU time of each of its processes
sampled every ``WAIT_S`` s, and a stop requested once the decisions asked for are journalled."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import threading
import time

import psutil
from agent_figures import is_model_decision
from pipeline_sessions import finish_session, start_session

from protocol.cli_to_supervisor import StatusRequest, StopRequest
from supervisor.commands.base import RequestFailed, control_request
from supervisor.rundir import find_sessions

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
WAIT_S = 0.5  # how often the monitor reads the journal's new rows and the processes' RSS


# -- the stand-in model server ---------------------------------------------------------------
class Standin:
    """``python -m actors.model_client.standin --port 0`` as its own process; its base URL
    from the line it prints when it listens."""

    def __init__(self, seed: int, log_path: str):
        self.log = open(log_path, "w+", encoding="utf-8")
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "actors.model_client.standin", "--port", "0", "--seed", str(seed)],
            cwd=REPO,
            stdout=self.log,
            stderr=subprocess.STDOUT,
        )
        end = time.monotonic() + 30
        self.url = None
        while self.url is None:
            self.log.seek(0)
            found = re.search(r"(http://127\.0\.0\.1:\d+/v1)", self.log.read())
            if found:
                self.url = found.group(1)
            elif self.proc.poll() is not None or time.monotonic() > end:
                self.stop()
                raise RuntimeError(f"the stand-in did not start (exit {self.proc.returncode}); see {log_path}")
            else:
                time.sleep(0.05)
        self.ps = psutil.Process(self.proc.pid)

    def cpu_s(self) -> float:
        t = self.ps.cpu_times()
        return t.user + t.system

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()  # (no handler of its own: SIGTERM ends it at once)
            self.proc.wait(10)
        self.log.close()


# -- watching a session ----------------------------------------------------------------------


class Monitor(threading.Thread):
    """Follows a running session: its journal's new rows (counting model decisions and steps)
    and the RSS and CPU time of each of its processes, every ``WAIT_S``; asks the supervisor
    to stop once ``stop_after`` model decisions are journalled (None: it ends by itself)."""

    def __init__(
        self,
        workdir: str,
        supervisor_pid: int,
        extra: dict[str, psutil.Process] | None = None,
        stop_after: int | None = None,
        every: float = WAIT_S,
    ):
        super().__init__(daemon=True)
        self.workdir, self.every, self.stop_after = workdir, every, stop_after
        self.supervisor = psutil.Process(supervisor_pid)
        self.extra = dict(extra or {})
        self.procs: dict[str, psutil.Process] = {}
        self.done = threading.Event()
        self.decisions = self.steps = 0
        #: (time, model decisions, steps, name -> RSS bytes, name -> CPU seconds of all its pids)
        self.samples: list[tuple[float, int, int, dict[str, int], dict[str, float]]] = []
        self._cpu: dict[str, dict[int, float]] = {}  # name -> pid -> its newest CPU seconds
        self.stop_sent: float | None = None
        self._journal: str | None = None
        self._offset = 0
        self._partial = b""
        self._record: dict | None = None
        self._pids_at = 0.0
        self._actors = 1  # actors the status listed (until it answers: at least one)

    def run(self) -> None:
        while not self.done.wait(self.every):
            self.tick()
        self.tick()

    def tick(self) -> None:
        self._read_journal()
        self._refresh_pids()
        now, rss = time.time(), {}
        for name, p in [("supervisor", self.supervisor), *self.procs.items(), *self.extra.items()]:
            try:
                rss[name] = p.memory_info().rss
                t = p.cpu_times()
                self._cpu.setdefault(name, {})[p.pid] = t.user + t.system
            except psutil.Error:
                pass
        cpu = {name: sum(by_pid.values()) for name, by_pid in self._cpu.items()}
        self.samples.append((now, self.decisions, self.steps, rss, cpu))
        if self.stop_after is not None and self.decisions >= self.stop_after and self.stop_sent is None:
            self.request_stop()

    def _read_journal(self) -> None:
        if self._journal is None:
            root = os.path.join(self.workdir, "capture", "sessions")
            found = [os.path.join(root, d, "events.jsonl") for d in (os.listdir(root) if os.path.isdir(root) else [])]
            found = [f for f in found if os.path.exists(f)]
            if not found:
                return
            self._journal = found[0]
        with open(self._journal, "rb") as fh:
            fh.seek(self._offset)
            data = fh.read()
        self._offset += len(data)
        lines = (self._partial + data).split(b"\n")
        self._partial = lines.pop()
        for line in lines:
            if b'"event":"observation"' in line:
                self.steps += 1
            elif b'"event":"proposal"' in line and b'"agent":' in line and is_model_decision(json.loads(line)):
                self.decisions += 1

    def _refresh_pids(self) -> None:
        """The actors' pids from the supervisor's status (until every actor has one, then every
        5 s: a restarted actor is followed)."""
        if time.monotonic() - self._pids_at < 5 and len(self.procs) >= self._actors:
            return
        if self._record is None:
            recs, _ = find_sessions(os.path.join(self.workdir, "runtime"))
            if not recs:
                return
            self._record = recs[0]
        try:
            status = control_request(self._record, StatusRequest(token=self._record["token"]), 2.0).status
        except RequestFailed:
            return
        self._pids_at = time.monotonic()
        self._actors = len(status.get("actors", {}))
        for name, actor in status.get("actors", {}).items():
            pid = actor.get("pid")
            if pid and (name not in self.procs or self.procs[name].pid != pid):
                try:
                    self.procs[name] = psutil.Process(pid)
                except psutil.Error:
                    pass

    def request_stop(self) -> None:
        self.stop_sent = time.time()
        try:
            control_request(self._record, StopRequest(token=self._record["token"], reason="stop_command"))
        except (RequestFailed, TypeError) as exc:
            print(f"  the stop request failed ({exc}); interrupting the supervisor", flush=True)
            self.supervisor.send_signal(2)

    def cpu_per_step(self) -> tuple[dict[str, float], int]:
        """CPU seconds per process name (a restarted actor's pids summed) from the first sample
        with a step to the last sample, and the steps in between: start-up left out."""
        first = next((s for s in self.samples if s[2] > 0), None)
        if first is None or self.samples[-1][2] <= first[2]:
            return {}, 0
        last = self.samples[-1]
        return {k: v - first[4].get(k, 0.0) for k, v in last[4].items()}, last[2] - first[2]


def watched(
    workdir: str,
    profile: str,
    max_steps: int,
    sets: dict,
    timeout: float,
    extra: dict | None = None,
    stop_after: int | None = None,
):
    """A session under a ``Monitor``; (session, monitor) once it has ended."""
    s = start_session(workdir, profile, max_steps, sets=sets)
    mon = Monitor(workdir, s.proc.pid, extra, stop_after)
    mon.start()
    try:
        finish_session(s, timeout)
    finally:
        mon.done.set()
        mon.join()
    return s, mon
