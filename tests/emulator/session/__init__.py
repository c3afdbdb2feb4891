"""Tests of actors/emulator/session/: the actor's PyBoy session, checkpoints, battery, resume, policies."""
