"""Exceptions of the fleet tools; one root, constructors take the offending values.

FleetError
├── FleetFileError   a fleet file that cannot be used: names the file, the key, the problem
│                    (``supervisor fleet start`` exits 2)
├── NotAFleet        PATH is not a fleet root (no fleet.json), or no running fleet matches
└── RayUnavailable   ``--ray-address`` given but Ray is not installed, not reachable, or the
                     cluster lacks a resource the fleet needs (exits 2, naming it)
"""

from __future__ import annotations


class FleetError(Exception):
    """Root of the fleet tools' exceptions."""


class FleetFileError(FleetError):
    def __init__(self, where: str, key: str, problem: str):
        super().__init__(f"{where}: {key}: {problem}" if key else f"{where}: {problem}")
        self.where, self.key, self.problem = where, key, problem


class NotAFleet(FleetError):
    def __init__(self, path: str, problem: str):
        super().__init__(f"{path}: {problem}")
        self.path, self.problem = path, problem


class RayUnavailable(FleetError):
    def __init__(self, address: str, problem: str):
        super().__init__(f"ray {address}: {problem}")
        self.address, self.problem = address, problem
