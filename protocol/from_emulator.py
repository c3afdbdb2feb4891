"""The emulator actor's replies. Each carries ``reply_to``: the id of the request it answers.

Paths (``frame_png``, sample ``png``) are relative to the capture root; the recording span
keeps the core library's camelCase keys (``recordingPath``, ``branchId``,
``fromActionIndex``, ``toActionIndex``, ``fromFrame``, ``toFrame``, ``prefixPin``, ...).
"""

from __future__ import annotations

from .message import Message, message


@message
class Observed(Message):
    """The state read by ``emulator_observe``; ``memory`` maps region names to hex strings.
    Version 2 appended ``score``: the profile's score values read now (``emulator.score``,
    ``actors/emulator/session/score.py``), None when the session reads no score."""

    TYPE = "emulator_observed"
    VERSION = 2
    reply_to: str
    frame: int
    frame_png: str | None
    frame_rgba_sha256: str
    memory: dict[str, str]
    held: list[str]
    rom: dict
    cgb: bool
    branch_id: str
    action_index: int
    recording: str | None = None  # the recording directory, relative to the capture root
    score: dict | None = None


@message
class Stepped(Message):
    """A step that ran: the button diff, requested samples, the exact recording span.
    Version 2 appended ``score``: the score values read after the step (as ``Observed``)."""

    TYPE = "emulator_stepped"
    VERSION = 2
    reply_to: str
    attempt_id: str
    frame: int
    held: list[str]
    pressed: list[str]
    released: list[str]
    samples: list[dict]
    span: dict | None  # None when the profile turned recording off
    checkpoint: dict | None = None  # an automatic checkpoint taken right after the step
    score: dict | None = None


@message
class CheckpointSaved(Message):
    TYPE = "emulator_checkpoint_saved"
    reply_to: str
    checkpoint: dict


@message
class Restored(Message):
    """``emulator_restore`` done: the new branch (``branchId``, ``parentBranchId``,
    ``checkpointId``, ``fromActionIndex``, ``fromFrame``, ``reason``)."""

    TYPE = "emulator_restored"
    reply_to: str
    branch: dict


@message
class RecordingFinalized(Message):
    """``emulator_stop_recording`` done: the recording's status after its ``stop`` line."""

    TYPE = "emulator_recording_finalized"
    reply_to: str
    status: dict


@message
class ClipMade(Message):
    """``emulator_clip`` done: the clip's metadata (output path, sources, timing, ledger charge)."""

    TYPE = "emulator_clip_made"
    reply_to: str
    clip: dict


@message
class SteppedBatch(Message):
    """The replies to an ``emulator_step_batch``, in its order: ``{"type", "body"}`` each, an
    ``emulator_stepped`` or an ``emulator_error`` (with an empty ``reply_to``)."""

    TYPE = "emulator_stepped_batch"
    reply_to: str
    replies: list[dict]


@message
class EmulatorErrorReply(Message):
    """A refused or failed request. ``code`` is stable (the core library's error codes, plus
    ``internal-error`` and ``unexpected-type``); ``effect`` is ``none`` when nothing ran and
    ``unknown`` when the failure may have left the emulator changed."""

    TYPE = "emulator_error"
    reply_to: str
    code: str
    message: str
    effect: str = "none"
