"""ROM identity and the checks PyBoy's loader needs, done up front with clear errors.

``RomIdentity.from_bytes(rom)`` validates the image (at least 32 KiB, a multiple of 16 KiB,
header checksum, a cartridge type PyBoy knows) and reports its SHA-256, title, CGB flag and
battery; each refusal says what is wrong in words a user can act on.
:func:`battery_ram_size` is the size of the battery RAM (PyBoy's ``.ram`` file) of a cartridge.
"""

from __future__ import annotations

import hashlib
from dataclasses import asdict, dataclass

from .errors import RomError

BANK = 16 * 1024
# Cartridge types PyBoy 2.x loads (ROM only, MBC1/2/3/5 and their RAM/battery/RTC variants).
KNOWN_TYPES = {
    0x00,
    0x01,
    0x02,
    0x03,
    0x05,
    0x06,
    0x08,
    0x09,
    0x0F,
    0x10,
    0x11,
    0x12,
    0x13,
    0x19,
    0x1A,
    0x1B,
    0x1C,
    0x1D,
    0x1E,
}
BATTERY_TYPES = {0x03, 0x06, 0x09, 0x0D, 0x0F, 0x10, 0x13, 0x1B, 0x1E, 0x22, 0xFF}
RAM_BANK = 8 * 1024
#: header byte 0x149 -> 8 KiB RAM banks PyBoy allocates and saves (its cartridge.py
#: EXTERNAL_RAM_TABLE: a 2 KiB or absent RAM is still saved as one bank)
RAM_BANKS = {0x00: 1, 0x01: 1, 0x02: 1, 0x03: 4, 0x04: 16, 0x05: 8}


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
    cgb_flag: int  # header byte 0x143: 0x80 = CGB-enhanced, 0xC0 = CGB-only
    cartridge_type: int  # header byte 0x147
    battery: bool

    @property
    def prefers_cgb(self) -> bool:
        return bool(self.cgb_flag & 0x80)

    @classmethod
    def from_bytes(cls, rom: bytes) -> RomIdentity:
        if not isinstance(rom, (bytes, bytearray)):
            raise RomError("ROM must be bytes", type(rom).__name__)
        if len(rom) < 2 * BANK:
            raise RomError(f"too small: {len(rom):,} bytes; a Game Boy ROM is at least 32 KiB (32,768 bytes)")
        if len(rom) % BANK:
            raise RomError(
                f"size {len(rom):,} bytes is not a multiple of 16 KiB (16,384 bytes); a truncated or padded file?"
            )
        if header_checksum(rom) != rom[0x14D]:
            raise RomError(
                f"bad header checksum: byte 0x14D is {rom[0x14D]:#04x} but the header bytes "
                f"0x134..0x14C give {header_checksum(rom):#04x} (not a Game Boy ROM, or a damaged one)"
            )
        if rom[0x147] not in KNOWN_TYPES:
            raise RomError(
                f"cartridge type {rom[0x147]:#04x} at 0x147 is not one PyBoy runs (ROM only, MBC1, MBC2, MBC3, MBC5)"
            )
        cgb_flag = rom[0x143]
        raw_title = rom[0x134 : 0x143 if cgb_flag & 0x80 else 0x144]
        title = raw_title.split(b"\0", 1)[0].decode("ascii", "replace").strip()
        return cls(hashlib.sha256(rom).hexdigest(), len(rom), title, cgb_flag, rom[0x147], rom[0x147] in BATTERY_TYPES)

    def to_json(self) -> dict:
        return asdict(self)


def battery_ram_size(rom: bytes) -> int:
    """Bytes of battery RAM a cartridge saves (0 without a battery): PyBoy's RAM banks × 8 KiB."""
    if len(rom) < 0x150 or rom[0x147] not in BATTERY_TYPES:
        return 0
    return RAM_BANKS.get(rom[0x149], 1) * RAM_BANK
