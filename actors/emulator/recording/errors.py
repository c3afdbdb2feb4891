"""Every error the emulator package raises, under one root.

::

    EmulatorError
    ├── RomError                   bytes that PyBoy cannot boot (size, header checksum, type)
    ├── InvalidButton              a button name outside BUTTONS
    ├── InvalidOption              a bad argument value (limit out of range, reason too long, ...)
    ├── SessionClosed              the session was closed; open a new one
    ├── RecordingError
    │   ├── RecordingStopped       the recording was finalized; state changes need a new run
    │   ├── RecordingBusy          another live writer holds the recording's lock
    │   ├── RecordingCorrupt       the journal's hash chain or a file does not verify
    │   ├── AdmissionRefused       the parent already holds 64 recordings or 1 GiB of reservations
    │   ├── PathRefused            output path is used, a symlink, or outside its parent
    │   ├── LimitExceeded          a recording limit would be exceeded (frames, bytes, wall time)
    │   ├── EvidenceLimitExceeded  a review or clip asks for more than its limit (actions, frames, images, ...)
    │   ├── IntervalRefused        a review/clip request does not match the recording (session, branch, bounds, pin)
    │   ├── OutputRefused          a derived output (clip, contact sheet) path is outside its roots or exists
    │   ├── AccessRefused          a recording root's access lease is held by another holder or cannot be created
    │   ├── LeaseUnresolved        a holder's lease file no longer matches what it created; left in place
    │   ├── MaintenanceRefused     archive / retrieve / restore refused before anything moved (reason, path)
    │   └── MaintenanceInterrupted a move stopped part-way: every byte kept, the lease left unresolved
    └── CheckpointError
        ├── CheckpointNotNeutral   save requested before a neutral frame with no buttons held
        ├── CheckpointNotFound     no checkpoint with that id in this recording
        ├── CheckpointDamaged      unreadable, truncated, hash mismatch, or not byte-identical on reload
        ├── CheckpointTampered     the file differs from the bytes the journal recorded
        └── CheckpointIncompatible identity differs (ROM, CGB mode)
            └── CheckpointStale    written by another PyBoy / protocol / implementation version

Constructors take the offending values and build the message; the values stay available
as attributes for callers that map errors to wire replies (``code`` is a stable string).
"""

from __future__ import annotations


class EmulatorError(Exception):
    """Root of the package's errors. ``code`` is stable and suitable for wire replies."""

    code = "emulator-error"


class RomError(EmulatorError):
    code = "rom-invalid"

    def __init__(self, problem: str, value: object = None):
        super().__init__(f"ROM refused: {problem}" + ("" if value is None else f" (got {value!r})"))
        self.problem, self.value = problem, value


class InvalidButton(EmulatorError):
    code = "invalid-button"

    def __init__(self, name: object, allowed: tuple[str, ...]):
        super().__init__(f"unknown button {name!r}; expected some of {', '.join(allowed)}")
        self.name, self.allowed = name, allowed


class InvalidOption(EmulatorError):
    code = "invalid-option"

    def __init__(self, option: str, value: object, expected: str):
        super().__init__(f"{option}={value!r} is invalid: expected {expected}")
        self.option, self.value, self.expected = option, value, expected


class SessionClosed(EmulatorError):
    code = "session-closed"

    def __init__(self, operation: str):
        super().__init__(f"cannot {operation}: the emulator session is closed")
        self.operation = operation


class RecordingError(EmulatorError):
    code = "recording-error"


class RecordingStopped(RecordingError):
    code = "recording-stopped"

    def __init__(self, operation: str, status: str):
        super().__init__(
            f"cannot {operation}: the recording is finalized with status {status!r}; start a fresh run to continue"
        )
        self.operation, self.status = operation, status


class RecordingBusy(RecordingError):
    code = "recording-busy"

    def __init__(self, path: object):
        super().__init__(f"recording {path} is held by another live writer")
        self.path = path


class RecordingCorrupt(RecordingError):
    code = "recording-corrupt"

    def __init__(self, path: object, problem: str):
        super().__init__(f"recording {path} does not verify: {problem}")
        self.path, self.problem = path, problem


class AdmissionRefused(RecordingError):
    code = "admission-refused"

    def __init__(self, parent: object, rule: str, current: int, requested: int, limit: int):
        super().__init__(
            f"new recording refused in {parent}: {rule} {current} + {requested} > {limit}; "
            "old attempts are not pruned automatically"
        )
        self.parent, self.rule, self.current, self.requested, self.limit = parent, rule, current, requested, limit


