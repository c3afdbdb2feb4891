"""``supervisor fleet start``: load the fleet file, expand it, pick the backend, run the loop.

The Ray backend is loaded by name (``importlib``) only when ``--ray-address`` is given, so
a local fleet never needs Ray installed.
"""

from __future__ import annotations

import importlib
import os
import shutil
import signal
import socket
import sys
import time

from . import control, layout, matrix
from . import resume as resume_mod
from . import spec as fleet_spec
from .errors import FleetFileError, NotAFleet, RayUnavailable
from .local import LocalBackend, default_concurrency
from .report import table
from .results import append_row, read_fleet, read_rows, write_fleet
from .scheduler import FleetRun

RAY_BACKEND = "supervisor.fleet.ray_backend"
FLEET_VERSION = 1


def load_backend_module(address: str):
    try:
        return importlib.import_module(RAY_BACKEND)
    except ModuleNotFoundError as exc:
        if exc.name and exc.name.split(".")[0] == "ray":
            raise RayUnavailable(address, "Ray is not installed here: pip install 'gamerig[ray]'") from None
        raise


def make_root(spec: fleet_spec.FleetSpec, root: str | None) -> str:
    if root is None:
        return layout.new_root(spec.capture_root, spec.name)
    root = os.path.abspath(root)
    # a driver killed while it made the root leaves its lock and maybe a hidden temporary file
    if os.path.exists(root) and [n for n in os.listdir(root) if n != layout.LOCK and not n.startswith(".")]:
        raise FleetFileError("--fleet-root", "", f"{root} exists and is not empty")
    os.makedirs(root, exist_ok=True)
    return root


def start(
    path: str | None,
    *,
    concurrency: int | None = None,
    ray_address: str | None = None,
    root: str | None = None,
    runtime_dir: str = "run/runtime",
    progress: str = "auto",
    stream=None,
    resume: str | None = None,
) -> int:
    """Run a fleet to its end (or, with ``resume``, what a dead driver left of one: see
    ``resume``); returns the exit code (0 all ok, 1 some session not ok, 128 + the signal when
    a signal interrupted it). Raises ``FleetFileError``, ``NotAFleet`` or ``RayUnavailable``
    before anything starts. The driver holds the fleet root's lock for its whole life."""
    stream = stream or sys.stderr
    locks: list[int] = []
    try:
        if resume is not None:
            root = os.path.abspath(resume)
            if not layout.is_fleet_root(root):
                raise NotAFleet(root, _no_fleet_json(root))
            locks.append(control.take_driver_lock(root))  # refuses while the fleet's driver runs
        return _start(path, concurrency, ray_address, root, runtime_dir, progress, stream, resume, locks)
    finally:
        for fd in locks:
            os.close(fd)


