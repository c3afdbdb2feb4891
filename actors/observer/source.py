"""Where the observer reads state from: the HTTP game (any STS2MCP-speaking server).

A source has ``read() -> dict``, ``close()`` and an exception class ``ReadFailed`` with a
``kind``. The pyboy backend adds its own source (an ``observe`` request to the emulator).
"""
from __future__ import annotations

from actors.runtime import ActorContext
from actors.sts2mcp import GameClient, ReadFailed


class HttpSource:
    ReadFailed = ReadFailed

    def __init__(self, base_url: str, timeout_s: float):
        self.client = GameClient(base_url, timeout_s)

    def read(self) -> dict:
        return self.client.read_state()

    def close(self) -> None:
        self.client.close()


def make_source(ctx: ActorContext):
    backend = ctx.setting("game.backend")
    if backend == "http":
        return HttpSource(ctx.setting("game.base_url"), float(ctx.setting("game.timeout_s", 5)))
    raise ValueError(f"game.backend {backend!r} has no observer source yet")
