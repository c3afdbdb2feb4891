"""Finding, inspecting and stopping fleets, and the processes of one: ``supervisor fleet status|stop``.

A running ``supervisor fleet start`` publishes ``<runtime_dir>/fleets/<fleet>.json`` (its
pid and fleet root) while it runs, and holds the fleet root's ``driver.lock`` (an exclusive
``flock``, released by the kernel however the driver ends): a fleet's driver is alive
exactly when that lock is held (``driver_alive``), whatever became of its pid, and a second
driver (a resume while one runs) cannot take it (``take_driver_lock``). Everything else is
read from the fleet root itself, so status and stop work from any shell, and also after the
fleet process is gone:

* status counts the sessions with a results row (done, by outcome) and the sessions whose
  supervisor is alive (running: the live record in the slot's runtime directory); a fleet
  whose driver is gone before the end is ``interrupted`` and status names the command that
  finishes it (``resume_command``);
* stop creates the fleet's ``stop`` file (every runner, local or on a Ray node, SIGTERMs its
  supervisor when it sees it, and the fleet starts nothing new), and SIGTERMs every
  supervisor of the fleet that runs on this machine at once; each one stops its actors in
  order and finalizes its capture (docs/supervision.md).

The fleet's processes on this machine (``live_supervisors``, ``live_actors``) are each
confirmed to be what the record names before anything is said or sent to them: a
supervisor by its start time and command line, an actor by the session id in its own
environment (a pid reused by another process is never ours).
"""

from __future__ import annotations

import fcntl
import json
import os
import signal
import socket
import time

import psutil

from protocol.events import ActorStart
from protocol.journal import iter_lines
from supervisor.rundir import running_sessions

from . import layout
from .errors import FleetFileError, NotAFleet
from .results import OUTCOMES, read_fleet, read_rows

#: psutil's process start times are whole-second accurate (the kernel's boot time is), so a
#: supervisor's start may read up to this much after the time it published its record.
START_SLACK_S = 2.0


def fleets_dir(runtime_dir: str) -> str:
    return os.path.join(runtime_dir, "fleets")


def publish(runtime_dir: str, root: str, name: str) -> str:
    os.makedirs(fleets_dir(runtime_dir), mode=0o700, exist_ok=True)
    path = os.path.join(fleets_dir(runtime_dir), os.path.basename(root) + ".json")
    with open(path, "w", encoding="utf-8") as fh:
        json.dump({"pid": os.getpid(), "root": root, "name": name, "started_at": time.time()}, fh)
    return path


def running_fleets(runtime_dir: str) -> list[dict]:
    """Records of fleets whose fleet process is alive (the same rule as running sessions)."""
    return running_sessions(fleets_dir(runtime_dir))


def interrupted_fleets(runtime_dir: str) -> list[str]:
    """Roots of fleets published here whose driver is gone before their end (a driver leaves
    its record when it is killed or interrupted, and removes it when the fleet ends)."""
    try:
        names = sorted(os.listdir(fleets_dir(runtime_dir)))
    except OSError:
        return []
    out = []
    for name in names:
        try:
            with open(os.path.join(fleets_dir(runtime_dir), name), encoding="utf-8") as fh:
                root = str(json.load(fh)["root"])
            if layout.is_fleet_root(root) and status(root)["state"] == "interrupted":
                out.append(root)
        except (OSError, ValueError, KeyError, TypeError):
            continue
    return out


def pick_root(path: str | None, runtime_dir: str) -> str:
    """The fleet root named by PATH, or the one running fleet; raises ``NotAFleet``."""
    if path:
        root = os.path.abspath(path)
        if not layout.is_fleet_root(root):
            raise NotAFleet(path, f"not a fleet root (no {layout.FLEET_FILE})")
        return root
    recs = running_fleets(runtime_dir)
    if len(recs) == 1:
        return recs[0]["root"]
    if not recs:
        raise NotAFleet(fleets_dir(runtime_dir), "no running fleet; name a fleet root")
    raise NotAFleet(
        fleets_dir(runtime_dir), "several fleets are running; name one: " + ", ".join(r["root"] for r in recs)
    )


DEFAULT_FLEETS = os.path.join("run", "capture", "fleets")  # where run/fleets/*.yaml put their roots


def newest_root(base: str = DEFAULT_FLEETS) -> str | None:
    """The most recently started fleet root under ``base`` (by its ``fleet.json``), or None."""
    try:
        names = os.listdir(base)
    except OSError:
        return None
    roots = [os.path.join(base, n) for n in names if layout.is_fleet_root(os.path.join(base, n))]
    return (
        os.path.abspath(max(roots, key=lambda r: os.path.getmtime(os.path.join(r, layout.FLEET_FILE))))
        if roots
        else None
    )


def live_supervisors(root: str, slots: set[str] | None = None) -> list[dict]:
    """Runtime records of this fleet's supervisors alive on this machine (of ``slots`` only,
    when given), each with its ``slot``."""
    return [
        {**rec, "slot": os.path.basename(slot)}
        for slot in layout.slots(root)
        if slots is None or os.path.basename(slot) in slots
        for rec in running_sessions(layout.runtime_dir(slot))
        if _is_supervisor(rec)
    ]


def _is_supervisor(rec: dict) -> bool:
    """The process the record names is alive and is that supervisor (started before it wrote
    the record, running ``supervisor``), not a process that got its pid later."""
    try:
        proc = psutil.Process(int(rec["pid"]))
        if proc.status() == psutil.STATUS_ZOMBIE:
            return False
        started = rec.get("started_at")
        if isinstance(started, (int, float)) and proc.create_time() > started + START_SLACK_S:
            return False
        return "supervisor" in proc.cmdline()
    except (psutil.Error, OSError, KeyError, TypeError, ValueError):
        return False


