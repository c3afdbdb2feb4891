"""The registry: the only listing of the commands (``supervisor/cli.py`` builds the parser
from it). It lives apart from the package's ``__init__`` so that importing one command's
helpers (``commands.base``) does not import every command — the capture tools import
``commands.base`` and are themselves listed here."""
from __future__ import annotations

from . import attach, capture, fleet, mcp, start, status, stop, validate

REGISTRY = [start.Start, status.Status, stop.Stop, attach.Attach, validate.Validate, capture.Capture, mcp.Mcp,
            fleet.Fleet]
