"""Serve the playtesting tools (or, with --game, Slay the Spire 2's) to a coding agent over MCP (stdio).

Examples (an MCP client starts it; see docs/mcp.md for Claude Code, Codex and others):
  supervisor mcp --workspace ~/games/mygame
  supervisor mcp --game sts2 --workspace ~/sts2-agent          # the STS2MCP mod on localhost:15526
  supervisor mcp --game builtin --workspace ~/sts2-agent       # our built-in game, started inside

Without --game, the tools playtest a Game Boy ROM of the workspace (emulator_run, emulator_step,
emulator_observe, emulator_checkpoint, emulator_close, emulator_recording, emulator_review,
emulator_clip). With --game, they play Slay the Spire 2: the STS2MCP mod's own MCP tools (same
names and arguments) plus wait_until_actionable and wait_for_change; sessions are captured
under artifacts/sts2/.

The server reads ROMs and writes artifacts (artifacts/playtests/, artifacts/clips/,
artifacts/recording-archives/) only inside the workspace (default: the current directory).
It needs the optional MCP SDK: pip install 'gamerig[mcp]'.

Exit codes: 0 the client closed the connection, 2 bad workspace or the SDK is missing.
"""

from __future__ import annotations

import importlib
import sys

from actors.game.knobs import Knobs
from supervisor.mcp.shared.errors import PathRefused
from supervisor.mcp.shared.workspace import Workspace
from supervisor.session import free_port

from .base import Command

# imported when the command runs: the SDK is an optional extra, and loading it (or a server's
# tools) would slow every other command by ~0.6 s
SERVER = "supervisor.mcp.shared.server"
GAMEBOY_TOOLS = "supervisor.mcp.gameboy.tools"  # Tools(workspace)
STS2_TOOLS = "supervisor.mcp.sts2.tools"  # GameTools(workspace, **game)


def load_server():
    """The server module, or None with the reason when the MCP SDK is not installed."""
    try:
        return importlib.import_module(SERVER), None
    except ModuleNotFoundError as exc:
        if exc.name == "mcp" or (exc.name or "").startswith(("mcp.", "mcp_types")):
            return None, exc
        raise


def toolset(workspace: Workspace, game: dict | None):
    """The Game Boy tools, or with ``game`` (``GameTools``' keyword arguments) the Slay the
    Spire 2 tools."""
    if game is None:
        return importlib.import_module(GAMEBOY_TOOLS).Tools(workspace)
    return importlib.import_module(STS2_TOOLS).GameTools(workspace, **game)


def parse_knobs(items: list[str]) -> dict:
    """``NAME=N`` flags as the built-in game's knobs, checked by the game's own ``Knobs``."""
    knobs = {}
    for item in items:
        name, eq, value = item.partition("=")
        if not eq or not value.strip().lstrip("-").isdigit():
            raise ValueError(f"{item!r} is not NAME=N (an integer)")
        knobs[name.strip()] = int(value)
    Knobs.from_mapping(knobs)  # unknown names and bad values: ValueError naming them
    return knobs


class Mcp(Command):
    name = "mcp"

    def add_arguments(self, p) -> None:
        p.add_argument(
            "--workspace",
            default=".",
            metavar="DIR",
            help="the only directory ROMs are read from and artifacts written to (default: .)",
        )
        p.add_argument(
            "--game",
            choices=("sts2", "builtin"),
            default=None,
            help="serve the STS2MCP tools: sts2 = the mod's HTTP server at --host/--port; builtin = "
            "gamerig's built-in game, started inside each session",
        )
        p.add_argument(
            "--host", default="localhost", help="the mod's HTTP server host (the mod server's flag; default localhost)"
        )
        p.add_argument("--port", type=int, default=15526, help="the mod's HTTP server port (default 15526)")
        p.add_argument("--seed", type=int, default=1, help="--game builtin: the game's seed (default 1)")
        p.add_argument(
            "--poll-interval",
            type=float,
            default=0.1,
            metavar="S",
            help="--game: seconds between reads while waiting (default 0.1)",
        )
        p.add_argument(
            "--knob",
            action="append",
            default=[],
            metavar="NAME=N",
            help="--game builtin: a knob of the built-in game (docs/game.md), e.g. effect_delay_reads=2",
        )
        p.add_argument(
            "--no-trust-env",
            action="store_true",
            help="accepted for the mod server's command line; proxies are never used here",
        )

    def run(self, args) -> int:
        mcp_server, missing = load_server()
        if mcp_server is None:
            sys.stderr.write(
                f"error: supervisor mcp needs the MCP Python SDK, which is not installed "
                f"({missing}); install it with: pip install 'gamerig[mcp]'\n"
            )
            return 2
        try:
            workspace = Workspace(args.workspace)
        except PathRefused as exc:
            sys.stderr.write(f"error: {exc.message}\n")
            return 2
        game = None
        if args.game is not None:
            if not 0.01 <= args.poll_interval <= 5:
                sys.stderr.write(
                    f"error: --poll-interval must be between 0.01 and 5 seconds, got {args.poll_interval}\n"
                )
                return 2
            builtin = args.game == "builtin"
            try:
                knobs = parse_knobs(args.knob) if builtin else {}
            except ValueError as exc:
                sys.stderr.write(f"error: --knob: {exc}\n")
                return 2
            if args.knob and not builtin:
                sys.stderr.write("error: --knob is for --game builtin (the real game has no knobs)\n")
                return 2
            url = f"http://127.0.0.1:{free_port()}" if builtin else f"http://{args.host}:{args.port}"
            game = {
                "base_url": url,
                "builtin": builtin,
                "seed": args.seed,
                "poll_s": args.poll_interval,
                "knobs": knobs,
            }
        what = f"the STS2MCP tools for {game['base_url']}" if game else "the emulator tools"
        sys.stderr.write(f"gamerig MCP server on stdio ({what}); workspace {workspace.root}\n")
        return mcp_server.main(toolset(workspace, game))