class PathRefused(RecordingError):
    code = "path-refused"

    def __init__(self, path: object, problem: str):
        super().__init__(f"recording path {path} refused: {problem}")
        self.path, self.problem = path, problem


class LimitExceeded(RecordingError):
    code = "limit-exceeded"

    def __init__(self, limit: str, used: int, requested: int, maximum: int):
        super().__init__(f"{limit} exceeded: {used} used + {requested} requested > {maximum}")
        self.limit, self.used, self.requested, self.maximum = limit, used, requested, maximum


class EvidenceLimitExceeded(RecordingError):
    code = "evidence-limit-exceeded"

    def __init__(self, operation: str, limit: str, value: int, maximum: int):
        super().__init__(f"{operation} refused: {value:,} {limit} exceed the limit of {maximum:,}")
        self.operation, self.limit, self.value, self.maximum = operation, limit, value, maximum


class IntervalRefused(RecordingError):
    code = "interval-refused"

    def __init__(self, field: str, value: object, problem: str):
        super().__init__(f"{field}={value!r} refused: {problem}")
        self.field, self.value, self.problem = field, value, problem


class OutputRefused(RecordingError):
    code = "output-refused"

    def __init__(self, path: object, problem: str):
        super().__init__(f"output path {path} refused: {problem}")
        self.path, self.problem = path, problem


class AccessRefused(RecordingError):
    code = "access-refused"

    def __init__(
        self,
        root: object,
        operation: str,
        category: str,
        detail: str,
        claim: dict | None = None,
        failure: dict | None = None,
    ):
        super().__init__(f"access to recording root {root} refused for {operation}: {detail}")
        self.root, self.operation, self.category, self.detail = root, operation, category, detail
        self.claim, self.failure = claim, failure


class LeaseUnresolved(RecordingError):
    code = "lease-unresolved"

    def __init__(self, lease_path: object, problem: str):
        super().__init__(f"lease {lease_path} left unresolved: {problem}; it is never cleared automatically")
        self.lease_path, self.problem = lease_path, problem


class MaintenanceRefused(RecordingError):
    code = "maintenance-refused"

    def __init__(self, operation: str, path: object, reason: str):
        super().__init__(f"{operation} of {path} refused: {reason}")
        self.operation, self.path, self.reason = operation, path, reason


class MaintenanceInterrupted(RecordingError):
    code = "maintenance-interrupted"

    def __init__(self, operation: str, step: str, cause: str, retained: dict):
        where = "; ".join(f"{k}: {v}" for k, v in retained.items())
        super().__init__(
            f"{operation} interrupted at step {step!r} ({cause}); every byte is retained ({where}) "
            "and the lease is left unresolved: stop for owner reconciliation, do not repeat the call"
        )
        self.operation, self.step, self.cause, self.retained = operation, step, cause, retained


class CheckpointError(EmulatorError):
    code = "checkpoint-error"


class CheckpointNotNeutral(CheckpointError):
    code = "checkpoint-not-neutral"

    def __init__(self, held: frozenset[str], neutral_frames: int):
        super().__init__(
            f"checkpoint refused: held buttons {sorted(held)}, {neutral_frames} neutral frame(s) "
            "since the last press; first step with buttons=[] for at least 1 frame"
        )
        self.held, self.neutral_frames = held, neutral_frames


class CheckpointNotFound(CheckpointError):
    code = "checkpoint-not-found"

    def __init__(self, checkpoint_id: str):
        super().__init__(f"no checkpoint {checkpoint_id!r} in this recording")
        self.checkpoint_id = checkpoint_id


class CheckpointDamaged(CheckpointError):
    code = "checkpoint-damaged"

    def __init__(self, source: object, problem: str):
        super().__init__(f"checkpoint {source} refused as damaged: {problem}")
        self.source, self.problem = source, problem


class CheckpointTampered(CheckpointError):
    code = "checkpoint-tampered"

    def __init__(self, source: object, expected_sha256: str, actual_sha256: str):
        super().__init__(
            f"checkpoint {source} refused: file sha256 {actual_sha256} differs from the journal's {expected_sha256}"
        )
        self.source, self.expected_sha256, self.actual_sha256 = source, expected_sha256, actual_sha256


class CheckpointIncompatible(CheckpointError):
    code = "checkpoint-incompatible"

    def __init__(self, source: object, field: str, expected: object, found: object):
        super().__init__(
            f"checkpoint {source} refused: {field} is {found!r} but this session needs "
            f"{expected!r}; start from boot to retest a different build"
        )
        self.source, self.field, self.expected, self.found = source, field, expected, found


class CheckpointStale(CheckpointIncompatible):
    code = "checkpoint-stale"
