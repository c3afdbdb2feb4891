"""Battery saves: the cartridge RAM a session starts from, and the files it leaves.

A cartridge with a battery (``RomIdentity.battery``) keeps its save in RAM that survives
power-off. PyBoy saves that RAM as a ``.ram`` file of every RAM bank (8 KiB each; see
``rom.battery_ram_size``). In a recording::

    battery/start.ram     the RAM the session started with (written once, at creation):
                          a loaded battery save, or the cartridge's empty RAM
    battery/battery.ram   the RAM as of stop / close -- the file to carry into the next
                          session (``game.battery_save``); written at creation too, so its
                          bytes are charged to ``maxBytes`` from the start

Both are counted in ``bytesUsed``. The recording header says what was loaded
(``batteryLoaded``: source, SHA-256, bytes) and the ``stop`` event what was left
(``battery``: SHA-256, bytes). A resumed recording starts again from ``start.ram``, checked
against the header's SHA-256.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

from actors.runtime.durable import replace_durably

from ..recording.errors import InvalidOption, RecordingCorrupt

BATTERY_FILE = "battery.ram"
START_FILE = "start.ram"
BATTERY_DIR = "battery"


@dataclass(frozen=True)
class BatterySave:
    """Battery RAM to start a session from, and where it came from (journalled)."""

    data: bytes
    source: str

    @classmethod
    def read(cls, path: Path | str, expected_size: int) -> BatterySave:
        """Read a ``.ram`` file; refuse one that is unreadable or not the cartridge's RAM size."""
        path = Path(path)
        try:
            data = path.read_bytes()
        except OSError as exc:
            raise InvalidOption("battery save", str(path), f"a readable file ({exc.strerror or exc})") from None
        if len(data) != expected_size:
            raise InvalidOption(
                "battery save",
                f"{path} ({len(data):,} bytes)",
                f"{expected_size:,} bytes, this cartridge's battery RAM size",
            )
        return cls(data, str(path.resolve()))

    def to_json(self) -> dict:
        return describe(self.data) | {"source": self.source}


def describe(data: bytes) -> dict:
    return {"sha256": hashlib.sha256(data).hexdigest(), "bytes": len(data)}


def write_atomically(path: Path, data: bytes) -> int:
    """Replace ``path`` with ``data`` (tmp + fsync + rename); return the change in bytes on disk."""
    old = path.stat().st_size if path.is_file() else 0
    path.parent.mkdir(parents=True, exist_ok=True)
    replace_durably(path, data)
    return len(data) - old


def read_start(recording_path: Path, header: dict) -> bytes | None:
    """The battery RAM a recording started with (``battery/start.ram``), checked against the
    SHA-256 its header recorded; None when the recording kept none."""
    recorded = header.get("batteryStart")
    if not recorded:
        return None
    path = recording_path / BATTERY_DIR / START_FILE
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise RecordingCorrupt(recording_path, f"cannot read {BATTERY_DIR}/{START_FILE} ({exc.strerror})") from None
    if hashlib.sha256(data).hexdigest() != recorded["sha256"]:
        raise RecordingCorrupt(recording_path, f"{BATTERY_DIR}/{START_FILE} does not match the header's sha256")
    return data


def read_previous(battery_dir: Path | None, size: int) -> bytes | None:
    """``battery_dir/battery.ram`` when present (the library's reload from a session dir)."""
    path = Path(battery_dir) / BATTERY_FILE if battery_dir and size else None
    return BatterySave.read(path, size).data if path is not None and path.is_file() else None


def file_sizes(battery: Path | None) -> tuple[int, ...]:
    """Sizes of ``battery.ram`` and its ``.rtc`` beside it (0 when absent)."""
    if battery is None:
        return (0, 0)
    return tuple(p.stat().st_size if p.is_file() else 0 for p in (battery, battery.with_suffix(".rtc")))
