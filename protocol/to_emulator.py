"""What the observer and the actuator may ask of the emulator actor (one reply each).

    emulator_observe     the current frame (stored as a PNG evidence file), named memory
                         regions, held buttons, frame number and ROM identity
    emulator_step        hold exactly ``buttons`` for ``frames`` native frames, with
                         ``samples`` evenly spaced sampled frames (the endpoint included)
    emulator_checkpoint  save a checkpoint now (needs one neutral frame first)
    emulator_step_batch  several steps, run one after the other, answered together
    emulator_restore     restore a checkpoint of this recording into a fresh PyBoy (a new branch)
    emulator_stop_recording  finalize the recording with an outcome and a reason
    emulator_clip        a GIF of the recording's committed retained frames, made by its writer

Idempotency: a repeated ``read_id`` or ``attempt_id`` gets the first reply again and is never
executed twice by the same emulator process. The actuator sends a step exactly once anyway
(no Lazy-Pirate retry for steps): a step with no reply has an ``unknown`` outcome.
"""

from __future__ import annotations

from .message import Message, message


@message
class Observe(Message):
    """Read the emulator's current state; ``read_id`` is the observer's read id."""

    TYPE = "emulator_observe"
    read_id: str = ""


@message
class Step(Message):
    """The full set of held buttons (diffed against the current set) for ``frames`` frames."""

    TYPE = "emulator_step"
    attempt_id: str
    buttons: list[str]
    frames: int
    samples: int = 0


@message
class StepBatch(Message):
    """Pipelined steps sent in one frame: ``steps`` are ``emulator_step`` bodies, run in
    order, each exactly as if sent alone (a refused one does not stop the others); one
    ``emulator_stepped_batch`` answers them all. Each step's own intent is durable before
    the batch is sent."""

    TYPE = "emulator_step_batch"
    steps: list[dict]


@message
class Checkpoint(Message):
    """Save a checkpoint with an optional label (at most 1,000 characters)."""

    TYPE = "emulator_checkpoint"
    label: str | None = None


@message
class Restore(Message):
    """Restore checkpoint ``checkpoint_id`` of this recording (a new branch); sent by the
    actuator for an agent's ``restore`` action (supervisor/mcp, docs/mcp.md)."""

    TYPE = "emulator_restore"
    checkpoint_id: str


@message
class StopRecording(Message):
    """Finalize the recording now: ``outcome`` passed | failed | needs-review | cancelled (or
    None) and a ``reason`` of at most 1,000 characters; later steps are refused."""

    TYPE = "emulator_stop_recording"
    outcome: str | None = None
    reason: str | None = None


@message
class Clip(Message):
    """A GIF of this recording's committed retained frames, written by the emulator that
    writes the recording (an agent's ``emulator_clip`` of a live recording, supervisor/mcp):
    ``request`` is a clip request without ``recordingPath`` (actors/emulator/tools/clips.py),
    ``workspace`` the root whose top-level ``artifacts/`` may receive it."""

    TYPE = "emulator_clip"
    request: dict
    workspace: str