def live_actors(slot: str, session_ids: list[str]) -> list[tuple[str, str, int]]:
    """(session id, actor, pid) of each live actor process of these sessions of the slot: the
    pids of their journals' ``actor_start`` rows, each confirmed by the process's own
    ``GAMERIG_SESSION``. An actor whose supervisor was killed lives on until it misses three
    heartbeats, and may append a row to its journal until then."""
    out = []
    for sid in session_ids:
        journal = os.path.join(layout.capture_dir(slot), "sessions", sid, "events.jsonl")
        if not os.path.exists(journal):
            continue
        pids: dict[int, str] = {}
        for line in iter_lines(journal):
            if line.row is not None and line.row.get("event") == ActorStart.KIND and line.row.get("pid"):
                pids[int(line.row["pid"])] = str(line.row.get("actor"))
        out += [(sid, actor, pid) for pid, actor in pids.items() if actor_alive((sid, actor, pid))]
    return out


def has_runtime_record(slot: str) -> bool:
    """A supervisor's runtime record is in the slot: it has not ended cleanly (it removes the
    record as it ends), or it was killed."""
    try:
        return any(n.endswith(".json") for n in os.listdir(layout.runtime_dir(slot)))
    except OSError:
        return False


def actor_alive(actor: tuple[str, str, int]) -> bool:
    """The process ``actor`` names is alive and is an actor of that session."""
    try:
        proc = psutil.Process(actor[2])
        return proc.status() != psutil.STATUS_ZOMBIE and proc.environ().get("GAMERIG_SESSION") == actor[0]
    except (psutil.Error, OSError):
        return False


def take_driver_lock(root: str, wait_s: float = 0.5) -> int:
    """Lock the fleet root for this driver (``fleet start``, a resume) for as long as it lives;
    returns the descriptor to keep open. Raises ``FleetFileError`` when another driver holds
    it (a ``status`` testing the lock holds it for an instant: retried for ``wait_s``)."""
    fd = os.open(layout.lock_path(root), os.O_RDWR | os.O_CREAT, 0o644)
    end = time.monotonic() + wait_s
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            break
        except BlockingIOError:
            if time.monotonic() > end:
                os.close(fd)
                pid = read_fleet(root).get("driver_pid") if layout.is_fleet_root(root) else None
                raise FleetFileError(
                    root,
                    "driver",
                    f"the fleet's driver (pid {pid}) is still running; stop "
                    "the fleet first (supervisor fleet stop) or wait for it",
                ) from None
            time.sleep(0.05)
    os.ftruncate(fd, 0)
    os.write(fd, f"{os.getpid()} {socket.gethostname()}\n".encode())
    return fd


def resume_command(root: str, info: dict) -> str:
    address = info.get("ray_address")
    return f"supervisor fleet start --resume {root}" + (f" --ray-address {address}" if address else "")


def status(root: str) -> dict:
    info = read_fleet(root)
    rows = read_rows(root)
    counts = {o: sum(r["outcome"] == o for r in rows) for o in OUTCOMES}
    state = info.get("state")
    if state in ("starting", "running", "interrupted") and driver_alive(root) is False:
        state = "interrupted"  # the fleet process is gone without finishing
    return {
        "root": root,
        "name": info.get("name"),
        "state": state,
        "backend": info.get("backend"),
        "sessions": info.get("sessions"),
        "done": len(rows),
        "running_here": len(live_supervisors(root)),
        "outcomes": counts,
        "steps": sum(r.get("steps") or 0 for r in rows),
        "stop_requested": os.path.exists(layout.stop_path(root)),
        "driver_pid": info.get("driver_pid"),
        "driver_host": info.get("host"),
        "resume_command": resume_command(root, info) if state == "interrupted" else None,
    }


def request_stop(root: str) -> list[int]:
    """Ask every session of the fleet to stop; returns the pids signalled here."""
    with open(layout.stop_path(root), "a", encoding="utf-8") as fh:
        fh.write(f"{time.time()} stop requested by pid {os.getpid()}\n")
    pids = []
    for rec in live_supervisors(root):
        try:
            os.kill(int(rec["pid"]), signal.SIGTERM)
            pids.append(int(rec["pid"]))
        except OSError:
            continue
    return pids


def wait_stopped(root: str, timeout_s: float) -> bool:
    """Wait until the fleet has finished (fleet.json no longer running) or, when its fleet
    process is gone, until none of its supervisors runs here."""
    end = time.monotonic() + timeout_s
    while time.monotonic() < end:
        state = read_fleet(root).get("state")
        if state != "running" or (not driver_alive(root) and not live_supervisors(root)):
            return True
        time.sleep(0.2)
    return False


def driver_alive(root: str) -> bool | None:
    """Is the fleet's driver running? Its ``driver.lock`` is held exactly as long as it lives;
    a root without one (or on a file system without locks) falls back on its pid when it ran
    on this host, and is None (cannot tell) when it ran elsewhere."""
    try:
        fd = os.open(layout.lock_path(root), os.O_RDONLY)
    except OSError:
        fd = None
    if fd is not None:
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
            fcntl.flock(fd, fcntl.LOCK_UN)
            return False
        except BlockingIOError:
            return True
        except OSError:
            pass  # no locks on this file system
        finally:
            os.close(fd)
    info = read_fleet(root)
    if info.get("host") != socket.gethostname():
        return None
    try:
        os.kill(int(info.get("driver_pid")), 0)
    except (OSError, TypeError, ValueError):
        return False
    return True
