"""The recording format: what a recording directory holds, and its one writer and reader.

    writer       Recording: the writer of one recording directory, budgets, admission, manifest
    reader       RecordingReader: status / export / verification without PyBoy; paging arithmetic
    journal      the hash-chained events.jsonl: record kinds, writer, verifying reader, prefix pins
    retained     the journal indexed by branch, re-verification of a retained PNG, native game time
    frames       PNG encoding, RGBA hashing, the content-addressed frames/ store
    limits       the limits table, RecordingLimits, per-parent admission rules
    results      StepResult, ObservedFrame, Sample, RecordingSpan, CheckpointInfo, BranchInfo
    errors       EmulatorError and its tree (drawn in that module's docstring)
    rom          RomIdentity: validation, SHA-256, title, CGB flag, battery (a recording's header)
    lease        the advisory access lease on a recording root; access_diagnostic (no side effects)
    identity     PROTOCOL_VERSION, PyBoy version, implementation hash

It is the bottom room: it imports neither ``actors.emulator.session`` nor
``actors.emulator.tools``, and never PyBoy, so anything may read recordings cheaply.
"""
