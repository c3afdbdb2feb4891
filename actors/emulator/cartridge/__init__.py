"""The gamerig demo cartridge, built from source in this repository.

Modules:
    asm     a tiny two-pass SM83 assembler (RGBDS-like syntax subset)
    layout  the room map, tile graphics and the documented WRAM map (single source of truth)
    build   ``build_rom() -> bytes`` and the ``python -m actors.emulator.cartridge OUT.gb`` CLI
    game.asm  the game itself (walk the room, fetch the key, open the door)

See ``README.md`` beside this file for the WRAM map and the rules of the game.
"""

from .build import build_rom

__all__ = ["build_rom"]
