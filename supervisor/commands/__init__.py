"""One module per command; the registry below is the only listing of them.

Each command is a class with ``name``, a docstring that is its ``--help`` text (first line:
the summary), ``add_arguments(parser)`` and ``run(args) -> int``.
"""
from __future__ import annotations

from . import attach, capture, fleet, mcp, start, status, stop, validate

REGISTRY = [start.Start, status.Status, stop.Stop, attach.Attach, validate.Validate, capture.Capture, mcp.Mcp,
            fleet.Fleet]
