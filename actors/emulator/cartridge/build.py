"""Build the demo cartridge: ``python -m actors.emulator.cartridge OUT.gb``.

``build_rom()`` assembles ``game.asm`` with the symbols and data of ``layout.py`` and wraps
it in a 32 KiB ROM-only cartridge header: entry ``00 C3 50 01`` at 0x100, the logo area
left zero (PyBoy's boot ROM does not check it; we ship no Nintendo bytes), the title at
0x134, cartridge type 0x00, and correct header and global checksums. The result is
deterministic: the same sources always give the same bytes.
"""

from __future__ import annotations

import argparse
import hashlib
import sys
from importlib import resources
from pathlib import Path

from ..recording.rom import header_checksum
from .asm import assemble
from .layout import (
    DOOR,
    HEIGHT,
    KEY,
    MAGIC,
    START,
    TILE_SYMBOLS,
    TILES,
    TITLE,
    TORCHES,
    WIDTH,
    WRAM,
    room_tiles,
    tile_bytes,
)

ROM_SIZE = 0x8000
TILES_AT = 0x1000
ROOM_AT = 0x1200


def global_checksum(rom: bytes | bytearray) -> int:
    """Sum of every byte except the two checksum bytes at 0x14E-0x14F (not verified)."""
    return (sum(rom) - rom[0x14E] - rom[0x14F]) & 0xFFFF


def _symbols() -> dict[str, int]:
    symbols = {f"W_{name.upper()}": addr for name, addr in WRAM.items()}
    symbols.update(TILE_SYMBOLS)
    (symbols["START_X"], symbols["START_Y"]) = START
    (symbols["KEY_X"], symbols["KEY_Y"]) = KEY
    (symbols["DOOR_X"], symbols["DOOR_Y"]) = DOOR
    (symbols["TORCH1_X"], _), (symbols["TORCH2_X"], _) = TORCHES
    symbols["HUD_X"] = 17
    symbols["MAGIC"] = MAGIC
    return symbols


def _data_source() -> str:
    """The tile graphics and room table as assembler data lines."""
    lines = [f"        org ${TILES_AT:04X}", "TILES:"]
    for number in sorted(TILES):
        data = tile_bytes(TILES[number])
        lines.append("        db " + ", ".join(f"${b:02X}" for b in data))
    lines += ["TILES_END:", f"        org ${ROOM_AT:04X}", "ROOM_MAP:"]
    tiles = room_tiles()
    for row in range(HEIGHT):
        chunk = tiles[row * WIDTH : (row + 1) * WIDTH]
        lines.append("        db " + ", ".join(str(t) for t in chunk))
    return "\n".join(lines) + "\n"


def game_source() -> str:
    """The complete assembler source: ``game.asm`` plus the generated data."""
    asm = resources.files(__package__).joinpath("game.asm").read_text(encoding="utf-8")
    return asm + "\n" + _data_source()


def build_rom() -> bytes:
    """Assemble the demo cartridge and return its 32 KiB image."""
    rom, _ = assemble(game_source(), ROM_SIZE, _symbols())
    if any(rom[0x100:0x150]):
        raise ValueError("game code overlaps the cartridge header")
    rom[0x100:0x104] = bytes([0x00, 0xC3, 0x50, 0x01])  # nop; jp $0150
    title = TITLE.encode("ascii")
    rom[0x134 : 0x134 + len(title)] = title  # logo 0x104..0x133 stays zero
    rom[0x143] = 0x00  # DMG only
    rom[0x147] = 0x00  # ROM only
    rom[0x148] = 0x00  # 32 KiB
    rom[0x149] = 0x00  # no cartridge RAM
    rom[0x14A] = 0x01  # non-Japanese
    rom[0x14D] = header_checksum(rom)
    checksum = global_checksum(rom)
    rom[0x14E:0x150] = bytes([checksum >> 8, checksum & 0xFF])
    return bytes(rom)


def main(argv: list[str] | None = None) -> int:
    """CLI entry: write the ROM to OUT and print its size and SHA-256."""
    parser = argparse.ArgumentParser(
        prog="python -m actors.emulator.cartridge", description="Assemble the gamerig demo cartridge."
    )
    parser.add_argument("out", type=Path, help="where to write the .gb file (missing folders are made)")
    args = parser.parse_args(argv)
    rom = build_rom()
    try:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_bytes(rom)
    except OSError as exc:
        print(f"error: cannot write {args.out}: {exc.strerror or exc}", file=sys.stderr)
        return 1
    print(f"{args.out}: {len(rom)} bytes, sha256 {hashlib.sha256(rom).hexdigest()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
