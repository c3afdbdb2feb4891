"""Finding, inspecting and stopping fleets: ``supervisor fleet status|stop``.

A running ``supervisor fleet start`` publishes ``<runtime_dir>/fleets/<fleet>.json`` (its
pid and fleet root) while it runs. Everything else is read from the fleet root itself, so
status and stop work from any shell, and also after the fleet process is gone:

* status counts the sessions with a results row (done, by outcome) and the sessions whose
  supervisor is alive (running: the live record in the slot's runtime directory);
* stop creates the fleet's ``stop`` file (every runner, local or on a Ray node, SIGTERMs its
  supervisor when it sees it, and the fleet starts nothing new), and SIGTERMs every
  supervisor of the fleet that runs on this machine at once; each one stops its actors in
  order and finalizes its capture (docs/supervision.md).
"""
from __future__ import annotations

import json
import os
import signal
import socket
import time

from supervisor.rundir import running_sessions

from . import layout
from .errors import NotAFleet
from .results import OUTCOMES, read_fleet, read_rows


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
    raise NotAFleet(fleets_dir(runtime_dir), "several fleets are running; name one: "
                    + ", ".join(r["root"] for r in recs))


DEFAULT_FLEETS = os.path.join("run", "capture", "fleets")   # where run/fleets/*.yaml put their roots


def newest_root(base: str = DEFAULT_FLEETS) -> str | None:
    """The most recently started fleet root under ``base`` (by its ``fleet.json``), or None."""
    try:
        names = os.listdir(base)
    except OSError:
        return None
    roots = [os.path.join(base, n) for n in names if layout.is_fleet_root(os.path.join(base, n))]
    return os.path.abspath(max(roots, key=lambda r: os.path.getmtime(os.path.join(r, layout.FLEET_FILE)))) \
        if roots else None


def live_supervisors(root: str) -> list[dict]:
    """Runtime records of this fleet's supervisors that are alive on this machine."""
    return [rec for slot in layout.slots(root) for rec in running_sessions(layout.runtime_dir(slot))]


def status(root: str) -> dict:
    info = read_fleet(root)
    rows = read_rows(root)
    counts = {o: sum(r["outcome"] == o for r in rows) for o in OUTCOMES}
    state = info.get("state")
    if state == "running" and info.get("host") == socket.gethostname() and not driver_alive(root):
        state = "interrupted"  # the fleet process is gone without finishing
    return {"root": root, "name": info.get("name"), "state": state,
            "backend": info.get("backend"), "sessions": info.get("sessions"),
            "done": len(rows), "running_here": len(live_supervisors(root)),
            "outcomes": counts, "steps": sum(r.get("steps") or 0 for r in rows),
            "stop_requested": os.path.exists(layout.stop_path(root))}


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


def driver_alive(root: str) -> bool:
    pid = read_fleet(root).get("driver_pid")
    try:
        os.kill(int(pid), 0)
    except (OSError, TypeError, ValueError):
        return False
    return True
