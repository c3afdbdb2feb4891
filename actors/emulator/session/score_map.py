"""What a cartridge offers a score to read, and the error a score section's checks raise.

* :class:`MemoryMap`: the Game Boy's memory map as one cartridge fills it (ROM banks, cartridge
  RAM from header bytes 0x147 / 0x149, CGB banks); :meth:`MemoryMap.check` says whether a value's
  bytes lie in one readable place and which bank to read them with.
* :data:`PYBOY_WRAPPERS` and :func:`pyboy_title`: the game wrappers PyBoy ships, with the
  numbers each provides, and the title PyBoy picks one by. PyBoy 2.8.1's
  ``pyboy/plugins/manager.py`` ``PluginManager.gamewrapper`` picks the wrapper whose
  ``cartridge_title`` equals ``PyBoy.cartridge_title``; the numbers are each wrapper's
  ``cdef readonly int`` fields in its ``.pxd``. ``tests/emulator/session/test_score.py`` checks
  the list against the installed PyBoy.
* :class:`ScoreProblem`: what every check of an ``emulator.score`` section raises (``score.py``
  parses the section; the memory map's checks are among them).

Nothing here imports PyBoy: ``supervisor validate`` checks a section without starting one.
"""

from __future__ import annotations

from dataclasses import dataclass

#: PyBoy 2.8.1's game wrappers with numbers to read: PyBoy's title for the cartridge (see
#: :func:`pyboy_title`) -> (the wrapper class, its integer attributes). Every one of them also
#: has ``game_over`` (a method; an attribute in ``GameWrapperPokemonPinball``), read as 1 or 0.
#: Sources: ``pyboy/plugins/game_wrapper_*.pxd`` (the ``cdef readonly int`` fields) and
#: ``cartridge_title`` in each ``game_wrapper_*.py``. ``GameWrapperPokemonGen1`` (POKEMON
#: RED / BLUE) has no numbers and no ``game_over``, so it is not listed.
PYBOY_WRAPPERS: dict[str, tuple[str, tuple[str, ...]]] = {
    "SUPER MARIOLAND": ("GameWrapperSuperMarioLand", ("score", "coins", "lives_left", "time_left", "level_progress")),
    "MARIO DELUXAHY": (
        "GameWrapperSuperMarioBrosDeluxe",
        ("score", "coins", "lives_left", "time_left", "level_progress", "level"),
    ),
    "TETRIS": ("GameWrapperTetris", ("score", "level", "lines")),
    "DMGTRIS": ("GameWrapperPandorasBlocks", ("score", "level", "lines")),
    "KIRBY DREAM LAN": ("GameWrapperKirbyDreamLand", ("score", "health", "lives_left")),
    "POKEPINBALLVPH": ("GameWrapperPokemonPinball", ("score", "balls_left", "multiplier")),
    "2048": ("GameWrapper2048", ("score",)),
}


class ScoreProblem(Exception):
    """A section that cannot be used: ``key`` is the dotted profile key, ``problem`` what is wrong."""

    def __init__(self, key: str, problem: str):
        super().__init__(f"{key}: {problem}")
        self.key, self.problem = key, problem


# ---- the cartridge's memory map -----------------------------------------------------------

#: cartridge types (header byte 0x147) with cartridge RAM at 0xA000..0xBFFF; MBC2 (0x05, 0x06)
#: has 512 half-bytes of its own at 0xA000..0xA1FF
RAM_TYPES = {0x02, 0x03, 0x08, 0x09, 0x10, 0x12, 0x13, 0x1A, 0x1B, 0x1D, 0x1E}
MBC2_TYPES = {0x05, 0x06}
#: header byte 0x149 -> (bytes of cartridge RAM, 8 KiB banks)
RAM_SIZES = {0x01: (2048, 1), 0x02: (8192, 1), 0x03: (32768, 4), 0x04: (131072, 16), 0x05: (65536, 8)}
REFUSED = {
    "echo": "is echo RAM (0xE000..0xFDFF mirrors 0xC000..0xDDFF): name the address 0x2000 lower",
    "unusable": "is in the unusable area 0xFEA0..0xFEFF",
    "io": (
        "is an I/O register (0xFF00..0xFF7F): hardware state, not game state, and reading some "
        "of them through PyBoy changes what the game reads next (STAT, 0xFF41)"
    ),
    "ie": "is the interrupt-enable register (0xFFFF), not game state",
}


