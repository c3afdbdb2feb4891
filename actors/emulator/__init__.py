"""The emulator core library: one headless PyBoy session with recordings and checkpoints.

Process-free: the emulator actor wraps these calls. Modules:

    __main__     ``python -m actors.emulator``: the supervised actor process
    actor        EmulatorActor: one session served over a ROUTER (observe / step / checkpoint),
                 resume after a crash, journal rows through the recorder
    config       EmulatorConfig: the profile's ``game.rom`` and ``emulator.*`` keys, checked

    session      EmulatorSession (observe / step / checkpoint / restore / status / export / stop / close),
                 RecordingOptions, sample_points
    resume       resume_from_latest_checkpoint: continue an interrupted recording in a new process
    machine      Machine: the PyBoy instance (ROM as bytes, window "null", sound off, CGB resolved)
    buttons      button names and the held-set diff
    rom          RomIdentity: validation, SHA-256, title, CGB flag, battery; battery_ram_size
    battery      BatterySave: battery RAM a session starts from; the battery/ files of a recording
    recording    Recording: the writer of one recording directory, budgets, admission, manifest
    lease        the advisory access lease on a recording root; access_diagnostic (no side effects)
    archive      archive / retrieve / restore of finalized recordings; resolve_recording, open_reader
    maintenance  their shared checks: workspace paths, full inventory, finalized-recording integrity
    reader       RecordingReader: status / export / verification without PyBoy; paging arithmetic
    review       review(): an interval (fromActionIndex, toActionIndex] of one session and branch,
                 read-only: inputs, physical events, verified frames, coverage, prefix pins
    contact_sheet  the same verified PNGs composed into one labelled sheet with its tile mapping
    clips        clip(): a GIF from retained frames (one interval or ordered cuts), native timing
    retained     the journal indexed by branch, re-verification of a retained PNG, native game time
    derived      derived-output locations (no-clobber), quota-ledger charges
    sources      locate the recording directory a review or clip request names
    journal      the hash-chained events.jsonl: record kinds, writer, verifying reader, prefix pins
    frames       PNG encoding, RGBA hashing, the content-addressed frames/ store
    checkpoints  the checkpoint container format and its identity checks
    identity     PROTOCOL_VERSION, PyBoy version, implementation hash
    limits       the seed's limits table, RecordingLimits, per-parent admission rules
    results      StepResult, Observation, Sample, RecordingSpan, CheckpointInfo, BranchInfo
    errors       EmulatorError and its tree (drawn in that module's docstring)
    policy       demo_next_buttons (pure demo-cart policy), ExplorationInputs (seeded explorer)
    cartridge/   the demo cartridge we own: assembler, game source, ROM builder

Names are imported lazily so that ``reader``/``journal`` users never import PyBoy.
"""

from __future__ import annotations

import importlib

_EXPORTS = {
    "EmulatorSession": "session", "RecordingOptions": "session", "sample_points": "session",
    "resume_from_latest_checkpoint": "resume", "Machine": "machine", "RomIdentity": "rom",
    "RecordingReader": "reader", "RecordingLimits": "limits", "BUTTONS": "buttons",
    "PROTOCOL_VERSION": "identity", "implementation_hash": "identity",
    "demo_next_buttons": "policy", "ExplorationInputs": "policy", "DEMO_REGIONS": "policy",
    "DEMO_STEP_FRAMES": "policy", "is_demo_cartridge": "policy",
    "EmulatorError": "errors",
}
__all__ = sorted(_EXPORTS)


def __getattr__(name: str):
    if name in _EXPORTS:
        return getattr(importlib.import_module(f".{_EXPORTS[name]}", __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
