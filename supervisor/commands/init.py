"""Write commented starting profiles into a new folder, then say what to run.

  supervisor init [DIR]

DIR (default: the current folder) gets the same files a clone of gamerig has under run/, so
every command in the docs works there as written:

  run/profiles/demo.yaml         the built-in game (it speaks the STS2MCP mod's API), one run
  run/profiles/sts2.yaml         Slay the Spire 2 through the STS2MCP mod, run after run
  run/profiles/hostile.yaml      the built-in game with every hostile knob on
  run/profiles/pyboy-demo.yaml   our Game Boy demo cartridge in PyBoy, played to its win
  run/profiles/model-demo.yaml   model-assisted decisions (an OpenAI-compatible server)
  run/profiles/agent-demo.yaml   a language model chooses every action
  run/profiles/pyboy-agent.yaml  a vision model presses every button of the demo cartridge
  run/fleets/agent-models.yaml   two models x two characters x three seeds: wins, tokens, cost
  run/fleets/demo-matrix.yaml    8 seeds x 2 policies of the built-in game
  run/fleets/pyboy-seeds.yaml    the demo cartridge explored with 4 seeds
  run/roms/gamerig-demo.gb       the demo cartridge, built from its source (game.rom accepts it)

Captures land in DIR/run/capture when you run from DIR. It writes nothing when any of these
files is there already (it lists them), and refuses a DIR that is a file or cannot be written;
a failure part-way removes what it wrote.

Exit codes: 0 written, 2 refused (nothing written).

Example:
  supervisor init my-bots && cd my-bots && supervisor start run/profiles/demo.yaml
"""

from __future__ import annotations

import os
import shlex
import sys
from pathlib import Path

from actors.emulator.cartridge.build import build_rom
from supervisor import installed

from .base import Command

ROM = "run/roms/gamerig-demo.gb"

#: what to run next, printed after writing (commands run from DIR)
NEXT = (
    ("supervisor start run/profiles/demo.yaml", "the built-in game: one run to game over, a few seconds"),
    ("supervisor capture verify run/capture", "check the journal it left"),
    ("supervisor view run/capture --open", "look at it in your browser"),
    ("supervisor start run/profiles/pyboy-demo.yaml", "the Game Boy demo cartridge, played to its win"),
    (
        "supervisor standin --port 0 --run supervisor start run/profiles/agent-demo.yaml --set 'model.base_url={url}'",
        "a model plays every decision (a stand-in server: no GPU)",
    ),
    (
        "supervisor standin --port 8010 --run supervisor fleet start run/fleets/agent-models.yaml",
        "which model plays better, at what cost",
    ),
    ("supervisor start run/profiles/sts2.yaml", "Slay the Spire 2, with the STS2MCP mod running"),
    ("supervisor docs quickstart", "what you are looking at; 'supervisor docs' lists every page"),
)


class InitError(Exception):
    """A folder ``init`` will not write into; the message names the path."""


def planned() -> dict[str, bytes]:
    """Every file ``init`` writes, relative to DIR, and its bytes."""
    files = {}
    for rel in installed.STARTER:
        src = installed.bundled(rel)
        try:
            files[rel] = src.read_bytes()
        except OSError as exc:
            raise InitError(
                f"this installation of gamerig lacks {rel} ({src}: {exc.strerror or exc}); reinstall it"
            ) from None
    files[ROM] = build_rom()
    return files


def check_target(target: Path, files: dict[str, bytes]) -> None:
    """Refuse, naming the path, before anything is written."""
    if target.exists() and not target.is_dir():
        raise InitError(f"{target}: is a file, not a folder")
    present = [rel for rel in files if os.path.lexists(target / rel)]
    if present:
        raise InitError(
            f"{target}: already holds "
            + ", ".join(present)
            + " (init never overwrites: pick another folder, or move these away)"
        )
    for rel in files:  # a file where a folder of ours must go (DIR/run a file, ...)
        for parent in Path(rel).parents:
            here = target / parent
            if str(parent) != "." and here.exists() and not here.is_dir():
                raise InitError(f"{here}: is a file, and {rel} must go inside it")
    probe = target
    while not probe.exists():  # the nearest folder that exists must be writable
        probe = probe.parent
    if not os.access(probe, os.W_OK | os.X_OK):
        raise InitError(f"{probe}: cannot write here (permission denied)")


def write(target: Path, files: dict[str, bytes]) -> list[str]:
    """Write every file; on a failure, remove what was written (a partial file too) and the
    folders made for it, and raise :class:`InitError`."""
    check_target(target, files)
    made_dirs: list[Path] = []
    written: list[Path] = []
    try:
        for rel, data in files.items():
            dest = target / rel
            for parent in reversed([dest.parent, *dest.parent.parents]):
                if not parent.exists():
                    parent.mkdir()
                    made_dirs.append(parent)
            with open(dest, "xb") as fh:  # "x": fails if dest appeared meanwhile: never overwrites
                written.append(dest)
                fh.write(data)
    except OSError as exc:
        for path in written:
            path.unlink(missing_ok=True)
        for path in reversed(made_dirs):
            try:
                path.rmdir()
            except OSError:
                pass
        where = exc.filename or target
        raise InitError(f"{where}: {exc.strerror or exc} (nothing was left written)") from None
    return list(files)


class Init(Command):
    name = "init"

    def add_arguments(self, p) -> None:
        p.add_argument(
            "dir",
            nargs="?",
            default=".",
            metavar="DIR",
            help="the folder to write into (default: the current one; made if missing)",
        )

    def run(self, args) -> int:
        target = Path(args.dir)
        try:
            written = write(target, planned())
        except InitError as exc:
            sys.stderr.write(f"error: {exc}\n")
            return 2
        shown = "the current folder" if args.dir == "." else str(target)
        print(f"wrote {len(written)} files into {shown}:")
        for rel in written:
            print(f"  {rel}")
        print("\nnext" + ("" if args.dir == "." else f", in that folder (cd {shlex.quote(str(target))})") + ":")
        width = max(len(cmd) for cmd, _ in NEXT if len(cmd) < 60)
        for cmd, what in NEXT:
            print(f"  {cmd.ljust(width)}  # {what}" if len(cmd) <= width else f"  {cmd}\n  {'':{width}}  # {what}")
        return 0
