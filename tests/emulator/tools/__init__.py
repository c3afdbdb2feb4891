"""Tests of actors/emulator/tools on real demo-cartridge recordings (real PyBoy, real
processes, no mocks):

    test_review.py            review of an interval already played (actors/emulator/tools/review.py)
    test_clips.py             GIF clips from retained frames (actors/emulator/tools/clips.py)
    test_evidence_commands.py ``supervisor capture review|clip`` through the CLI
    test_archive.py           archive / retrieve / restore: round trip, every refusal, interrupted moves
    evidence_helpers.py       recordings and spans for the review and clip tests
    maintenance_helpers.py    recordings, tree snapshots and lease-holding processes for lease/archive
    crash_worker.py           helper process: dies by SIGKILL mid-step (lost evidence)
    lease_worker.py           helper process: holds a recording's lease until its stdin closes
"""
