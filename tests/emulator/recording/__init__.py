"""Tests of actors/emulator/recording/: the recording format (writer, journal, frames, limits, lease)."""
