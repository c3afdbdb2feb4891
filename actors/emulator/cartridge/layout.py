"""The demo cartridge's data, defined once: room map, tile graphics and the WRAM map.

``build.py`` turns these into assembler symbols and ``db`` data; the demo policy
(``pyboy_demo``, :mod:`actors.policy.pyboy`) reads the same room map and WRAM addresses, so the
policy and the cartridge cannot drift apart. The emulator actor observes :data:`DEMO_REGIONS`
when :func:`is_demo_cartridge` says the ROM is this cartridge.

Room legend: ``#`` wall, ``.`` floor, ``K`` key, ``D`` door, ``P`` player start (floor),
``T`` torch (an animated wall).
"""

from __future__ import annotations

TITLE = "GAMERIG DEMO"

ROOM = (
    "#####T########T#####",
    "#.........#........#",
    "#.........#........#",
    "D.........#....K...#",
    "#.........#........#",
    "#.........#........#",
    "#.........#........#",
    "#.........#........#",
    "#.........#........#",
    "#.........#........#",
    "#.........#........#",
    "#.........#........#",
    "#..................#",
    "#..................#",
    "#...P..............#",
    "#..................#",
    "#..................#",
    "####################",
)
WIDTH, HEIGHT = 20, 18

# Tile numbers in VRAM (and in the ROM's room table).
T_FLOOR, T_WALL, T_KEY, T_DOOR, T_DOOR_OPEN, T_PLAYER, T_TORCH1, T_TORCH2 = range(8)
#: the tile numbers by assembler symbol (``T_FLOOR`` ...), for ``build``
TILE_SYMBOLS = {
    "T_FLOOR": T_FLOOR,
    "T_WALL": T_WALL,
    "T_KEY": T_KEY,
    "T_DOOR": T_DOOR,
    "T_DOOR_OPEN": T_DOOR_OPEN,
    "T_PLAYER": T_PLAYER,
    "T_TORCH1": T_TORCH1,
    "T_TORCH2": T_TORCH2,
}
LEGEND = {"#": T_WALL, ".": T_FLOOR, "K": T_KEY, "D": T_DOOR, "P": T_FLOOR, "T": T_TORCH1}

# 8x8 tiles, one character per pixel: colour index 0 (lightest) .. 3 (darkest).
TILES = {
    T_FLOOR: ["00000000", "00000000", "00100000", "00000000", "00000000", "00000100", "00000000", "00000000"],
    T_WALL: ["33333333", "32222223", "32222223", "33333333", "22232222", "22232222", "22232222", "33333333"],
    T_KEY: ["00000000", "01110000", "10001000", "10001111", "10001010", "01110010", "00000000", "00000000"],
    T_DOOR: ["03333330", "32222223", "32222223", "32222213", "32222223", "32222223", "32222223", "33333333"],
    T_DOOR_OPEN: ["03333330", "30000003", "30000003", "30000003", "30000003", "30000003", "30000003", "33333333"],
    T_PLAYER: ["00333300", "00322300", "00333300", "03333330", "30333303", "00333300", "00300300", "03300330"],
    T_TORCH1: ["00010000", "00121000", "01221000", "00121000", "00333000", "00030000", "00030000", "00333000"],
    T_TORCH2: ["00100000", "00121000", "00122100", "00121000", "00333000", "00030000", "00030000", "00333000"],
}

# Work RAM map: the game state a policy may read. Addresses are part of the public interface.
WRAM = {
    "player_x": 0xC000,  # tile column 0..19
    "player_y": 0xC001,  # tile row 0..17
    "has_key": 0xC002,  # 1 once the key was picked up
    "door_open": 0xC003,  # 1 once the door was bumped while holding the key
    "won": 0xC004,  # 1 once the player walked through the open door
    "frame_lo": 0xC005,  # 16-bit game frame counter, little-endian
    "frame_hi": 0xC006,
    "joy_cur": 0xC007,  # buttons seen this frame: bit0 right,1 left,2 up,3 down,4 A,5 B,6 select,7 start
    "joy_prev": 0xC008,  # buttons seen the frame before
    "repeat": 0xC009,  # frames until a held direction walks again
    "moves": 0xC00A,  # tiles walked (wraps at 256)
    "magic": 0xC00B,  # 0x5A once the game has initialised
    "old_x": 0xC00C,  # previous position (for redrawing)
    "old_y": 0xC00D,
}
MAGIC = 0x5A
#: the WRAM map as 1-byte memory regions, the regions an observation of this cartridge reads
DEMO_REGIONS = {name: (address, 1) for name, address in WRAM.items()}


def is_demo_cartridge(title: str) -> bool:
    """Whether a ROM title is this cartridge's."""
    return title.strip().upper() == TITLE


def find(char: str) -> tuple[int, int]:
    """(x, y) of the single ``char`` in ROOM."""
    hits = [(x, y) for y, row in enumerate(ROOM) for x, c in enumerate(row) if c == char]
    if len(hits) != 1:
        raise ValueError(f"room must contain exactly one {char!r}, found {len(hits)}")
    return hits[0]


START = find("P")
KEY = find("K")
DOOR = find("D")
TORCHES = [(x, y) for y, row in enumerate(ROOM) for x, c in enumerate(row) if c == "T"]


def room_tiles() -> list[int]:
    """The room as HEIGHT rows of WIDTH tile numbers (row-major)."""
    if len(ROOM) != HEIGHT or any(len(row) != WIDTH for row in ROOM):
        raise ValueError("room must be 20x18 tiles")
    return [LEGEND[c] for row in ROOM for c in row]


def tile_bytes(rows: list[str]) -> bytes:
    """Encode one 8x8 tile in the Game Boy's 2-bit planar format (16 bytes)."""
    out = bytearray()
    for row in rows:
        low = high = 0
        for pixel in row:
            value = int(pixel)
            low = (low << 1) | (value & 1)
            high = (high << 1) | (value >> 1)
        out += bytes([low, high])
    return bytes(out)
