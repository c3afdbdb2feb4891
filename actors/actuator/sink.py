"""Where the actuator sends actions: the HTTP game (any STS2MCP-speaking server).

A sink has ``send(action, parameters, attempt_id) -> ActionOutcome`` (never raises, never
retries) and ``close()``. The pyboy backend adds its own sink (a ``step`` to the emulator).
"""
from __future__ import annotations

from actors.runtime import ActorContext
from actors.sts2mcp import ActionOutcome, GameClient


class HttpSink:
    def __init__(self, base_url: str, timeout_s: float):
        self.client = GameClient(base_url, timeout_s)

    def send(self, action: str, parameters: dict, attempt_id: str) -> ActionOutcome:
        return self.client.send_action(action, parameters, attempt_id)

    def close(self) -> None:
        self.client.close()


def make_sink(ctx: ActorContext):
    backend = ctx.setting("game.backend")
    if backend == "http":
        return HttpSink(ctx.setting("game.base_url"), float(ctx.setting("game.timeout_s", 5)))
    raise ValueError(f"game.backend {backend!r} has no actuator sink yet")
