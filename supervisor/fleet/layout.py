"""The layout of a fleet root: one directory per fleet, one slot directory per session.

    <capture_root>/<name>-<UTC stamp>-<hex>/    the fleet root
      fleet.json          the fleet: file, profile, matrix, plan, backend, state, totals
      fleet.yaml          the fleet file as it was given
      results.jsonl       one row per session (docs/fleet.md), written as each one ends
      stop                present once ``supervisor fleet stop`` asked every session to stop
      driver.lock         locked by the running driver (``fleet start``, a resume) for its life
      s0000/              the first session's slot (plan index 0)
        capture/          its capture root: sessions/<session-id>/ (events.jsonl, session.json,
                          observations/ ...), decisions.jsonl, sessions.jsonl
        runtime/          its supervisor's runtime dir: the live record, then <id>.logs/
        supervisor.log    what ``supervisor start`` printed (progress lines, the end line)
        attempt-1.json    who ran it (host, pids), when, how it ended; attempt-2.json after a
                          retry on Ray

This module knows paths only. What a capture reader needs (``fleet.json`` tells a fleet root
apart, the slots and their capture roots) lives in ``supervisor.capture.fleetroot``, below
both the capture tools and the fleet, and is named here too.
"""

from __future__ import annotations

import datetime as dt
import os
import secrets

from supervisor.capture.fleetroot import FLEET_FILE, capture_dir, capture_roots, is_fleet_root, slots

FLEET_YAML = "fleet.yaml"
RESULTS = "results.jsonl"
STOP = "stop"
LOCK = "driver.lock"


def new_root(capture_root: str, name: str) -> str:
    """Create and return a fresh fleet root under ``capture_root``."""
    stamp = dt.datetime.now(dt.UTC).strftime("%Y%m%dT%H%M%SZ")
    root = os.path.join(os.path.abspath(capture_root), f"{name}-{stamp}-{secrets.token_hex(3)}")
    os.makedirs(root)
    return root


def slot_name(index: int) -> str:
    return f"s{index:04d}"


def slot_dir(root: str, index: int) -> str:
    return os.path.join(root, slot_name(index))


def runtime_dir(slot: str) -> str:
    return os.path.join(slot, "runtime")


def log_path(slot: str) -> str:
    return os.path.join(slot, "supervisor.log")


def attempt_path(slot: str, attempt: int) -> str:
    return os.path.join(slot, f"attempt-{attempt}.json")


def stop_path(root: str) -> str:
    return os.path.join(root, STOP)


def lock_path(root: str) -> str:
    return os.path.join(root, LOCK)


__all__ = [
    "FLEET_FILE",
    "FLEET_YAML",
    "RESULTS",
    "STOP",
    "LOCK",
    "new_root",
    "is_fleet_root",
    "slot_name",
    "slot_dir",
    "capture_dir",
    "runtime_dir",
    "log_path",
    "attempt_path",
    "stop_path",
    "lock_path",
    "slots",
    "capture_roots",
]
