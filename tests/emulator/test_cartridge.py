"""The demo cartridge: header rules, deterministic build, the assembler, and real play in PyBoy."""

from __future__ import annotations

import hashlib
import subprocess
import sys

import pytest

from actors.emulator.cartridge import build, layout
from actors.emulator.cartridge.asm import AsmError, assemble
from actors.emulator.recording.rom import RomIdentity
from actors.emulator.session.machine import Machine


def pandocs_header_checksum(rom: bytes) -> int:
    """Pan Docs, "The Cartridge Header", 014D: x = 0; for each byte of 0134-014C:
    x = x - byte - 1 (8 bits). Written here, not taken from the builder."""
    x = 0
    for byte in rom[0x134:0x14D]:
        x = (x - byte - 1) & 0xFF
    return x


def pandocs_global_checksum(rom: bytes) -> int:
    """Pan Docs, "The Cartridge Header", 014E-014F: the 16-bit sum (big-endian) of every byte
    of the ROM except these two."""
    return sum(b for i, b in enumerate(rom) if i not in (0x14E, 0x14F)) % 0x10000


def test_header_follows_the_rules(demo_rom):
    assert len(demo_rom) == 32 * 1024
    assert demo_rom[0x100:0x104] == bytes([0x00, 0xC3, 0x50, 0x01])
    assert demo_rom[0x104:0x134] == bytes(0x30), "logo area must stay zero"
    assert demo_rom[0x147] == 0x00 and demo_rom[0x148] == 0x00
    assert demo_rom[0x14D] == pandocs_header_checksum(demo_rom)
    assert int.from_bytes(demo_rom[0x14E:0x150], "big") == pandocs_global_checksum(demo_rom)
    identity = RomIdentity.from_bytes(demo_rom)
    assert identity.title == layout.TITLE and not identity.battery and not identity.prefers_cgb


def test_build_is_deterministic_and_cli_writes_the_same_bytes(demo_rom, tmp_path):
    assert build.build_rom() == demo_rom
    out = tmp_path / "not" / "yet" / "demo.gb"  # missing folders are made
    result = subprocess.run(
        [sys.executable, "-m", "actors.emulator.cartridge", str(out)], capture_output=True, text=True, check=True
    )
    assert out.read_bytes() == demo_rom
    assert hashlib.sha256(demo_rom).hexdigest() in result.stdout
    assert result.stderr == ""  # no runpy warning, nothing else


def test_the_cli_says_plainly_when_it_cannot_write(tmp_path):
    (tmp_path / "file").write_text("x")
    result = subprocess.run(
        [sys.executable, "-m", "actors.emulator.cartridge", str(tmp_path / "file" / "demo.gb")],
        capture_output=True,
        text=True,
    )
    assert (
        result.returncode == 1 and result.stderr.startswith("error: cannot write ") and "Traceback" not in result.stderr
    )


def test_assembler_encodes_and_reports_errors():
    rom, symbols = assemble("org $10\nstart: ld a, $3C\n ld [hl+], a\n jr start\n ldh [$FF44], a\n", 0x20)
    assert rom[0x10:0x18] == bytes([0x3E, 0x3C, 0x22, 0x18, 0xFB, 0xE0, 0x44, 0x00])[:8]
    assert symbols["start"] == 0x10
    with pytest.raises(AsmError, match="line 1"):
        assemble("frobnicate a\n", 0x20)
    with pytest.raises(AsmError, match="unknown symbol"):
        assemble("jp nowhere\n", 0x20)


def _wram(machine: Machine) -> dict[str, int]:
    return {name: machine.read(address)[0] for name, address in layout.WRAM.items()}


def test_buttons_move_the_player_and_walls_block(demo_rom):
    machine = Machine(demo_rom)
    machine.run(120)
    state = _wram(machine)
    assert state["magic"] == layout.MAGIC
    assert (state["player_x"], state["player_y"]) == layout.START
    before = machine.rgba_sha256()
    for direction, expected in (("right", (5, 14)), ("up", (5, 13)), ("left", (4, 13)), ("down", (4, 14))):
        machine.hold(frozenset({direction}))
        machine.run(4)
        machine.hold(frozenset())
        machine.run(4)
        state = _wram(machine)
        assert (state["player_x"], state["player_y"]) == expected
    assert machine.rgba_sha256() != before or state["moves"] == 4
    machine.hold(frozenset({"left"}))  # hold: walks until the wall at x=0 stops it
    machine.run(200)
    state = _wram(machine)
    assert state["player_x"] == 1 and state["moves"] == 7
    machine.close()


def test_frames_differ_as_the_game_draws(demo_rom):
    machine = Machine(demo_rom)
    machine.run(120)
    first = machine.rgba_sha256()
    machine.run(16)  # the torches flicker every 16 frames
    assert machine.rgba_sha256() != first
    machine.close()
