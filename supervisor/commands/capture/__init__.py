"""Check, replay, survey and maintain recorded sessions; every subcommand only reads unless
it says otherwise (archive, retrieve and restore move a finalized recording; pack and unpack
rewrite a finished session's observation files).

  verify     is the evidence complete and intact? (exit 0 intact, 3 incomplete, 4 damaged)
  audit      replay every stored observation through a fresh policy
  coverage   screen variants reached, actions sent, runs ended (STS2MCP captures)
  frames     an emulator recording's retained frames (what review and clip can use)
  review     an emulator recording's interval: inputs, verified frames, a contact sheet
  clip       a GIF from a recording's retained frames
  archive, retrieve, restore, diagnose   move a finalized recording and back, check it
  pack, unpack   a finished session's observation files as one compressed file, and back

Run `supervisor capture SUBCOMMAND --help` for its options; `supervisor view` shows the
same evidence in a browser.

Example:
  supervisor capture verify run/capture
  supervisor capture verify run/capture/sessions/<session-id> --json
  supervisor capture coverage run/capture
  supervisor capture review RECORDING --session ID --branch B --from N --to M --contact-sheet
  supervisor capture clip RECORDING --out artifacts/clips/x.gif --start-frame N --end-frame M
"""

# For developers: each subcommand is one module of this package with a Command class whose
# docstring is its help, built on the capture library (supervisor/capture/); SUBCOMMANDS below
# is the only listing of them.
from __future__ import annotations

import argparse
import inspect

from supervisor.commands.base import Command

from .audit import Audit
from .clip import Clip
from .coverage import Coverage
from .frames import Frames
from .packing import PackCommand, UnpackCommand
from .recordings import Archive, Diagnose, Restore, Retrieve
from .review import Review
from .verify import Verify

SUBCOMMANDS = [Verify, Audit, Coverage]
SUBCOMMANDS += [Frames, Review, Clip]
SUBCOMMANDS += [Archive, Retrieve, Restore, Diagnose]
SUBCOMMANDS += [PackCommand, UnpackCommand]


class Capture(Command):
    name = "capture"

    def add_arguments(self, p) -> None:
        sub = p.add_subparsers(dest="capture_command", metavar="SUBCOMMAND")
        sub.required = True
        for cls in SUBCOMMANDS:
            cmd = cls()
            doc = inspect.cleandoc(cls.__doc__ or "")
            sp = sub.add_parser(
                cmd.name,
                help=doc.splitlines()[0] if doc else "",
                description=doc,
                formatter_class=argparse.RawDescriptionHelpFormatter,
            )
            cmd.add_arguments(sp)
            sp.set_defaults(_capture_cmd=cmd)

    def run(self, args) -> int:
        return args._capture_cmd.run(args)
