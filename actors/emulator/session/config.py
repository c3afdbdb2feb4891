"""The emulator actor's settings, read once from the profile and checked with clear errors.

Profile keys (see ``docs/emulator.md``)::

    game.rom                          cartridge path; empty or ``builtin`` = our demo cartridge
    game.start_checkpoint             start from this checkpoint file (or a recording directory:
                                      its newest checkpoint) instead of from boot
    game.battery_save / battery_mode  battery RAM (.ram) to start from; ``load`` (default) or
                                      ``load-and-keep`` (write the RAM back there at the end)
    emulator.record                   keep a recording under <session>/recording/ (default true)
    emulator.sound / emulator.cgb     sound emulation (off) / force CGB or DMG (null = header)
    emulator.checkpoint_every_frames  automatic checkpoint interval (null = none; default 3600)
    emulator.memory_regions           {name: [address, length]} read by every observe
    emulator.score                    values, score, milestones, game_over, wrapper: read after
                                      every step and observe (session/score.py; null: the demo
                                      cartridge's own, or PyBoy's game wrapper's, or none)
    emulator.recording_limits         recording limits (maxBytes, maxFrames, ...: recording/limits.py)
    emulator.fsync_inputs             fsync each input line before its frames run
    emulator.frames_per_step / samples_per_step   hints for the pyboy policies (passed on in
                                      each observation by the observer, not used here)

A bad value raises :class:`ConfigProblem` naming the key; the actor turns it into a recorded
session stop rather than a restart loop.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
from pathlib import Path
from typing import Any

from ..cartridge import build_rom
from ..cartridge.layout import is_demo_cartridge
from ..recording import journal as j
from ..recording.errors import EmulatorError, RecordingCorrupt, RomError
from ..recording.identity import build_identity
from ..recording.limits import MANIFEST, RecordingLimits
from ..recording.rom import RomIdentity, battery_ram_size
from . import checkpoints as ck
from .battery import BatterySave
from .score import ScoreSpec, parse_section
from .score_map import ScoreProblem

BUILTIN_ROM = ("", "builtin")
BATTERY_MODES = ("load", "load-and-keep")


class ConfigProblem(Exception):
    def __init__(self, key: str, problem: str):
        super().__init__(f"{key}: {problem}")
        self.key, self.problem = key, problem


@dataclasses.dataclass(frozen=True)
class EmulatorConfig:
    rom: bytes
    rom_source: str  # the path read, or "builtin"
    record: bool
    sound: bool
    cgb: bool | None
    checkpoint_every_frames: int | None
    memory_regions: dict[str, tuple[int, int]]
    limits: RecordingLimits
    fsync_inputs: bool
    start_checkpoint: dict | None = None  # {"path", "fileSha256", "sessionId", "checkpointId", ...}
    battery: BatterySave | None = None  # the battery save to start from
    battery_path: Path | None = None  # game.battery_save (written back with load-and-keep)
    battery_mode: str = "load"
    score: ScoreSpec | None = None  # emulator.score, checked against the cartridge

    @classmethod
    def from_profile(cls, setting) -> EmulatorConfig:
        """``setting`` is ``ActorContext.setting`` (dotted key, default) or an equivalent."""
        rom, source = load_rom(setting("game.rom"))
        identity = check_rom(rom, setting("game.rom"))
        cgb = setting("emulator.cgb")
        start = load_start_checkpoint(
            setting("game.start_checkpoint"), identity, identity.prefers_cgb if cgb is None else bool(cgb)
        )
        mode = setting("game.battery_mode", "load") or "load"
        battery_path, battery = load_battery(setting("game.battery_save"), mode, rom, identity)
        try:
            limits = RecordingLimits.from_options(dict(setting("emulator.recording_limits") or {}))
        except EmulatorError as exc:
            raise ConfigProblem("emulator.recording_limits", str(exc)) from None
        every = setting("emulator.checkpoint_every_frames", 3600)
        if every is not None and (isinstance(every, bool) or not isinstance(every, int) or every < 1):
            raise ConfigProblem("emulator.checkpoint_every_frames", f"expected null or an integer >= 1, got {every!r}")
        try:
            score = parse_section(
                setting("emulator.score"),
                rom,
                cgb=identity.prefers_cgb if cgb is None else bool(cgb),
                title=identity.title,
                demo=is_demo_cartridge(identity.title),
            )
        except ScoreProblem as exc:
            raise ConfigProblem(exc.key, exc.problem) from None
        return cls(
            rom=rom,
            rom_source=source,
            record=bool(setting("emulator.record", True)),
            sound=bool(setting("emulator.sound", False)),
            cgb=cgb,
            checkpoint_every_frames=every,
            memory_regions=parse_regions(setting("emulator.memory_regions") or {}),
            limits=limits,
            fsync_inputs=bool(setting("emulator.fsync_inputs", False)),
            start_checkpoint=start,
            battery=battery,
            battery_path=battery_path,
            battery_mode=mode,
            score=score,
        )


def load_rom(value: Any) -> tuple[bytes, str]:
    """The ROM bytes named by ``game.rom`` (read once; PyBoy never sees the path)."""
    if value is None or (isinstance(value, str) and value.strip().lower() in BUILTIN_ROM):
        return build_rom(), "builtin"
    if not isinstance(value, str):
        raise ConfigProblem("game.rom", f"expected a path, got {value!r}")
    path = Path(os.path.expanduser(value))
    if not path.exists():
        raise ConfigProblem("game.rom", f"ROM {value!r}: missing (no such file; resolved to {path.resolve()})")
    if path.is_dir():
        raise ConfigProblem("game.rom", f"ROM {value!r}: is a directory, not a ROM file")
    try:
        return path.read_bytes(), str(path.resolve())
    except OSError as exc:
        raise ConfigProblem("game.rom", f"ROM {value!r}: unreadable ({exc.strerror or exc})") from None


def check_rom(rom: bytes, value: Any) -> RomIdentity:
    """The ROM's identity, or a :class:`ConfigProblem` naming the path and what is wrong."""
    try:
        return RomIdentity.from_bytes(rom)
    except RomError as exc:
        raise ConfigProblem("game.rom", f"ROM {value or 'builtin'!r}: {exc.problem}") from None


