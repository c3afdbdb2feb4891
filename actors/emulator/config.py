"""The emulator actor's settings, read once from the profile and checked with clear errors.

Profile keys (see ``docs/emulator.md``)::

    game.rom                          cartridge path; empty or ``builtin`` = our demo cartridge
    emulator.record                   keep a recording under <session>/recording/ (default true)
    emulator.sound / emulator.cgb     sound emulation (off) / force CGB or DMG (null = header)
    emulator.checkpoint_every_frames  automatic checkpoint interval (null = none; default 600)
    emulator.memory_regions           {name: [address, length]} read by every observe
    emulator.recording_limits         the seed's limits (maxBytes, maxFrames, ...)
    emulator.fsync_inputs             fsync each input line before its frames run
    emulator.frames_per_step / samples_per_step   hints for the pyboy policies (passed on in
                                      each observation by the observer, not used here)

A bad value raises :class:`ConfigProblem` naming the key; the actor turns it into a recorded
session stop rather than a restart loop.
"""
from __future__ import annotations

import dataclasses
import os
from pathlib import Path
from typing import Any

from .errors import EmulatorError
from .limits import RecordingLimits

BUILTIN_ROM = ("", "builtin")


class ConfigProblem(Exception):
    def __init__(self, key: str, problem: str):
        super().__init__(f"{key}: {problem}")
        self.key, self.problem = key, problem


@dataclasses.dataclass(frozen=True)
class EmulatorConfig:
    rom: bytes
    rom_source: str                     # the path read, or "builtin"
    record: bool
    sound: bool
    cgb: bool | None
    checkpoint_every_frames: int | None
    memory_regions: dict[str, tuple[int, int]]
    limits: RecordingLimits
    fsync_inputs: bool

    @classmethod
    def from_profile(cls, setting) -> "EmulatorConfig":
        """``setting`` is ``ActorContext.setting`` (dotted key, default) or an equivalent."""
        rom, source = load_rom(setting("game.rom"))
        try:
            limits = RecordingLimits.from_options(dict(setting("emulator.recording_limits") or {}))
        except EmulatorError as exc:
            raise ConfigProblem("emulator.recording_limits", str(exc)) from None
        every = setting("emulator.checkpoint_every_frames", 600)
        if every is not None and (isinstance(every, bool) or not isinstance(every, int) or every < 1):
            raise ConfigProblem("emulator.checkpoint_every_frames", f"expected null or an integer >= 1, got {every!r}")
        return cls(rom=rom, rom_source=source, record=bool(setting("emulator.record", True)),
                   sound=bool(setting("emulator.sound", False)), cgb=setting("emulator.cgb"),
                   checkpoint_every_frames=every,
                   memory_regions=parse_regions(setting("emulator.memory_regions") or {}),
                   limits=limits, fsync_inputs=bool(setting("emulator.fsync_inputs", False)))


def load_rom(value: Any) -> tuple[bytes, str]:
    """The ROM bytes named by ``game.rom`` (read once; PyBoy never sees the path)."""
    if value is None or (isinstance(value, str) and value.strip().lower() in BUILTIN_ROM):
        from .cartridge import build_rom
        return build_rom(), "builtin"
    if not isinstance(value, str):
        raise ConfigProblem("game.rom", f"expected a path, got {value!r}")
    path = Path(os.path.expanduser(value))
    try:
        return path.read_bytes(), str(path.resolve())
    except OSError as exc:
        raise ConfigProblem("game.rom", f"cannot read {value!r}: {exc.strerror or exc}") from None


def parse_regions(raw: Any) -> dict[str, tuple[int, int]]:
    """``{name: [address, length]}`` or ``{name: address}`` (length 1) → name → (address, length)."""
    if not isinstance(raw, dict):
        raise ConfigProblem("emulator.memory_regions", f"expected a mapping, got {raw!r}")
    out = {}
    for name, spec in raw.items():
        key = f"emulator.memory_regions.{name}"
        if isinstance(spec, int) and not isinstance(spec, bool):
            spec = [spec, 1]
        if (not isinstance(spec, (list, tuple)) or len(spec) != 2
                or not all(isinstance(v, int) and not isinstance(v, bool) for v in spec)):
            raise ConfigProblem(key, f"expected [address, length] or an address, got {spec!r}")
        address, length = spec
        if not (0 <= address <= 0xFFFF and 1 <= length <= 0x10000 - address):
            raise ConfigProblem(key, f"address {address:#x} + length {length} is outside 0x0000..0xFFFF")
        out[str(name)] = (address, length)
    return out
