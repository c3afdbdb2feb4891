"""Serve the playtesting tools to a coding agent over MCP (stdio).

Example (an MCP client starts it; see docs/mcp.md for Claude Code, Codex and others):
  supervisor mcp --workspace ~/games/mygame

The server reads ROMs and writes artifacts (artifacts/playtests/, artifacts/clips/,
artifacts/recording-archives/) only inside the workspace (default: the current directory).
It needs the optional MCP SDK: pip install 'gamerig[mcp]'.

Exit codes: 0 the client closed the connection, 2 bad workspace or the SDK is missing.
"""
from __future__ import annotations

import importlib
import sys

from supervisor.mcp.errors import PathRefused
from supervisor.mcp.workspace import Workspace

from .base import Command

SERVER = "supervisor.mcp.server"  # imported when the command runs: the SDK is an optional extra,
                                  # and loading it would slow every other command by ~0.6 s


def load_server():
    """The server module, or None with the reason when the MCP SDK is not installed."""
    try:
        return importlib.import_module(SERVER), None
    except ModuleNotFoundError as exc:
        if exc.name == "mcp" or (exc.name or "").startswith(("mcp.", "mcp_types")):
            return None, exc
        raise


class Mcp(Command):
    name = "mcp"

    def add_arguments(self, p) -> None:
        p.add_argument("--workspace", default=".", metavar="DIR",
                       help="the only directory ROMs are read from and artifacts written to (default: .)")

    def run(self, args) -> int:
        mcp_server, missing = load_server()
        if mcp_server is None:
            sys.stderr.write(f"error: supervisor mcp needs the MCP Python SDK, which is not installed "
                             f"({missing}); install it with: pip install 'gamerig[mcp]'\n")
            return 2
        try:
            workspace = Workspace(args.workspace)
        except PathRefused as exc:
            sys.stderr.write(f"error: {exc.message}\n")
            return 2
        sys.stderr.write(f"gamerig MCP server on stdio; workspace {workspace.root}\n")
        return mcp_server.main(workspace)
