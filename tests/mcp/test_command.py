"""``supervisor mcp`` without the optional SDK, and with a bad workspace: a clear error, exit 2;
the client configuration docs/mcp.md shows starts the server."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import anyio
import pytest
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

from tests.harness import REPO
from tests.mcp.agent import workspace_with_demo

pytestmark = pytest.mark.timeout(60)


def supervisor_mcp(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "supervisor", "mcp", *args],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=30,
        stdin=subprocess.DEVNULL,
        env={**os.environ, **(env or {})},
    )


def test_without_the_sdk_the_command_says_how_to_install_it(tmp_path):
    # an interpreter without the SDK: a module first on the path that fails to import as a missing one would
    (tmp_path / "mcp.py").write_text("raise ModuleNotFoundError(\"No module named 'mcp'\", name='mcp')\n")
    done = supervisor_mcp("--workspace", str(tmp_path), env={"PYTHONPATH": f"{tmp_path}{os.pathsep}{REPO}"})
    assert done.returncode == 2, done.stderr
    assert "pip install 'gamerig[mcp]'" in done.stderr and "No module named 'mcp'" in done.stderr
    assert done.stdout == ""  # nothing on the MCP wire


def test_a_workspace_that_is_not_a_directory_is_refused(tmp_path):
    done = supervisor_mcp("--workspace", str(tmp_path / "nope"))
    assert done.returncode == 2 and f"--workspace '{tmp_path / 'nope'}' refused: is not a directory" in done.stderr


def config_snippet(name: str = "gamerig") -> dict:
    """docs/mcp.md's `.mcp.json` for Claude Code naming the server ``name`` (also the generic
    clients' command and args)."""
    text = Path(REPO, "docs", "mcp.md").read_text(encoding="utf-8")
    blocks = [json.loads(b)["mcpServers"] for b in re.findall(r"```json\n(\{\n  \"mcpServers\".*?)```", text, re.S)]
    found = [b[name] for b in blocks if name in b]
    assert found, f"docs/mcp.md lost its .mcp.json snippet for {name!r}"
    return found[0]


async def served(command: str, args: list[str], cwd, call: tuple[str, dict] | None):
    """Start the server as a client configuration would; (its tool names, the answer to ``call``)."""
    params = StdioServerParameters(command=command, args=args, cwd=cwd)
    with open(cwd / "server.log", "w") as errlog:
        async with stdio_client(params, errlog=errlog) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()
                names = [t.name for t in (await session.list_tools()).tools]
                return names, (await session.call_tool(*call) if call else None)


def test_the_documented_client_configuration_starts_the_server(tmp_path):
    server = config_snippet()
    assert server["type"] == "stdio" and set(server) == {"type", "command", "args"}
    ws = workspace_with_demo(tmp_path / "ws")
    command = server["command"].replace("/path/to/gamerig", str(REPO))
    args = [a.replace("/path/to/mygame", str(ws)) for a in server["args"]]

    names, refused = anyio.run(served, command, args, tmp_path, ("emulator_run", {"romPath": "/etc/hostname"}))
    assert sorted(names) == sorted(
        [
            "emulator_run",
            "emulator_step",
            "emulator_observe",
            "emulator_checkpoint",
            "emulator_recording",
            "emulator_review",
            "emulator_clip",
            "emulator_close",
        ]
    )
    assert refused.is_error and f"not inside the workspace {ws}" in refused.content[0].text


def test_the_documented_game_configuration_serves_the_mods_tool_names(tmp_path):
    """The `.mcp.json` of the game section, started as written: the STS2MCP mod server's tools."""
    server = config_snippet("sts2")
    assert server["type"] == "stdio" and "--game" in server["args"]
    command = server["command"].replace("/path/to/gamerig", str(REPO))
    args = [a.replace("/path/to/agent-folder", str(tmp_path)) for a in server["args"]]

    names, _ = anyio.run(served, command, args, tmp_path, None)
    assert {
        "get_game_state",
        "menu_select",
        "combat_play_card",
        "crystal_sphere_proceed",
        "mp_map_vote",
        "wait_until_actionable",
        "wait_for_change",
    } <= set(names) and len(names) == 66
