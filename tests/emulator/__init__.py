"""Tests of the emulator core library and the demo cartridge (real PyBoy, no mocks)."""
