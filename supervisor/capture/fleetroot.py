"""What a capture reader needs of a fleet root's layout: recognise one, and find the capture
root of each of its session slots (``supervisor fleet``: docs/fleet.md).

    <fleet root>/
      fleet.json          present in every fleet root (what tells one apart)
      s0000/              the first session's slot (plan index 0); s0001/, ...
        capture/          its capture root: sessions/<session-id>/, decisions.jsonl, sessions.jsonl

The rest of the layout (``supervisor.fleet.layout``) builds on these paths. This module knows
paths only, so verify, pack and the viewer can walk a fleet root without the fleet package.
"""

from __future__ import annotations

import os

FLEET_FILE = "fleet.json"


def is_fleet_root(path: str) -> bool:
    return os.path.isfile(os.path.join(path, FLEET_FILE))


def capture_dir(slot: str) -> str:
    return os.path.join(slot, "capture")


def slots(root: str) -> list[str]:
    """Every slot directory of a fleet root, in plan order."""
    try:
        names = sorted(os.listdir(root))
    except OSError:
        return []
    return [
        os.path.join(root, n)
        for n in names
        if n.startswith("s") and n[1:].isdigit() and os.path.isdir(os.path.join(root, n))
    ]


def capture_roots(root: str) -> list[str]:
    """The capture root of every session slot that has one (a session that never started
    has none)."""
    return [capture_dir(s) for s in slots(root) if os.path.isdir(os.path.join(capture_dir(s), "sessions"))]
