"""Fixtures for the emulator tests: the demo ROM, a recording parent, the third-party ROM."""

from __future__ import annotations

from pathlib import Path

import pytest

from actors.emulator.cartridge import build_rom
from actors.emulator.policy import DEMO_REGIONS
from actors.emulator.session import EmulatorSession, RecordingOptions

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
