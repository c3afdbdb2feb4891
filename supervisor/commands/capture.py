"""Capture tools: verify and audit recorded sessions.

Each subcommand is one module of ``supervisor/capture/`` with a ``Command`` class whose
docstring is its help; ``SUBCOMMANDS`` below is the only listing of them.

Example:
  supervisor capture verify run/capture
  supervisor capture verify run/capture/sessions/<session-id> --json
  supervisor capture audit run/capture
  supervisor capture coverage run/capture
  supervisor capture review RECORDING --session ID --branch B --from N --to M --contact-sheet
  supervisor capture clip RECORDING --out artifacts/clips/x.gif --start-frame N --end-frame M
  supervisor capture archive run/capture/sessions/<id>/recording   (also retrieve, restore, diagnose)
"""
from __future__ import annotations

import argparse
import inspect

from supervisor.capture import audit, coverage, recordings, verify
from supervisor.capture import clip, review

from .base import Command

SUBCOMMANDS = [verify.Verify, audit.Audit, coverage.Coverage]
SUBCOMMANDS += [review.Review, clip.Clip]
SUBCOMMANDS += [recordings.Archive, recordings.Retrieve, recordings.Restore, recordings.Diagnose]


class Capture(Command):
    name = "capture"

    def add_arguments(self, p) -> None:
        sub = p.add_subparsers(dest="capture_command", metavar="SUBCOMMAND")
        sub.required = True
        for cls in SUBCOMMANDS:
            cmd = cls()
            doc = inspect.cleandoc(cls.__doc__ or "")
            sp = sub.add_parser(cmd.name, help=doc.splitlines()[0] if doc else "",
                                description=doc,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
            cmd.add_arguments(sp)
            sp.set_defaults(_capture_cmd=cmd)

    def run(self, args) -> int:
        return args._capture_cmd.run(args)
