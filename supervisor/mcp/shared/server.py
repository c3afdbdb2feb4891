"""The MCP server itself, for either set of tools: the official ``mcp`` SDK's low-level ``Server``
over stdio (the only module, with the tests, that imports the SDK).

It serves one :class:`Toolset`: the Game Boy tools (``supervisor.mcp.gameboy.tools.Tools``) or,
with ``--game``, the Slay the Spire 2 tools (``supervisor.mcp.sts2.tools.GameTools``).
``tools/list`` answers the toolset's ``listing()``; ``tools/call`` runs its ``call`` in a
worker thread, one call at a time (the session is one pipeline). An answer becomes one text
content (the JSON answer, also sent as ``structuredContent``) followed by one image content per
PNG; a game tool's answer is the mod server's text followed by the JSON evidence. Every
refusal — :class:`.errors.ToolRefused`, the emulator library's ``EmulatorError``, and any other
exception — becomes a tool error (``isError: true``) whose text starts with a stable code; the
server keeps serving. When the client closes the connection, a running session is ended (its
live recording cancelled, never deleted).
"""

from __future__ import annotations

import base64
import json
import logging
import threading
from importlib import metadata
from typing import Protocol

import anyio
from mcp import types
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server

from actors.emulator.recording.errors import EmulatorError

from .args import Answer
from .errors import ToolRefused

log = logging.getLogger("mcp")


class Toolset(Protocol):
    """What a server serves: the Game Boy tools (``gameboy.tools.Tools``) or the Slay the Spire 2
    tools (``sts2.tools.GameTools``)."""

    INSTRUCTIONS: str

    def listing(self) -> list[tuple[str, str, dict]]:
        """Every tool: (name, description, input schema)."""

    def call(self, name: str, arguments: object) -> Answer:
        """One tool's answer; a refusal raises (``ToolRefused`` or the emulator library's error)."""

    def shutdown(self) -> None:
        """End a running session and remove the server's private files."""


def _error(text: str) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(type="text", text=text)], is_error=True)


def _result(answer: Answer) -> types.CallToolResult:
    data = json.loads(json.dumps(answer.data, default=str))
    content: list = [types.TextContent(type="text", text=json.dumps(data, indent=2, sort_keys=True))]
    if answer.text is not None:  # a game tool: the mod server's text first, our evidence after it
        return types.CallToolResult(content=[types.TextContent(type="text", text=answer.text), *content])
    content += [
        types.ImageContent(type="image", data=base64.b64encode(png).decode(), mime_type="image/png")
        for png in answer.images
    ]
    return types.CallToolResult(content=content, structured_content=data)


def call(tools: Toolset, lock: threading.Lock, name: str, arguments: object) -> types.CallToolResult:
    """One tool call; never raises (see the module docstring)."""
    with lock:
        try:
            return _result(tools.call(name, arguments))
        except ToolRefused as exc:
            return _error(str(exc))
        except EmulatorError as exc:
            return _error(f"{exc.code}: {exc}")
        except Exception as exc:  # a bug must not end the server: the agent sees it
            log.exception("%s failed", name)
            return _error(f"internal-error: {type(exc).__name__}: {exc}")


def listing(tools: Toolset) -> list[types.Tool]:
    return [types.Tool(name=name, description=text, input_schema=schema) for name, text, schema in tools.listing()]


def build(tools: Toolset) -> Server:
    lock = threading.Lock()
    listed = listing(tools)

    async def list_tools(ctx, params) -> types.ListToolsResult:
        return types.ListToolsResult(tools=listed)

    async def call_tool(ctx, params) -> types.CallToolResult:
        return await anyio.to_thread.run_sync(call, tools, lock, params.name, params.arguments)

    try:
        version = metadata.version("gamerig")
    except metadata.PackageNotFoundError:
        version = "0"
    return Server(
        "gamerig", version=version, instructions=tools.INSTRUCTIONS, on_list_tools=list_tools, on_call_tool=call_tool
    )


async def serve(tools: Toolset) -> None:
    server = build(tools)
    try:
        async with stdio_server() as (read, write):
            await server.run(read, write, server.create_initialization_options())
    finally:
        await anyio.to_thread.run_sync(tools.shutdown)


def main(tools: Toolset) -> int:
    """Serve ``tools`` until the client closes the connection."""
    anyio.run(serve, tools)
    return 0
