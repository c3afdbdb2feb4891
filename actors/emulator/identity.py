"""Versions that bind checkpoints to the exact emulator build.

* ``PROTOCOL_VERSION`` — the emulator worker protocol; bump when requests or checkpoint
  semantics change.
* :func:`pyboy_version` — ``importlib.metadata.version("pyboy")``.
* :func:`implementation_hash` — SHA-256 over this package's core source files (every
  top-level ``*.py`` except the policy helpers and the actor's wiring, which cannot affect
  emulation), so changing
  the emulator code invalidates old checkpoints even when the ROM is unchanged.
"""

from __future__ import annotations

import functools
import hashlib
import importlib.metadata
from pathlib import Path

PROTOCOL_VERSION = 1
SCHEMA_VERSION = 1
WRITER = "gamerig.actors.emulator"
_NOT_EMULATION = {"policy.py", "actor.py", "config.py", "__main__.py"}


@functools.cache
def pyboy_version() -> str:
    return importlib.metadata.version("pyboy")


@functools.cache
def implementation_hash() -> str:
    digest = hashlib.sha256()
    package = Path(__file__).resolve().parent
    for path in sorted(package.glob("*.py")):
        if path.name in _NOT_EMULATION:
            continue
        digest.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()


def build_identity(rom_sha256: str, cgb: bool) -> dict:
    """The identity a checkpoint must match exactly to be restored."""
    return {"romSha256": rom_sha256, "cgb": cgb, "pyboyVersion": pyboy_version(),
            "protocolVersion": PROTOCOL_VERSION, "implementationHash": implementation_hash()}
