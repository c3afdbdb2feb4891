"""The catch-all ``overlay`` screen: a transient splash (e.g. the boss victory cut-scene)
that accepts no action and closes by itself after a few reads.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..model import Screen

if TYPE_CHECKING:
    from ..engine import Game


class GenericOverlay(Screen):
    state_type = "overlay"

    def __init__(self, screen_type: str, message: str) -> None:
        self.screen_type = screen_type
        self.message = message

    def block(self, game: "Game") -> dict:
        return {"screen_type": self.screen_type, "message": self.message}
