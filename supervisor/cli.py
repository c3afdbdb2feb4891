"""The ``supervisor`` command line: a parser built from the command registry.

Only the command being run is imported (``supervisor start`` stays small for the session's
whole life); without a known command name first (``supervisor --help``, a typo) the parser
holds every command, so the help lists them all and an unknown name is refused with the
choices."""
from __future__ import annotations

import argparse
import logging
import os
import sys

from .commands.registry import REGISTRY, CommandRef, find


def build_parser(refs: tuple[CommandRef, ...] = REGISTRY) -> argparse.ArgumentParser:
    """The parser with the commands ``refs`` (default: all of them)."""
    parser = argparse.ArgumentParser(
        prog="supervisor",
        description="gamerig: run and inspect supervised, crash-isolated bot sessions.",
        epilog="Run 'supervisor COMMAND --help' for a command's options and examples. "
               "Documentation: docs/ in the repository (start with docs/quickstart.md).")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    for ref in refs:
        cls = ref.load()
        cmd = cls()
        doc = (cls.__doc__ or cls.__module__ and sys.modules[cls.__module__].__doc__ or "").strip()
        summary = doc.splitlines()[0] if doc else ""
        p = sub.add_parser(cmd.name, help=summary, description=doc,
                           formatter_class=argparse.RawDescriptionHelpFormatter)
        cmd.add_arguments(p)
        p.set_defaults(_cmd=cmd)
    return parser


def main(argv: list[str] | None = None) -> int:
    logging.basicConfig(level=os.environ.get("GAMERIG_LOG", "WARNING"),
                        format="%(asctime)s supervisor %(levelname)s %(message)s")
    argv = sys.argv[1:] if argv is None else list(argv)
    chosen = find(argv[0]) if argv else None
    args = build_parser((chosen,) if chosen else REGISTRY).parse_args(argv)
    return args._cmd.run(args)


if __name__ == "__main__":
    sys.exit(main())
