"""The ``supervisor`` command line: a parser built from the command registry.

Only the command being run is imported (``supervisor start`` stays small for the session's
whole life); without a known command name first (``supervisor --help``, a typo) the parser
holds every command, so the help lists them all and an unknown name is refused with the
choices.

Before anything else it refuses to run when another package shares gamerig's import names
(``installed.clashes``: Supervisor, the process manager, also installs ``supervisor``)."""

from __future__ import annotations

import argparse
import logging
import os
import sys

from . import installed
from .commands.registry import REGISTRY, CommandRef, find

EPILOG = (
    "Run 'supervisor COMMAND --help' for a command's options and examples. "
    "Start with 'supervisor init' (starting profiles in a new folder) and 'supervisor docs quickstart'. "
    "The documentation travels with gamerig: 'supervisor docs' lists it, and a page a help text "
    "names as docs/NAME.md is 'supervisor docs NAME'."
)


def build_parser(refs: tuple[CommandRef, ...] = REGISTRY) -> argparse.ArgumentParser:
    """The parser with the commands ``refs`` (default: all of them)."""
    parser = argparse.ArgumentParser(
        prog="supervisor",
        description="gamerig: run and inspect supervised, crash-isolated bot sessions.",
        epilog=EPILOG,
    )
    parser.add_argument("--version", action="version", version=f"gamerig {installed.version()}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    for ref in refs:
        cls = ref.load()
        cmd = cls()
        doc = (cls.__doc__ or (cls.__module__ and sys.modules[cls.__module__].__doc__) or "").strip()
        summary = doc.splitlines()[0] if doc else ""
        p = sub.add_parser(
            cmd.name, help=summary, description=doc, formatter_class=argparse.RawDescriptionHelpFormatter
        )
        cmd.add_arguments(p)
        p.set_defaults(_cmd=cmd)
    return parser


def main(argv: list[str] | None = None) -> int:
    logging.basicConfig(
        level=os.environ.get("GAMERIG_LOG", "WARNING"), format="%(asctime)s supervisor %(levelname)s %(message)s"
    )
    argv = sys.argv[1:] if argv is None else list(argv)
    found = installed.clashes()
    if found:
        sys.stderr.write(installed.clash_message(found))
        return 2
    if argv[:1] == ["--version"]:  # without importing every command
        print(f"gamerig {installed.version()}")
        return 0
    chosen = find(argv[0]) if argv else None
    args = build_parser((chosen,) if chosen else REGISTRY).parse_args(argv)
    return args._cmd.run(args)


if __name__ == "__main__":
    sys.exit(main())
