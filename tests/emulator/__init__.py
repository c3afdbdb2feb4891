"""Tests of the emulator core library and the demo cartridge (real PyBoy, no mocks).

One ``test_*.py`` per library module or behaviour (session, recording, checkpoints, battery,
start checkpoints, restored frames, crash resume, limits, frames, policy, the cartridge, a
third-party ROM); ``conftest.py`` holds the shared fixtures, ``cartridges.py`` the demo
cartridge's header variants (a battery cartridge, any header byte with the checksum fixed),
``crash_worker.py`` / ``restore_worker.py`` helper processes.
"""
