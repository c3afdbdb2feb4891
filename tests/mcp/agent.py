"""An agent for the MCP tests: the official SDK's stdio client starting ``supervisor mcp``
as a real subprocess, exactly as Claude Code or Codex would (docs/mcp.md)."""

from __future__ import annotations

import contextlib
import json
import sys
from pathlib import Path

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

from actors.emulator.cartridge import build_rom
from tests.harness import REPO


class Reply:
    def __init__(self, result):
        self.is_error = result.is_error
        texts = [c.text for c in result.content if c.type == "text"]
        self.text = texts[0] if texts else ""
        self.images = [c for c in result.content if c.type == "image"]
        self.data = json.loads(self.text) if texts and not self.is_error else None


class Agent:
    def __init__(self, session: ClientSession):
        self.session = session

    async def call(self, name: str, arguments: dict | None = None) -> Reply:
        return Reply(await self.session.call_tool(name, arguments or {}))

    async def ok(self, name: str, arguments: dict | None = None) -> Reply:
        reply = await self.call(name, arguments)
        assert not reply.is_error, f"{name} {arguments}: {reply.text}"
        return reply

    async def refused(self, name: str, arguments: dict | None, *words: str) -> str:
        reply = await self.call(name, arguments)
        assert reply.is_error, f"{name} {arguments} was not refused: {reply.text[:300]}"
        for word in words:
            assert word in reply.text, f"{word!r} not in {reply.text!r}"
        return reply.text


class GameReply:
    """A game tool's answer: the mod server's text first, then ``{"gamerig": evidence}``."""

    def __init__(self, result):
        self.is_error = result.is_error
        texts = [c.text for c in result.content if c.type == "text"]
        self.text = texts[0] if texts else ""
        self.evidence = json.loads(texts[1])["gamerig"] if len(texts) > 1 else None

    def json(self):
        return json.loads(self.text)


@contextlib.asynccontextmanager
async def connect(workspace: Path | None, errlog, cwd: Path = REPO, extra: tuple[str, ...] = ()):
    """``supervisor mcp --workspace WORKSPACE`` (no ``--workspace`` when None: the default, ``cwd``)."""
    flags = [*(["--workspace", str(workspace)] if workspace is not None else []), *extra]
    params = StdioServerParameters(command=sys.executable, cwd=cwd, args=["-m", "supervisor", "mcp", *flags])
    async with stdio_client(params, errlog=errlog) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            yield Agent(session)


def workspace_with_demo(root: Path) -> Path:
    """A workspace holding our demo cartridge, built from actors/emulator/cartridge/game.asm."""
    (root / "roms").mkdir(parents=True)
    (root / "roms" / "demo.gb").write_bytes(build_rom())
    return root


def journal(session_dir: str | Path) -> list[dict]:
    with open(Path(session_dir) / "events.jsonl", encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]
