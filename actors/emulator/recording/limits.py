"""Recording limits (each option's default, maximum and minimum) and the per-parent admission rules.

| option              | default     | maximum       | minimum |
|---------------------|-------------|---------------|---------|
| ``maxBytes``        | 64 MiB      | 512 MiB       | 64 KiB  |
| ``maxFrames``       | 36,000      | 216,000       | 1       |
| ``maxWallTimeMs``   | 900,000 ms  | 3,600,000 ms  | 1       |
| ``recentFrameCount``| 12 frames   | 64 frames     | 1       |
| ``sampleEveryFrames``| every 4    | every 3,600   | 1       |

Within one recording parent a new attempt is refused when the parent already holds 64
recording directories, or when the sum of their reserved ``maxBytes`` plus the new one
would exceed 1 GiB. Old attempts are never pruned.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, fields
from pathlib import Path

from .errors import AdmissionRefused, InvalidOption

KIB, MIB, GIB = 1024, 1024**2, 1024**3
PARENT_MAX_RECORDINGS = 64
PARENT_MAX_RESERVED_BYTES = GIB
MANIFEST = "recording.json"
#: the ignore-all markers a recording directory (and an archive container and mapping) holds
MARKERS = {".gitignore": b"*\n", ".npmignore": b"*\n"}


@dataclass(frozen=True)
class LimitSpec:
    option: str
    default: int
    maximum: int
    minimum: int


SPECS = {
    "max_bytes": LimitSpec("maxBytes", 64 * MIB, 512 * MIB, 64 * KIB),
    "max_frames": LimitSpec("maxFrames", 36_000, 216_000, 1),
    "max_wall_time_ms": LimitSpec("maxWallTimeMs", 900_000, 3_600_000, 1),
    "recent_frame_count": LimitSpec("recentFrameCount", 12, 64, 1),
    "sample_every_frames": LimitSpec("sampleEveryFrames", 4, 3_600, 1),
}


@dataclass(frozen=True)
class RecordingLimits:
    """Validated limits; build from the wire's camelCase keys with :meth:`from_options`."""

    max_bytes: int = SPECS["max_bytes"].default
    max_frames: int = SPECS["max_frames"].default
    max_wall_time_ms: int = SPECS["max_wall_time_ms"].default
    recent_frame_count: int = SPECS["recent_frame_count"].default
    sample_every_frames: int = SPECS["sample_every_frames"].default

    def __post_init__(self):
        for f in fields(self):
            spec, value = SPECS[f.name], getattr(self, f.name)
            if isinstance(value, bool) or not isinstance(value, int):
                raise InvalidOption(spec.option, value, "an integer")
            if not spec.minimum <= value <= spec.maximum:
                raise InvalidOption(spec.option, value, f"{spec.minimum}..{spec.maximum}")

    @classmethod
    def from_options(cls, options: dict | None) -> RecordingLimits:
        """From ``{"maxBytes": ..., ...}``; unknown keys are refused, missing ones default."""
        by_option = {spec.option: name for name, spec in SPECS.items()}
        kwargs = {}
        for key, value in (options or {}).items():
            if key not in by_option:
                raise InvalidOption(key, value, f"one of {', '.join(by_option)}")
            kwargs[by_option[key]] = value
        return cls(**kwargs)

    def to_json(self) -> dict:
        return {SPECS[f.name].option: getattr(self, f.name) for f in fields(self)}


def reserved_by(recording_dir: Path) -> int:
    """The ``maxBytes`` a recording directory reserves (default if its manifest is unreadable)."""
    try:
        manifest = json.loads((recording_dir / MANIFEST).read_text(encoding="utf-8"))
        return int(manifest["limits"]["maxBytes"])
    except (OSError, ValueError, KeyError, TypeError):
        return SPECS["max_bytes"].default


def check_admission(parent: Path, max_bytes: int) -> None:
    """Refuse a new recording under ``parent`` per the 64-directory and 1 GiB rules.

    Only immediate children holding a ``recording.json`` count (an archived recording's
    original path holds a mapping instead, so its reservation is released).
    """
    recordings = [
        child
        for child in parent.iterdir()
        if child.is_dir() and not child.is_symlink() and (child / MANIFEST).is_file()
    ]
    if len(recordings) >= PARENT_MAX_RECORDINGS:
        raise AdmissionRefused(parent, "recording directories", len(recordings), 1, PARENT_MAX_RECORDINGS)
    reserved = sum(reserved_by(child) for child in recordings)
    if reserved + max_bytes > PARENT_MAX_RESERVED_BYTES:
        raise AdmissionRefused(parent, "reserved bytes", reserved, max_bytes, PARENT_MAX_RESERVED_BYTES)
