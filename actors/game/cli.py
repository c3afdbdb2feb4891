"""Command line of the built-in game (``python -m actors.game``).

    python -m actors.game --port 15526 --seed 1 [--journal PATH] [--<knob> N ...]

Serves until SIGINT or SIGTERM, or until the main menu's ``quit`` is selected. Every knob of
``knobs.Knobs`` is a flag with dashes (``--effect-delay-reads 2``); see docs/game.md.
"""

from __future__ import annotations

import argparse
import signal
import sys
import threading

from .http import start_server
from .knobs import Knobs


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m actors.game",
        description="The gamerig built-in game: a small seeded Slay-the-Spire-like game speaking the STS2MCP HTTP API.",
    )
    parser.add_argument("--host", default="127.0.0.1", help="address to bind (127.0.0.1)")
    parser.add_argument("--port", type=int, default=15526, help="port (15526; 0 = any)")
    parser.add_argument("--seed", type=int, default=1, help="game seed (1)")
    parser.add_argument(
        "--journal", default=None, metavar="PATH", help="a session events.jsonl: check every POST's intent against it"
    )
    knobs = parser.add_argument_group("knobs (hostile ones 0 = off; see docs/game.md)")
    defaults = Knobs().as_dict()
    for name in Knobs.names():
        knobs.add_argument(
            "--" + name.replace("_", "-"),
            type=int,
            default=defaults[name],
            metavar="N",
            dest=name,
            help=f"{Knobs.help(name)} (default {defaults[name]})",
        )
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        knobs = Knobs.from_mapping({n: getattr(args, n) for n in Knobs.names()})
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    try:
        server = start_server(args.host, args.port, args.seed, knobs, args.journal)
    except OSError as exc:
        print(f"error: cannot bind {args.host}:{args.port}: {exc}", file=sys.stderr)
        return 1
    stop = threading.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: stop.set())
    print(f"gamerig built-in game on {server.url} (seed {args.seed})", flush=True)
    try:
        while not stop.wait(0.2):
            if server.quit_event.is_set():  # the main menu's quit button
                print("the game quit (main menu 'quit')", flush=True)
                break
    finally:
        server.shutdown()
    return 0
