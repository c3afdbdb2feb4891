"""Fleets: many sessions from one fleet file, on this machine or on a Ray cluster (docs/fleet.md).

spec.py          the fleet file: loading, validation, errors naming file, key and problem
matrix.py        matrix expansion into session plans; each cell checked as a profile;
                 an outside game's Ray resource
layout.py        the fleet root's paths (fleet.json, results.jsonl, stop, one slot per
                 session); imports nothing of gamerig, so the capture verifier uses it
runner.py        one attempt of one session: ``supervisor start`` in its slot under a
                 keeper that ties it to the runner (parent-death SIGTERM), stop file,
                 timeout, interrupt, attempt-N.json
scheduler.py     the driver loop for every backend: concurrency, one session per game,
                 results rows, the retry rule for lost attempts, stop, the live line
inflight.py      the retry rule's evidence: does the journal prove no action was in flight
local.py         the local backend (threads) and the default concurrency
ray_backend.py   the Ray backend: one Ray task per attempt; the only module importing Ray
ray_head.py      a one-node Ray cluster on loopback for the tests and bench/fleet.py
results.py       results rows (journal facts), totals, fleet.json
report.py        the table per matrix cell; the live fleet line
control.py       running and interrupted fleets, the driver's lock, the fleet's processes,
                 ``fleet status`` and ``fleet stop``
resume.py        ``fleet start --resume``: take over what a dead driver left, decide each
                 session from its slot's evidence
driver.py        ``fleet start``: load, expand, pick the backend, run
errors.py        FleetError and its subclasses
"""
