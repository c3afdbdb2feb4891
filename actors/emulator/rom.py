"""ROM identity and the checks PyBoy's loader needs, done up front with clear errors.

``RomIdentity.from_bytes(rom)`` validates the image (multiple of 16 KiB, header checksum,
a cartridge type PyBoy knows) and reports its SHA-256, title, CGB flag and battery.
"""

from __future__ import annotations

import hashlib
from dataclasses import asdict, dataclass

from .errors import RomError

BANK = 16 * 1024
# Cartridge types PyBoy 2.x loads (ROM only, MBC1/2/3/5 and their RAM/battery/RTC variants).
KNOWN_TYPES = {0x00, 0x01, 0x02, 0x03, 0x05, 0x06, 0x08, 0x09, 0x0F, 0x10, 0x11, 0x12, 0x13,
               0x19, 0x1A, 0x1B, 0x1C, 0x1D, 0x1E}
BATTERY_TYPES = {0x03, 0x06, 0x09, 0x0D, 0x0F, 0x10, 0x13, 0x1B, 0x1E, 0x22, 0xFF}


def header_checksum(rom: bytes) -> int:
    """x = 0; for b in rom[0x134:0x14D]: x = x - b - 1 (mod 256)."""
    x = 0
    for b in rom[0x134:0x14D]:
        x = (x - b - 1) & 0xFF
    return x


@dataclass(frozen=True)
class RomIdentity:
    """What identifies a cartridge: exact bytes (sha256), header title, flags."""

    sha256: str
    size: int
    title: str
    cgb_flag: int          # header byte 0x143: 0x80 = CGB-enhanced, 0xC0 = CGB-only
    cartridge_type: int    # header byte 0x147
    battery: bool

    @property
    def prefers_cgb(self) -> bool:
        return bool(self.cgb_flag & 0x80)

    @classmethod
    def from_bytes(cls, rom: bytes) -> "RomIdentity":
        if not isinstance(rom, (bytes, bytearray)):
            raise RomError("ROM must be bytes", type(rom).__name__)
        if len(rom) < 2 * BANK or len(rom) % BANK:
            raise RomError("size must be a multiple of 16 KiB and at least 32 KiB", len(rom))
        if header_checksum(rom) != rom[0x14D]:
            raise RomError("header checksum at 0x14D does not match", rom[0x14D])
        if rom[0x147] not in KNOWN_TYPES:
            raise RomError("unsupported cartridge type at 0x147", hex(rom[0x147]))
        cgb_flag = rom[0x143]
        raw_title = rom[0x134:0x143 if cgb_flag & 0x80 else 0x144]
        title = raw_title.split(b"\0", 1)[0].decode("ascii", "replace").strip()
        return cls(hashlib.sha256(rom).hexdigest(), len(rom), title, cgb_flag, rom[0x147],
                   rom[0x147] in BATTERY_TYPES)

    def to_json(self) -> dict:
        return asdict(self)
