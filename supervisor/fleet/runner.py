"""Run one attempt of one session: a ``supervisor start`` process tree in its slot directory.

Both backends call ``run_attempt``: the local one from a thread of ``supervisor fleet
start``, the Ray one inside a Ray task on whichever node Ray picked. It

* starts ``python -m supervisor start PROFILE --set ...`` with the session's own capture
  root, runtime directory and plain progress lines (into ``supervisor.log``), in a new
  session (so a Ctrl-C in the fleet's terminal reaches only the fleet);
* ties the supervisor's life to this process (Linux ``PR_SET_PDEATHSIG``, set by a small
  exec shim rather than ``preexec_fn``, which is unsafe with threads): locally a dead fleet
  SIGTERMs its supervisors, which finalize; on Ray a dead worker SIGKILLs its supervisor,
  as a dead node would, and the actors then exit on their own (docs/supervision.md);
* watches the fleet's ``stop`` file and the session timeout: either sends SIGTERM once (the
  supervisor stops in order and finalizes), then SIGKILL if it is still there after
  ``KILL_AFTER_S``;
* records who ran it and how it ended in ``attempt-N.json`` and returns the same dict.
"""
from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time

from . import layout
from .matrix import SessionPlan

POLL_S = 0.2
KILL_AFTER_S = 120.0  # a supervisor that has not finalized this long after SIGTERM is killed
# Sets PR_SET_PDEATHSIG (prctl option 1) to argv[1], refuses to run if the parent named by
# argv[2] is already gone, then becomes the command argv[3:].
_SHIM = ("import ctypes, os, sys\n"
         "ctypes.CDLL(None, use_errno=True).prctl(1, int(sys.argv[1]))\n"
         "os.getppid() == int(sys.argv[2]) or os._exit(1)\n"
         "os.execv(sys.argv[3], sys.argv[3:])\n")


def command(plan: SessionPlan, slot: str, python: str = sys.executable) -> list[str]:
    """The ``supervisor start`` command line of one session in its slot."""
    sets = [*plan.overrides, f"capture.root={json.dumps(layout.capture_dir(slot))}",
            f"supervisor.runtime_dir={json.dumps(layout.runtime_dir(slot))}",
            "supervisor.progress=plain"]
    return [python, "-m", "supervisor", "start", plan.profile, *[a for s in sets for a in ("--set", s)]]


def session_ids(slot: str) -> list[str]:
    try:
        return sorted(os.listdir(os.path.join(layout.capture_dir(slot), "sessions")))
    except OSError:
        return []


def run_attempt(plan: SessionPlan, root: str, attempt: int, *, timeout_s: float | None,
                death_signal: int, workdir: str, node: str = "") -> dict:
    """Run the session once; returns the attempt record (also written to attempt-N.json)."""
    slot = os.path.join(root, plan.slot)
    os.makedirs(slot, exist_ok=True)
    before = set(session_ids(slot))
    rec = {"slot": plan.slot, "attempt": attempt, "host": socket.gethostname(), "node": node,
           "runner_pid": os.getpid(), "supervisor_pid": None, "started_at": time.time(),
           "ended_at": None, "exit_code": None, "stop_requested": False, "timed_out": False,
           "error": None, "session_ids": []}
    if os.path.exists(layout.stop_path(root)):  # stopped while it waited for a place
        rec["stop_requested"] = True
        return _finish(rec, slot, before)
    cwd = workdir if os.path.isdir(workdir) else slot
    argv = [sys.executable, "-c", _SHIM, str(int(death_signal)), str(os.getpid()), *command(plan, slot)]
    try:
        with open(layout.log_path(slot), "ab") as log:
            proc = subprocess.Popen(argv, cwd=cwd, stdout=log, stderr=subprocess.STDOUT,
                                    stdin=subprocess.DEVNULL, start_new_session=True)
    except OSError as exc:
        rec["error"] = f"could not start supervisor: {exc}"
        return _finish(rec, slot, before)
    rec["supervisor_pid"] = proc.pid
    _write(layout.attempt_path(slot, attempt), rec)
    rec["exit_code"] = _watch(proc, rec, layout.stop_path(root), timeout_s)
    return _finish(rec, slot, before)


def _watch(proc: subprocess.Popen, rec: dict, stop_file: str, timeout_s: float | None) -> int:
    started = time.monotonic()
    termed_at = None
    while True:
        try:
            return proc.wait(POLL_S)
        except subprocess.TimeoutExpired:
            pass
        now = time.monotonic()
        if termed_at is None:
            if os.path.exists(stop_file):
                rec["stop_requested"] = True
            elif timeout_s is not None and now - started > timeout_s:
                rec["timed_out"] = True
            if rec["stop_requested"] or rec["timed_out"]:
                proc.send_signal(signal.SIGTERM)
                termed_at = now
        elif now - termed_at > KILL_AFTER_S:
            proc.kill()


def _finish(rec: dict, slot: str, before: set[str]) -> dict:
    rec["ended_at"] = time.time()
    rec["session_ids"] = [s for s in session_ids(slot) if s not in before]
    _write(layout.attempt_path(slot, rec["attempt"]), rec)
    return rec


def _write(path: str, data: dict) -> None:
    with open(path + ".tmp", "w", encoding="utf-8") as fh:
        json.dump(data, fh, indent=1, sort_keys=True)
    os.replace(path + ".tmp", path)