@dataclass(frozen=True)
class MemoryMap:
    """What one cartridge makes readable, for checking ``address``/``width``/``bank``."""

    rom_banks: int
    ram_bytes: int  # 0: no cartridge RAM
    ram_banks: int
    cgb: bool
    title: str  # the header title, for messages

    @classmethod
    def of(cls, rom: bytes, cgb: bool, title: str) -> MemoryMap:
        kind, size = rom[0x147], rom[0x149]
        if kind in MBC2_TYPES:
            ram_bytes, banks = 512, 1
        elif kind in RAM_TYPES and size in RAM_SIZES:
            ram_bytes, banks = RAM_SIZES[size]
        else:
            ram_bytes, banks = 0, 0
        return cls(len(rom) // 0x4000, ram_bytes, banks, cgb, title)

    def check(self, address: int, width: int, bank: int | None, key: str) -> int | None:
        """The bank to read with (None: the one mapped when read), or a :class:`ScoreProblem`
        naming ``key`` (the value's key) when the bytes are not all in one readable place."""
        last = address + width - 1
        if not 0 <= address <= 0xFFFF:
            raise ScoreProblem(
                f"{key}.address", f"{_hex(address)} is outside the Game Boy's address space 0x0000..0xFFFF"
            )
        region, start, end = _region(address)
        if region in REFUSED:
            raise ScoreProblem(f"{key}.address", f"{_hex(address)} {REFUSED[region]}")
        if region == "sram":
            if not self.ram_bytes:
                raise ScoreProblem(
                    f"{key}.address",
                    f"{_hex(address)} is cartridge RAM, and cartridge "
                    f"{self.title!r} has none (header bytes 0x147/0x149)",
                )
            end = 0xA000 + min(self.ram_bytes, 0x2000) - 1
            if address > end:
                raise ScoreProblem(
                    f"{key}.address",
                    f"{_hex(address)} is past the end of this "
                    f"cartridge's {self.ram_bytes:,} bytes of RAM (0xA000..{_hex(end)})",
                )
        if last > end:
            raise ScoreProblem(
                f"{key}.width",
                f"{width} bytes from {_hex(address)} run past the end of "
                f"{_WHAT[region]} at {_hex(end)}: a value must lie in one region",
            )
        return self._bank(region, bank, key)

    def _bank(self, region: str, bank: int | None, key: str) -> int | None:
        allowed = {
            "romx": range(self.rom_banks),
            "vram": range(2 if self.cgb else 1),
            "sram": range(max(self.ram_banks, 1)),
            "wramx": range(1, 8 if self.cgb else 2),
        }.get(region)
        if bank is None:
            return 0 if region == "sram" else None  # cartridge RAM is read by bank, enabled or not
        if allowed is None:
            raise ScoreProblem(f"{key}.bank", f"{_WHAT[region]} has no banks: leave bank out")
        if bank not in allowed:
            why = {
                "romx": f"this cartridge has {self.rom_banks} ROM banks",
                "vram": "video RAM has banks 0..1 in CGB mode only" if not self.cgb else "video RAM has banks 0..1",
                "sram": f"this cartridge has {self.ram_banks} RAM bank(s)",
                "wramx": "work RAM banks 2..7 exist in CGB mode only"
                if not self.cgb
                else "work RAM at 0xD000 has banks 1..7",
            }[region]
            raise ScoreProblem(
                f"{key}.bank", f"bank {bank} does not exist: {why} ({allowed.start}..{allowed.stop - 1})"
            )
        return bank


_REGIONS = (  # (name, first, last): the Game Boy's memory map (Pan Docs "Memory Map")
    ("rom0", 0x0000, 0x3FFF),
    ("romx", 0x4000, 0x7FFF),
    ("vram", 0x8000, 0x9FFF),
    ("sram", 0xA000, 0xBFFF),
    ("wram0", 0xC000, 0xCFFF),
    ("wramx", 0xD000, 0xDFFF),
    ("echo", 0xE000, 0xFDFF),
    ("oam", 0xFE00, 0xFE9F),
    ("unusable", 0xFEA0, 0xFEFF),
    ("io", 0xFF00, 0xFF7F),
    ("hram", 0xFF80, 0xFFFE),
    ("ie", 0xFFFF, 0xFFFF),
)
_WHAT = {
    "rom0": "ROM bank 0",
    "romx": "the switchable ROM bank",
    "vram": "video RAM",
    "sram": "cartridge RAM",
    "wram0": "work RAM bank 0",
    "wramx": "the switchable work RAM bank",
    "oam": "object attribute memory",
    "hram": "high RAM",
}


def _region(address: int) -> tuple[str, int, int]:
    for name, first, last in _REGIONS:
        if first <= address <= last:
            return name, first, last
    raise AssertionError(address)


def _hex(n: int) -> str:
    return f"0x{n:04X}" if isinstance(n, int) and not isinstance(n, bool) and n >= 0 else repr(n)


def pyboy_title(rom: bytes) -> str:
    """The title PyBoy matches its game wrappers against (``PyBoy.cartridge_title``): header
    bytes 0x134 up to 0x142 (CGB flag set: up to 0x141, the manufacturer code included), cut at
    the first NUL, not stripped -- ``getgamename`` in PyBoy 2.8.1's
    ``pyboy/core/cartridge/base_mbc.py``. (``RomIdentity.title`` differs: it stops earlier for
    CGB cartridges and strips spaces.)"""
    end = 0x142 if rom[0x143] >> 7 else 0x143
    return "".join(chr(b) for b in rom[0x134:end]).split("\0")[0]
