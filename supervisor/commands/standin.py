"""A stand-in model server: try the model-assisted and agent profiles with no GPU and no model.

  supervisor standin [--port 8000] [--seed 1] [--run CMD ...]

It serves the OpenAI chat-completions API on 127.0.0.1 and answers every request with JSON
valid against the request's own schema: legal answers, not good ones, the same answer to the
same question. With --run it starts CMD with {url} replaced by its base URL
(http://127.0.0.1:PORT/v1), stops when CMD ends and exits with its code; a CMD starting with
'supervisor' runs this same gamerig (whether or not it is on your PATH). Without --run it
serves until Ctrl-C. More: supervisor docs models (the stand-in server).

Example:
  supervisor standin --port 0 --run supervisor start run/profiles/agent-demo.yaml --set 'model.base_url={url}'
  supervisor standin --port 8010 --run supervisor fleet start run/fleets/agent-models.yaml
"""
from __future__ import annotations

import argparse
import sys

from actors.model_client import standin

from .base import Command


class Standin(Command):
    name = "standin"

    def add_arguments(self, p) -> None:
        p.add_argument("--port", type=int, default=8000, help="port on 127.0.0.1 (default 8000; 0: a free one)")
        p.add_argument("--seed", type=int, default=1, help="the answers' seed (default 1)")
        p.add_argument("--run", nargs=argparse.REMAINDER, metavar="CMD",
                       help="run CMD ({url} becomes the base URL), then stop; exit with its code")

    def run(self, args) -> int:
        argv = ["--port", str(args.port), "--seed", str(args.seed)]
        if args.run:
            cmd = list(args.run)
            if cmd[0] == "supervisor":
                cmd[:1] = [sys.executable, "-m", "supervisor"]
            argv += ["--run", *cmd]
        return standin.main(argv)
