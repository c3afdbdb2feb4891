"""Tests of the emulator (real PyBoy, real processes, no mocks), mirroring its rooms:

    session/     actors/emulator/session: the PyBoy session, checkpoints, battery, start
                 checkpoints, restored frames, crash resume, policies, a third-party ROM
                 (``crash_worker.py`` / ``restore_worker.py`` helper processes)
    recording/   actors/emulator/recording: the writer and journal, frames, limits, leases
    tools/       actors/emulator/tools: review, clips, archive / retrieve / restore and the
                 ``supervisor capture`` commands over them
    test_cartridge.py  the demo cartridge

``conftest.py`` holds the shared fixtures, ``cartridges.py`` the demo cartridge's header variants
(a battery cartridge, any header byte with the checksum fixed).
"""
