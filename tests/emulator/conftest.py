"""Fixtures for the emulator tests: the demo ROM, a recording parent, the third-party ROM."""

from __future__ import annotations

from pathlib import Path

import pytest

from actors.emulator.cartridge import build_rom
from actors.emulator.cartridge.layout import DEMO_REGIONS
from actors.emulator.session.core import EmulatorSession, RecordingOptions

from . import cartridges

REPO = Path(__file__).resolve().parents[2]
REX_RUNNER = REPO.parent / "shared" / "roms" / "rex-runner.gb"


@pytest.fixture(scope="session")
def demo_rom() -> bytes:
    return build_rom()


@pytest.fixture
def parent(tmp_path: Path) -> Path:
    path = tmp_path / "playtests"
    path.mkdir()
    return path


@pytest.fixture
def recorded(demo_rom, parent):
    """A recording session on the demo cart, booted for 120 frames; closed afterwards."""
    session = EmulatorSession(demo_rom, memory_regions=DEMO_REGIONS, recording=RecordingOptions(parent=parent))
    session.step([], 120)
    yield session
    session.close()


@pytest.fixture(scope="session")
def rex_rom() -> bytes:
    if not REX_RUNNER.is_file():
        pytest.skip(f"third-party test ROM absent: {REX_RUNNER} (see ../shared/roms/README.md)")
    return REX_RUNNER.read_bytes()


LCD_ON_BG = bytes([0x3E, 0x91, 0xE0, 0x40])  # ld a, $91; ldh [rLCDC], a  (game.asm, start)
LCD_ON_BG_WINDOW = bytes([0x3E, 0xB1, 0xE0, 0x40])  # the same with the window on (LCDC bit 5)


@pytest.fixture(scope="session")
def window_rom(demo_rom) -> bytes:
    """The demo cartridge with the window layer switched on over the whole screen (WX=0,
    WY=0 after boot; the window shows the same room map). Only the LCDC value in game.asm's
    start-up changes; the header checksum covers 0x134..0x14C only, so it stays valid."""
    assert demo_rom.count(LCD_ON_BG) == 1, "game.asm's LCD start-up changed: update this fixture"
    return demo_rom.replace(LCD_ON_BG, LCD_ON_BG_WINDOW)


@pytest.fixture(scope="session")
def battery_rom(demo_rom) -> bytes:
    """The demo cartridge declared as MBC1 + RAM + battery with 8 KiB of RAM."""
    return cartridges.battery_rom(demo_rom)


@pytest.fixture(scope="session")
def battery_pattern() -> bytes:
    """8 KiB no cartridge RAM starts with by itself."""
    return cartridges.BATTERY_PATTERN