def load_start_checkpoint(value: Any, rom: RomIdentity, cgb: bool) -> dict | None:
    """``game.start_checkpoint``: a checkpoint file, or a recording directory (its newest
    checkpoint, checked against the hash its journal recorded); decoded and identity-checked
    here so a wrong one stops the session before it starts."""
    key = "game.start_checkpoint"
    if value is None or value == "":
        return None
    if not isinstance(value, str):
        raise ConfigProblem(key, f"expected a checkpoint file or a recording directory, got {value!r}")
    path = Path(os.path.expanduser(value))
    try:
        if path.is_dir():
            path = newest_checkpoint(path)
        data = ck.read(path)
        header, _state = ck.decode(data, path)
        ck.check_identity(header, build_identity(rom.sha256, cgb), path)
    except EmulatorError as exc:
        raise ConfigProblem(key, str(exc)) from None
    return {
        "path": str(path.resolve()),
        "fileSha256": hashlib.sha256(data).hexdigest(),
        "sessionId": header.get("sessionId"),
        "checkpointId": header.get("checkpointId"),
        "frame": header.get("frame"),
        "actionIndex": header.get("actionIndex"),
        "label": header.get("label"),
    }


def newest_checkpoint(recording: Path) -> Path:
    """The newest checkpoint a recording's (verified) journal lists, if its file is unchanged."""
    if not (recording / "events.jsonl").is_file():
        raise ConfigProblem(
            "game.start_checkpoint",
            f"{recording} is a directory but not a recording "
            "(no events.jsonl); name a .ckpt file or a recording directory",
        )
    checkpoints = recorded_checkpoints(recording)
    if not checkpoints:
        raise ConfigProblem("game.start_checkpoint", f"recording {recording} has no checkpoint")
    newest = checkpoints[-1]
    path = recording / newest["path"]
    if not path.is_file() or hashlib.sha256(path.read_bytes()).hexdigest() != newest["fileSha256"]:
        raise ConfigProblem("game.start_checkpoint", f"{path}: missing, or not the file the journal recorded")
    return path


def recorded_checkpoints(recording: Path) -> list[dict]:
    """The checkpoint rows of a recording's verified journal, one per id, in the order the
    recording reader's summary lists them (newest last). Read here with the journal module
    alone: ``validate`` and ``start`` check inputs without the frame codec (numpy, PIL) that
    the reader imports."""
    try:
        json.loads((recording / MANIFEST).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise RecordingCorrupt(recording, f"unreadable {MANIFEST} ({exc})") from exc
    by_id: dict[str, dict] = {}
    for event in j.read_journal(recording / "events.jsonl").events:
        if event["kind"] == j.CHECKPOINT:
            by_id[event["checkpointId"]] = event
    return list(by_id.values())


def load_battery(value: Any, mode: Any, rom: bytes, identity: RomIdentity) -> tuple[Path | None, BatterySave | None]:
    """``game.battery_save`` / ``game.battery_mode``: (the path, the save to start from)."""
    if mode not in BATTERY_MODES:
        raise ConfigProblem("game.battery_mode", f"{mode!r} is not one of {', '.join(BATTERY_MODES)}")
    if value is None or value == "":
        return None, None
    key = "game.battery_save"
    if not isinstance(value, str):
        raise ConfigProblem(key, f"expected the path of a battery save (.ram), got {value!r}")
    if not identity.battery:
        raise ConfigProblem(
            key,
            f"cartridge {identity.title!r} (type {identity.cartridge_type:#04x}) has no battery to load a save into",
        )
    path = Path(os.path.expanduser(value))
    if not path.exists() and mode == "load-and-keep":
        return path, None  # the first session: the RAM starts empty; the file is written at the end
    try:
        return path, BatterySave.read(path, battery_ram_size(rom))
    except EmulatorError as exc:
        raise ConfigProblem(key, str(exc)) from None


def parse_regions(raw: Any) -> dict[str, tuple[int, int]]:
    """``{name: [address, length]}`` or ``{name: address}`` (length 1) → name → (address, length)."""
    if not isinstance(raw, dict):
        raise ConfigProblem("emulator.memory_regions", f"expected a mapping, got {raw!r}")
    out = {}
    for name, spec in raw.items():
        key = f"emulator.memory_regions.{name}"
        if isinstance(spec, int) and not isinstance(spec, bool):
            spec = [spec, 1]
        if (
            not isinstance(spec, (list, tuple))
            or len(spec) != 2
            or not all(isinstance(v, int) and not isinstance(v, bool) for v in spec)
        ):
            raise ConfigProblem(key, f"expected [address, length] or an address, got {spec!r}")
        address, length = spec
        if not (0 <= address <= 0xFFFF and 1 <= length <= 0x10000 - address):
            raise ConfigProblem(key, f"address {address:#x} + length {length} is outside 0x0000..0xFFFF")
        out[str(name)] = (address, length)
    return out
