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

from . import control, layout, matrix, spec as fleet_spec
from .errors import FleetFileError, RayUnavailable
from .local import LocalBackend, default_concurrency
from .report import table
from .results import write_fleet
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
    if os.path.exists(root) and os.listdir(root):
        raise FleetFileError("--fleet-root", "", f"{root} exists and is not empty")
    os.makedirs(root, exist_ok=True)
    return root


def start(path: str, *, concurrency: int | None = None, ray_address: str | None = None,
          root: str | None = None, runtime_dir: str = "run/runtime", progress: str = "auto",
          stream=None) -> int:
    """Run a fleet to its end; returns the exit code (0 all ok, 1 some session not ok).
    Raises ``FleetFileError`` or ``RayUnavailable`` before anything starts."""
    stream = stream or sys.stderr
    spec = fleet_spec.load(path)
    if root is None:   # fleet roots go under capture_root: never outside the user's tree by accident
        fleet_spec.check_capture_root(spec)
    plans = matrix.expand(spec)
    module = load_backend_module(ray_address) if ray_address else None
    workdir = os.getcwd()
    if module is None:
        n, why = (concurrency, "--concurrency") if concurrency else (
            (spec.concurrency, "the fleet file") if spec.concurrency else default_concurrency())
        if n > len(plans):
            n, why = len(plans), f"{why}; capped at the {len(plans)} sessions"
        backend = LocalBackend(workdir, n, spec.session_timeout_s)
    else:  # connects first: nothing is created when the cluster cannot be used
        n = concurrency or spec.concurrency or len(plans)
        why = "in flight at most; Ray places them by their declared resources"
        backend = module.RayBackend(ray_address, spec.ray, plans, workdir, spec.session_timeout_s)
    backend.root = root = make_root(spec, root)
    shutil.copyfile(spec.path, os.path.join(root, layout.FLEET_YAML))
    info = _info(spec, plans, root, backend.name, ray_address, n, why, workdir)
    stream.write(f"fleet {spec.name}: {len(plans)} sessions ({spec.cells} cells), "
                 f"{backend.name}, concurrency {n} ({why})\nfleet root {root}\n")
    record = control.publish(runtime_dir, root, spec.name)
    old = {s: signal.signal(s, lambda *_: _request_stop(root)) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        run = FleetRun(info, plans, root, backend, n, progress, stream)
        code = run.run()
    finally:
        for s, h in old.items():
            signal.signal(s, h)
        os.unlink(record)
    stream.write(table(run.rows) + f"\nresults {os.path.join(root, layout.RESULTS)}\n"
                 f"verify  supervisor capture verify {root}\n")
    return code


def _request_stop(root: str) -> None:
    with open(layout.stop_path(root), "a", encoding="utf-8") as fh:
        fh.write(f"{time.time()} stop requested by a signal to the fleet\n")


def _info(spec, plans, root, backend, address, n, why, workdir) -> dict:
    info = {"fleet_version": FLEET_VERSION, "name": spec.name, "description": spec.description,
            "fleet_file": spec.path, "profile": spec.profile, "set": spec.sets, "matrix": spec.matrix,
            "sessions": len(plans), "cells": spec.cells, "capture_root": spec.capture_root,
            "root": root, "backend": backend, "ray_address": address, "concurrency": n,
            "concurrency_basis": why, "session_timeout_s": spec.session_timeout_s,
            "host": socket.gethostname(), "driver_pid": os.getpid(), "workdir": workdir,
            "plans": [{k: p.to_dict()[k] for k in ("index", "slot", "cell_id", "repeat", "game", "resource")}
                      for p in plans]}
    write_fleet(root, {**info, "state": "starting"})
    return info
