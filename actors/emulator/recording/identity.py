"""Versions that bind checkpoints to the exact emulator build.

* ``PROTOCOL_VERSION`` — the emulator worker protocol; bump when requests or checkpoint
  semantics change.
* :func:`pyboy_version` — ``importlib.metadata.version("pyboy")``.
* :func:`implementation_hash` — SHA-256 over the source files that run the emulation and
  write or read its states (``EMULATION_MODULES``), so changing the emulator code
  invalidates old checkpoints even when the ROM is unchanged. Modules that only read or
  maintain recordings (reader, review, clips, archives, ...), the actor's wiring and the
  policies cannot change what a state means and are left out: editing them must not make
  every saved checkpoint (``game.start_checkpoint``) stale.
"""

from __future__ import annotations

import functools
import hashlib
import importlib.metadata
from pathlib import Path

PROTOCOL_VERSION = 1
SCHEMA_VERSION = 1
WRITER = "gamerig.actors.emulator"
EMULATION_MODULES = (
    "session/battery.py",
    "session/buttons.py",
    "session/checkpoints.py",
    "recording/identity.py",
    "session/machine.py",
    "recording/rom.py",
    "session/core.py",
    "session/sampling.py",
)  # under actors/emulator/


@functools.cache
def pyboy_version() -> str:
    return importlib.metadata.version("pyboy")


@functools.cache
def implementation_hash() -> str:
    digest = hashlib.sha256()
    package = Path(__file__).resolve().parents[1]  # actors/emulator
    for name in EMULATION_MODULES:
        digest.update(name.encode() + b"\0" + (package / name).read_bytes() + b"\0")
    return digest.hexdigest()


def build_identity(rom_sha256: str, cgb: bool) -> dict:
    """The identity a checkpoint must match exactly to be restored."""
    return {
        "romSha256": rom_sha256,
        "cgb": cgb,
        "pyboyVersion": pyboy_version(),
        "protocolVersion": PROTOCOL_VERSION,
        "implementationHash": implementation_hash(),
    }
