"""What the observer and the actuator may ask of the emulator actor (one reply each).

    emulator_observe     the current frame (stored as a PNG evidence file), named memory
                         regions, held buttons, frame number and ROM identity
    emulator_step        hold exactly ``buttons`` for ``frames`` native frames, with
                         ``samples`` evenly spaced sampled frames (the endpoint included)
    emulator_checkpoint  save a checkpoint now (needs one neutral frame first)

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
class Checkpoint(Message):
    """Save a checkpoint with an optional label (at most 1,000 characters)."""
    TYPE = "emulator_checkpoint"
    label: str | None = None
