"""rex-runner (MIT, MBC5 + RAM + battery): boots through the core; battery RAM stays in the session."""

from __future__ import annotations

from actors.emulator.recording.reader import RecordingReader
from actors.emulator.session.core import EmulatorSession, RecordingOptions


def test_rex_runner_boots_and_keeps_battery_ram_in_the_session(rex_rom, tmp_path, parent):
    rom_dir = tmp_path / "roms"
    rom_dir.mkdir()
    rom_path = rom_dir / "rex-runner.gb"
    rom_path.write_bytes(rex_rom)
    session = EmulatorSession(rom_path.read_bytes(), recording=RecordingOptions(parent=parent))
    assert session.rom.battery and session.rom.cartridge_type == 0x1B and session.cgb is True
    session.step([], 600, samples=1)
    title_screen = session.observe().rgba_sha256
    session.step(["a"], 20)
    session.step([], 120, samples=1)
    assert session.observe().rgba_sha256 != title_screen, "A left the title menu"
    session.stop("needs-review", "boots; title menu reached")
    session.close()
    battery = session.recording_path / "battery" / "battery.ram"
    assert battery.is_file() and battery.stat().st_size == 8192
    assert sorted(p.name for p in rom_dir.iterdir()) == ["rex-runner.gb"], "nothing written beside the ROM"
    assert RecordingReader(session.recording_path).verify_frames() == []


def test_rex_runner_in_dmg_mode_reloads_battery_from_the_session_dir(rex_rom, tmp_path):
    battery_dir = tmp_path / "session"
    with EmulatorSession(rex_rom, cgb=False, battery_dir=battery_dir) as session:
        assert session.battery_ram() == bytes(8192), "a new cartridge's RAM is empty"
        session.step([], 700)  # the game writes its save (scoreboard) during start-up
    saved = (battery_dir / "battery.ram").read_bytes()
    assert len(saved) == 8192 and any(saved), "rex-runner wrote a save"
    with EmulatorSession(rex_rom, cgb=False, battery_dir=battery_dir) as again:
        assert again.cgb is False
        assert again.battery_ram() == saved, "the save was loaded into the cartridge RAM before the first frame"
        again.step([], 60)
        assert again.battery_ram() == saved, "the game accepted its own save"
    assert (battery_dir / "battery.ram").read_bytes() == saved
    assert not list(battery_dir.glob("*.tmp")) and not list(battery_dir.glob(".*.tmp"))
