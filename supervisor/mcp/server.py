"""The MCP server itself: the official ``mcp`` SDK's low-level ``Server`` over stdio (the only
module, with its tests, that imports the SDK).

``tools/list`` answers the tools of :mod:`.schemas` (or, with ``--game``, of
:mod:`.sts2_schemas`); ``tools/call`` runs :class:`.tools.Tools` (:class:`.game.GameTools`) in a
worker thread, one call at a time (the session is one pipeline). An answer becomes one text
content (the JSON answer, also sent as ``structuredContent``) followed by one image content per
PNG; a game tool's answer is the mod server's text followed by the JSON evidence. Every refusal — :class:`.errors.ToolRefused`, the emulator library's
``EmulatorError``, and any other exception — becomes a tool error (``isError: true``) whose
text starts with a stable code; the server keeps serving. When the client closes the
connection, a running session is ended (its live recording cancelled, never deleted).
"""
from __future__ import annotations

import base64
import json
import logging
import threading
from importlib import metadata

import anyio
from mcp import types
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server

from actors.emulator.recording.errors import EmulatorError

from .args import Answer
from . import sts2_schemas
from .errors import ToolRefused
from .game import GameTools
from .schemas import TOOLS
from .tools import Tools
from .workspace import Workspace

log = logging.getLogger("mcp")

INSTRUCTIONS = ("Playtest Game Boy ROMs of this workspace through gamerig's supervised pipeline: "
                "emulator_run, then emulator_step / emulator_observe / emulator_checkpoint; review and clip "
                "retained evidence with emulator_review / emulator_clip; emulator_recording stop, then "
                "emulator_close. Refusals start with a code; read them, do not retry blindly.")
GAME_INSTRUCTIONS = ("Play Slay the Spire 2 through gamerig: the STS2MCP mod's tools (get_game_state, menu_select, "
                     "combat_play_card, ...), each action recorded and its intent fsynced before it reaches the "
                     "game. After an action, wait_until_actionable returns the next state you can act on. "
                     "Refusals start with a code (duplicate-refused, invalid-argument, outcome-unknown, "
                     "mp-refused); nothing refused was sent.")


def _error(text: str) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(type="text", text=text)], is_error=True)


def _result(answer: Answer) -> types.CallToolResult:
    data = json.loads(json.dumps(answer.data, default=str))
    content: list = [types.TextContent(type="text", text=json.dumps(data, indent=2, sort_keys=True))]
    if answer.text is not None:  # a game tool: the mod server's text first, our evidence after it
        return types.CallToolResult(content=[types.TextContent(type="text", text=answer.text), *content])
    content += [types.ImageContent(type="image", data=base64.b64encode(png).decode(), mime_type="image/png")
                for png in answer.images]
    return types.CallToolResult(content=content, structured_content=data)


def call(tools: Tools | GameTools, lock: threading.Lock, name: str, arguments: object) -> types.CallToolResult:
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


def listing(tools: Tools | GameTools) -> list[types.Tool]:
    if isinstance(tools, GameTools):
        return [types.Tool(name=t.name, description=t.text, input_schema=sts2_schemas.schema(t))
                for t in sts2_schemas.ALL.values()]
    return [types.Tool(name=name, description=text, input_schema=schema) for name, (text, schema) in TOOLS.items()]


def build(tools: Tools | GameTools) -> Server:
    lock = threading.Lock()
    listed = listing(tools)
    instructions = GAME_INSTRUCTIONS if isinstance(tools, GameTools) else INSTRUCTIONS

    async def list_tools(ctx, params) -> types.ListToolsResult:
        return types.ListToolsResult(tools=listed)

    async def call_tool(ctx, params) -> types.CallToolResult:
        return await anyio.to_thread.run_sync(call, tools, lock, params.name, params.arguments)

    try:
        version = metadata.version("gamerig")
    except metadata.PackageNotFoundError:
        version = "0"
    return Server("gamerig", version=version, instructions=instructions,
                  on_list_tools=list_tools, on_call_tool=call_tool)


async def serve(tools: Tools | GameTools) -> None:
    server = build(tools)
    try:
        async with stdio_server() as (read, write):
            await server.run(read, write, server.create_initialization_options())
    finally:
        await anyio.to_thread.run_sync(tools.shutdown)


def main(workspace: Workspace, game: dict | None = None) -> int:
    """Serve the emulator tools, or with ``game`` (``GameTools``' keyword arguments) the STS2MCP
    tools."""
    tools = GameTools(workspace, **game) if game is not None else Tools(workspace)
    anyio.run(serve, tools)
    return 0
