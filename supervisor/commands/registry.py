"""The registry: the only listing of the commands (``supervisor/cli.py`` builds the parser
from it). Commands are named by module path and imported only when used, so that running
one command (``supervisor start``: the process that supervises a session for its whole
life) does not import every other command's dependencies; ``supervisor --help`` loads them
all. It lives apart from the package's ``__init__`` so that importing one command's helpers
(``commands.base``) does not import every command."""

from __future__ import annotations

import dataclasses
import importlib


@dataclasses.dataclass(frozen=True)
class CommandRef:
    """One command: its name on the command line and where its class lives."""

    name: str
    module: str
    attr: str

    def load(self) -> type:
        """The command class (its module imported now)."""
        return getattr(importlib.import_module(self.module), self.attr)


REGISTRY: tuple[CommandRef, ...] = tuple(
    CommandRef(name, f"supervisor.commands.{name}", attr)
    for name, attr in (
        ("init", "Init"),
        ("start", "Start"),
        ("status", "Status"),
        ("stop", "Stop"),
        ("attach", "Attach"),
        ("validate", "Validate"),
        ("capture", "Capture"),
        ("view", "View"),
        ("mcp", "Mcp"),
        ("fleet", "Fleet"),
        ("standin", "Standin"),
        ("docs", "Docs"),
    )
)


def find(name: str) -> CommandRef | None:
    """The command called ``name``, or None."""
    return next((ref for ref in REGISTRY if ref.name == name), None)
