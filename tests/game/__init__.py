"""Tests of the built-in game (actors/game): contract, screens, knobs, runs.

Contract helpers (vendor/sts2mcp samples): ``shapes`` (the exact shape comparator and the
variance file), ``variants`` (state -> sample name), ``explorer`` (a seeded bot speaking the
mod's API), ``contract`` (the HTTP campaign: recorder, sessions, probes).
"""
