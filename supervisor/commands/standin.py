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

import sys

from actors.model_client import standin

from .base import Command


class Standin(Command):
    name = "standin"

    def add_arguments(self, p) -> None:
        standin.add_arguments(p)

    def run(self, args) -> int:
        if args.run and args.run[0] == "supervisor":  # this same gamerig, on PATH or not
            args.run[:1] = [sys.executable, "-m", "supervisor"]
        return standin.serve(args)
