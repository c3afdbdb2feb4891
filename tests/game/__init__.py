"""Tests of the built-in game (actors/game): contract, screens, knobs, runs."""
