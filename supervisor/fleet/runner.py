"""Run one attempt of one session: a ``supervisor start`` process tree in its slot directory.

Both backends call ``run_attempt``: the local one from a thread of ``supervisor fleet
start``, the Ray one inside a Ray task on whichever node Ray picked. It

* starts ``python -m supervisor start PROFILE --set ...`` with the session's own capture
  root, runtime directory and plain progress lines (into ``supervisor.log``), in a new
  session (so a Ctrl-C in the fleet's terminal reaches only the fleet);
* ties the supervisor's life to this process through a small keeper process between them
  (``_KEEPER``; Linux ``PR_SET_PDEATHSIG``, set there rather than in ``preexec_fn``, which is
  unsafe with threads): when the process running the attempt dies (the fleet's driver
  locally, a Ray worker, which Ray kills when the driver dies) the keeper dies with it and
  the supervisor, the keeper's child, gets SIGTERM, stops at once in order and finalizes
  (reason ``sigterm``), and ``fleet start --resume`` runs the session again (docs/fleet.md,
  "When the driver dies"). The keeper is there because Ray SIGKILLs the children of a worker
  it ends (``kill_child_processes_on_worker_exit``), not theirs; it reports the supervisor's
  pid, forwards SIGTERM and SIGINT to it, and exits as the supervisor did;
* watches the fleet's ``stop`` file, the session timeout and the driver's ``interrupt``
  (a signal to ``fleet start``): any of them sends SIGTERM once (the supervisor stops in
  order and finalizes), then SIGKILL if it is still there after ``KILL_AFTER_S``; what was
  decided is in ``attempt-N.json`` before the signal goes, so a driver that dies right
  after still leaves it;
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
from typing import Protocol

from . import layout
from .matrix import SessionPlan

POLL_S = 0.05  # how soon a stop, a timeout or an interrupt reaches the supervisor
KILL_AFTER_S = 120.0  # a supervisor that has not finalized this long after SIGTERM is killed
# The keeper: dies with the runner named by argv[1] (PR_SET_PDEATHSIG, prctl option 1:
# SIGKILL; it refuses to run if that runner is already gone), forks the command argv[4:] with
# argv[2] as its parent-death signal, writes its pid to fd argv[3], forwards SIGTERM and SIGINT
# to it, and exits with its exit code, or by the signal that ended it.
_KEEPER = (
    "import ctypes, os, signal, sys\n"
    "prctl = ctypes.CDLL(None, use_errno=True).prctl\n"
    "prctl(1, signal.SIGKILL)\n"
    "runner, death, report = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])\n"
    "os.getppid() == runner or os._exit(1)\n"
    "keeper = os.getpid()\n"
    "pid = os.fork()\n"
    "if pid == 0:\n"
    "    os.close(report)\n"
    "    prctl(1, death)\n"
    "    os.getppid() == keeper or os._exit(1)\n"
    "    os.execv(sys.argv[4], sys.argv[4:])\n"
    "for s in (signal.SIGTERM, signal.SIGINT):\n"
    "    signal.signal(s, lambda n, _f: os.kill(pid, n))\n"
    "os.write(report, b'%d\\n' % pid)\n"
    "os.close(report)\n"
    "status = os.waitpid(pid, 0)[1]\n"
    "if os.WIFSIGNALED(status):\n"
    "    sig = os.WTERMSIG(status)\n"
    "    if sig not in (signal.SIGKILL, signal.SIGSTOP):\n"
    "        signal.signal(sig, signal.SIG_DFL)\n"
    "    os.kill(keeper, sig)\n"
    "os._exit(os.waitstatus_to_exitcode(status))\n"
)


def command(plan: SessionPlan, slot: str, python: str = sys.executable) -> list[str]:
    """The ``supervisor start`` command line of one session in its slot."""
    sets = [
        *plan.overrides,
        f"capture.root={json.dumps(layout.capture_dir(slot))}",
        f"supervisor.runtime_dir={json.dumps(layout.runtime_dir(slot))}",
        "supervisor.progress=plain",
    ]
    return [python, "-m", "supervisor", "start", plan.profile, *[a for s in sets for a in ("--set", s)]]


class Flag(Protocol):
    def is_set(self) -> bool: ...


def session_ids(slot: str) -> list[str]:
    """The slot's sessions, oldest first: by the time their ``session_start`` row was recorded
    (two attempts may start within the second their ids are stamped with)."""
    sessions = os.path.join(layout.capture_dir(slot), "sessions")
    try:
        names = os.listdir(sessions)
    except OSError:
        return []
    return sorted(names, key=lambda n: (n[:16], _recorded_at(os.path.join(sessions, n, "events.jsonl")), n))


def _recorded_at(journal: str) -> str:
    try:
        with open(journal, "rb") as fh:
            return str(json.loads(fh.readline()).get("recorded_at") or "")
    except (OSError, ValueError, AttributeError):
        return ""


def run_attempt(
    plan: SessionPlan,
    root: str,
    attempt: int,
    *,
    timeout_s: float | None,
    death_signal: int,
    workdir: str,
    node: str = "",
    interrupt: Flag | None = None,
) -> dict:
    """Run the session once; returns the attempt record (also written to attempt-N.json)."""
    slot = os.path.join(root, plan.slot)
    os.makedirs(slot, exist_ok=True)
    before = set(session_ids(slot))
    rec = {
        "slot": plan.slot,
        "attempt": attempt,
        "host": socket.gethostname(),
        "node": node,
        "runner_pid": os.getpid(),
        "supervisor_pid": None,
        "started_at": time.time(),
        "ended_at": None,
        "exit_code": None,
        "stop_requested": False,
        "timed_out": False,
        "interrupted": False,
        "error": None,
        "session_ids": [],
    }
    if os.path.exists(layout.stop_path(root)):  # stopped while it waited for a place
        rec["stop_requested"] = True
        return _finish(rec, slot, before)
    if interrupt is not None and interrupt.is_set():  # the driver is winding down: never started,
        rec["interrupted"] = True  # so no attempt record
        return rec
    cwd = workdir if os.path.isdir(workdir) else slot
    report, theirs = os.pipe()
    argv = [sys.executable, "-c", _KEEPER, str(os.getpid()), str(int(death_signal)), str(theirs), *command(plan, slot)]
    try:
        with open(layout.log_path(slot), "ab") as log:
            proc = subprocess.Popen(
                argv,
                cwd=cwd,
                stdout=log,
                stderr=subprocess.STDOUT,
                pass_fds=(theirs,),
                stdin=subprocess.DEVNULL,
                start_new_session=True,
            )
    except OSError as exc:
        rec["error"] = f"could not start supervisor: {exc}"
        return _finish(rec, slot, before)
    finally:
        os.close(theirs)
    with os.fdopen(report, "rb") as fh:  # the keeper writes it at once, or dies (EOF)
        said = fh.readline().strip()
    rec["keeper_pid"], rec["supervisor_pid"] = proc.pid, int(said) if said.isdigit() else None
    path = layout.attempt_path(slot, attempt)
    _write(path, rec)
    rec["exit_code"] = _watch(proc, rec, layout.stop_path(root), timeout_s, interrupt, path)
    return _finish(rec, slot, before)


def _watch(
    proc: subprocess.Popen, rec: dict, stop_file: str, timeout_s: float | None, interrupt: Flag | None, path: str
) -> int:
    started = time.monotonic()
    termed_at = None
    while True:
        try:
            return proc.wait(POLL_S)
        except subprocess.TimeoutExpired:
            pass
        now = time.monotonic()
        if termed_at is None:
            if interrupt is not None and interrupt.is_set():
                rec["interrupted"] = True
            elif os.path.exists(stop_file):
                rec["stop_requested"] = True
            elif timeout_s is not None and now - started > timeout_s:
                rec["timed_out"] = True
            if rec["stop_requested"] or rec["timed_out"] or rec["interrupted"]:
                _write(path, rec)  # why it was stopped, on disk before the signal
                proc.send_signal(signal.SIGTERM)  # the keeper passes it on
                termed_at = now
        elif now - termed_at > KILL_AFTER_S and rec["supervisor_pid"] and proc.poll() is None:
            try:
                os.kill(rec["supervisor_pid"], signal.SIGKILL)  # not reaped while its keeper lives
            except OSError:
                pass
            termed_at = now


def _finish(rec: dict, slot: str, before: set[str]) -> dict:
    rec["ended_at"] = time.time()
    rec["session_ids"] = [s for s in session_ids(slot) if s not in before]
    _write(layout.attempt_path(slot, rec["attempt"]), rec)
    return rec


def _write(path: str, data: dict) -> None:
    with open(path + ".tmp", "w", encoding="utf-8") as fh:
        json.dump(data, fh, indent=1, sort_keys=True)
    os.replace(path + ".tmp", path)
