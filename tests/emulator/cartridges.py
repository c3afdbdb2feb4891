"""Cartridge variants the emulator tests need, made from the demo cartridge by editing its
header (the header checksum at 0x14D recomputed, as the boot ROM and PyBoy verify it)."""

from __future__ import annotations

from actors.emulator.recording.rom import header_checksum

#: 8 KiB no cartridge RAM starts with by itself
BATTERY_PATTERN = bytes((i * 7 + 3) & 0xFF for i in range(8192))


def with_header(rom: bytes, **at: int) -> bytes:
    """``rom`` with header bytes changed (keys ``h<hex address>``, e.g. ``h147=0x03``) and
    the header checksum fixed."""
    out = bytearray(rom)
    for key, value in at.items():
        out[int(key[1:], 16)] = value
    out[0x14D] = header_checksum(out)
    return bytes(out)


def battery_rom(rom: bytes) -> bytes:
    """``rom`` declared as MBC1 + RAM + battery with 8 KiB of RAM (bytes 0x147 and 0x149).
    The demo game never touches cartridge RAM, so whatever battery RAM it starts with is
    exactly what it leaves."""
    return with_header(rom, h147=0x03, h149=0x02)
