"""Where the observer reads state from: the HTTP game (any STS2MCP-speaking server), or the
emulator actor (``game.backend: pyboy``).

A source has ``read() -> dict``, ``read_identity(state) -> dict | None`` (the run identity
read after the state, see ``actors.identity``; never raises), ``close()`` and an exception
class ``ReadFailed`` with a ``kind``.

The pyboy state is ``{"state_type": "pyboy", "frame", "frame_png" (relative to the capture
root), "frame_rgba_sha256", "memory" ({name: hex}), "held", "rom", "cgb", "branch_id",
"action_index", "recording", "policy_hints"}``, plus ``score`` when the emulator reads one
(``emulator.score``); ``policy_hints`` carries the profile values
the pyboy policies use (``game.seed``, ``emulator.frames_per_step``,
``emulator.samples_per_step``), since a policy only sees ``policy.*`` itself.
"""

from __future__ import annotations

import uuid

from actors import identity as run_identity
from actors.runtime.actor import ActorContext
from actors.runtime.transport import RequestFailed
from actors.sts2mcp import GameClient, ReadFailed
from protocol.from_emulator import EmulatorErrorReply, Observed
from protocol.to_emulator import Observe


class HttpSource:
    ReadFailed = ReadFailed

    def __init__(self, base_url: str, timeout_s: float):
        self.client = GameClient(base_url, timeout_s)

    def read(self) -> dict:
        return self.client.read_state()

    def read_identity(self, state: dict) -> dict | None:
        """The compendium's run identity after a stable in-run state; None elsewhere."""
        if not run_identity.wants_identity(state):
            return None
        try:
            return run_identity.normalise(self.client.read_identity())
        except ReadFailed as exc:
            return {"status": "error", "error": str(exc)}

    def close(self) -> None:
        self.client.close()


class EmulatorSource:
    """An ``emulator_observe`` request (Lazy Pirate: an observe is safe to repeat)."""

    ReadFailed = ReadFailed

    def __init__(self, ctx: ActorContext, timeout_s: float):
        self.client = ctx.client("emulator")
        self.timeout_s = timeout_s
        self.hints = {
            "seed": ctx.setting("game.seed"),
            "frames_per_step": ctx.setting("emulator.frames_per_step"),
            "samples_per_step": ctx.setting("emulator.samples_per_step", 0),
        }

    def read(self) -> dict:
        try:
            reply = self.client.request(
                Observe(read_id=uuid.uuid4().hex), deadline_s=self.timeout_s, try_s=min(1.0, self.timeout_s)
            )
        except RequestFailed as exc:
            raise ReadFailed("transport", str(exc)) from exc
        if isinstance(reply, EmulatorErrorReply):
            raise ReadFailed("emulator", f"{reply.code}: {reply.message}")
        if not isinstance(reply, Observed):
            raise ReadFailed("shape", f"unexpected reply {reply.TYPE!r} to emulator_observe")
        state = {
            "state_type": "pyboy",
            "frame": reply.frame,
            "frame_png": reply.frame_png,
            "frame_rgba_sha256": reply.frame_rgba_sha256,
            "memory": reply.memory,
            "held": reply.held,
            "rom": reply.rom,
            "cgb": reply.cgb,
            "branch_id": reply.branch_id,
            "action_index": reply.action_index,
            "recording": reply.recording,
            "policy_hints": dict(self.hints),
        }
        if reply.score is not None:  # emulator.score: the values read (docs/emulator.md)
            state["score"] = reply.score
        return state

    def read_identity(self, state: dict) -> dict | None:
        """A cartridge has no run identity; the ROM identity is part of every state."""
        return None

    def close(self) -> None:
        self.client.close()


def make_source(ctx: ActorContext):
    backend = ctx.setting("game.backend")
    if backend == "http":
        return HttpSource(ctx.setting("game.base_url"), float(ctx.setting("game.timeout_s", 5)))
    if backend == "pyboy":
        return EmulatorSource(ctx, float(ctx.setting("game.timeout_s", 5)))
    raise ValueError(f"game.backend {backend!r} has no observer source yet")
