"""Whole-process tests of the pyboy backend: real supervisor, real actors, real PyBoy."""