def _start(path, concurrency, ray_address, root, runtime_dir, progress, stream, resume, locks) -> int:
    decisions = None
    if resume is not None:
        old_info = read_fleet(root)
        spec = fleet_spec.load(old_info["fleet_file"]) if os.path.isfile(old_info.get("fleet_file") or "") else None
        plans = resume_mod.plans_of(root, old_info)
    else:
        spec = fleet_spec.load(path)
        if root is None:  # fleet roots go under capture_root: never outside the user's tree by accident
            fleet_spec.check_capture_root(spec)
        plans = matrix.expand(spec)
    timeout_s = spec.session_timeout_s if spec else old_info.get("session_timeout_s")
    module = load_backend_module(ray_address) if ray_address else None
    workdir = os.getcwd()
    if module is None:
        n, why = (
            (concurrency, "--concurrency")
            if concurrency
            else (
                (spec.concurrency, "the fleet file")
                if spec and spec.concurrency
                else (old_info["concurrency"], "the fleet as started")
                if resume
                else default_concurrency()
            )
        )
        if n > len(plans):
            n, why = len(plans), f"{why}; capped at the {len(plans)} sessions"
        backend = LocalBackend(workdir, n, timeout_s)
    else:  # connects first: nothing is created when the cluster cannot be used
        if spec is None:
            raise FleetFileError(
                old_info.get("fleet_file") or root,
                "ray",
                "resuming on Ray needs the fleet file the fleet started from (its ray section)",
            )
        n = concurrency or spec.concurrency or len(plans)
        why = "in flight at most; Ray places them by their declared resources"
        backend = module.RayBackend(ray_address, spec.ray, plans, workdir, timeout_s)
    if resume is None:
        backend.root = root = make_root(spec, root)
        locks.append(control.take_driver_lock(root))
        info = _info(spec, plans, root, backend.name, ray_address, n, why, workdir)
        shutil.copyfile(spec.path, os.path.join(root, layout.FLEET_YAML))
        stream.write(
            f"fleet {spec.name}: {len(plans)} sessions ({spec.cells} cells), "
            f"{backend.name}, concurrency {n} ({why})\nfleet root {root}\n"
        )
    else:
        backend.root = root
        stream.write(f"fleet {old_info['name']}: resuming {root}\n")
        stream.flush()
        resume_mod.take_over(root, say=lambda m: (stream.write(m + "\n"), stream.flush()))
        decisions = resume_mod.decide(root, plans)
        if os.path.exists(layout.stop_path(root)):  # a stop asked of the dead driver: resuming overrides it
            os.unlink(layout.stop_path(root))
        info = {
            **old_info,
            "backend": backend.name,
            "ray_address": ray_address,
            "concurrency": n,
            "concurrency_basis": why,
            "host": socket.gethostname(),
            "driver_pid": os.getpid(),
            "workdir": workdir,
            "resumed": [*old_info.get("resumed", []), time.time()],
        }
        info.pop("interrupted_by", None)
        for row in resume_mod.rows_for(info, root, decisions):
            append_row(root, row)
        write_fleet(root, {**info, "state": "starting"})
        stream.write(resume_mod.summary(decisions) + "\n")
    record = control.publish(runtime_dir, root, info["name"])
    run = FleetRun(info, plans, root, backend, n, progress, stream)
    if decisions is not None:
        run.resume_from(decisions, read_rows(root))
    old = {s: signal.signal(s, lambda signum, _f: run.interrupt(signum)) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        code = run.run()
    finally:
        for s, h in old.items():
            signal.signal(s, h)
        if not run.interrupted:  # an interrupted fleet stays listed: fleet status names its resume
            os.unlink(record)
    stream.write(
        table(run.rows) + f"\nresults {os.path.join(root, layout.RESULTS)}\nverify  supervisor capture verify {root}\n"
    )
    if run.interrupted:
        left = len(plans) - len(run.rows)
        stream.write(
            f"interrupted: {len(run.rows)} of {len(plans)} sessions done; {len(run.cut)} stopped at once "
            f"and {left - len(run.cut)} not started: the resume runs them\n"
            f"resume  {control.resume_command(root, info)}\n"
        )
    return code


def _no_fleet_json(root: str) -> str:
    if os.path.exists(layout.lock_path(root)) and not layout.slots(root):  # made, never recorded
        return (
            f"no {layout.FLEET_FILE} here: the fleet's driver died before it recorded the fleet, and no "
            f"session ran; start the fleet again (supervisor fleet start FLEET.yaml --fleet-root {root})"
        )
    return f"no {layout.FLEET_FILE} here: not a fleet root"


def _info(spec, plans, root, backend, address, n, why, workdir) -> dict:
    info = {
        "fleet_version": FLEET_VERSION,
        "name": spec.name,
        "description": spec.description,
        "fleet_file": spec.path,
        "profile": spec.profile,
        "set": spec.sets,
        "matrix": spec.matrix,
        "sessions": len(plans),
        "cells": spec.cells,
        "capture_root": spec.capture_root,
        "root": root,
        "backend": backend,
        "ray_address": address,
        "concurrency": n,
        "concurrency_basis": why,
        "session_timeout_s": spec.session_timeout_s,
        "host": socket.gethostname(),
        "driver_pid": os.getpid(),
        "workdir": workdir,
        "prices": spec.prices,
        "plans": [p.to_dict() for p in plans],
    }  # whole: a resume runs them from this file alone
    write_fleet(root, {**info, "state": "starting"})
    return info
