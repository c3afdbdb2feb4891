"""What the session returns: small frozen dataclasses with ``to_json`` (camelCase keys).

PNG bytes are never put in ``to_json`` output; callers store or send them separately.
"""

from __future__ import annotations

from dataclasses import dataclass

from .rom import RomIdentity


@dataclass(frozen=True)
class Sample:
    """One sampled frame of a step. ``png`` is set for requested samples only."""

    frame: int
    rgba_sha256: str
    requested: bool
    png_path: str | None = None  # relative to the recording, when retained
    png_sha256: str | None = None
    png: bytes | None = None

    def to_json(self) -> dict:
        return {
            "frame": self.frame,
            "rgbaSha256": self.rgba_sha256,
            "requested": self.requested,
            "png": self.png_path,
            "pngSha256": self.png_sha256,
        }


@dataclass(frozen=True)
class RecordingSpan:
    """The exact retained interval a step produced: ``(fromActionIndex, toActionIndex]``."""

    recording_path: str
    session_id: str
    branch_id: str
    from_action_index: int
    to_action_index: int
    from_frame: int
    to_frame: int
    prefix_pin: str
    from_prefix_pin: str

    def to_json(self) -> dict:
        return {
            "recordingPath": self.recording_path,
            "sessionId": self.session_id,
            "branchId": self.branch_id,
            "fromActionIndex": self.from_action_index,
            "toActionIndex": self.to_action_index,
            "fromFrame": self.from_frame,
            "toFrame": self.to_frame,
            "prefixPin": self.prefix_pin,
            "fromPrefixPin": self.from_prefix_pin,
        }


@dataclass(frozen=True)
class CheckpointInfo:
    checkpoint_id: str
    path: str
    frame: int
    branch_id: str
    action_index: int
    label: str | None
    automatic: bool
    file_sha256: str
    nbytes: int

    def to_json(self) -> dict:
        return {
            "checkpointId": self.checkpoint_id,
            "path": self.path,
            "frame": self.frame,
            "branchId": self.branch_id,
            "actionIndex": self.action_index,
            "label": self.label,
            "automatic": self.automatic,
            "fileSha256": self.file_sha256,
            "bytes": self.nbytes,
        }


@dataclass(frozen=True)
class StepResult:
    frame: int
    held: tuple[str, ...]
    pressed: tuple[str, ...]
    released: tuple[str, ...]
    samples: tuple[Sample, ...]
    span: RecordingSpan | None
    checkpoint: CheckpointInfo | None = None  # an automatic checkpoint taken after the step
    score: dict | None = None  # the score values read after the step (session/score.py), when scored

    def to_json(self) -> dict:
        out = {
            "frame": self.frame,
            "held": list(self.held),
            "pressed": list(self.pressed),
            "released": list(self.released),
            "samples": [s.to_json() for s in self.samples],
            "recordingSpan": self.span.to_json() if self.span else None,
            "checkpoint": self.checkpoint.to_json() if self.checkpoint else None,
        }
        if self.score is not None:
            out["score"] = self.score
        return out


@dataclass(frozen=True)
class ObservedFrame:
    """What ``EmulatorSession.observe`` returns: the current frame (PNG, RGBA hash), the named
    memory regions, the held buttons and the ROM identity."""

    frame: int
    png: bytes
    rgba_sha256: str
    memory: dict[str, bytes]
    held: tuple[str, ...]
    rom: RomIdentity
    cgb: bool
    png_path: str | None = None
    score: dict | None = None  # the score values read (session/score.py), when scored

    def to_json(self) -> dict:
        out = {
            "frame": self.frame,
            "rgbaSha256": self.rgba_sha256,
            "png": self.png_path,
            "memory": {name: list(data) for name, data in self.memory.items()},
            "held": list(self.held),
            "rom": self.rom.to_json(),
            "cgb": self.cgb,
        }
        if self.score is not None:
            out["score"] = self.score
        return out


@dataclass(frozen=True)
class BranchInfo:
    branch_id: str
    parent_branch_id: str
    checkpoint_id: str | None
    from_action_index: int
    from_frame: int
    reason: str

    def to_json(self) -> dict:
        return {
            "branchId": self.branch_id,
            "parentBranchId": self.parent_branch_id,
            "checkpointId": self.checkpoint_id,
            "fromActionIndex": self.from_action_index,
            "fromFrame": self.from_frame,
            "reason": self.reason,
        }
