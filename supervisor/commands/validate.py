"""Check a profile without running it; print the effective profile with --json.

For the pyboy backend it also reads what the emulator would load -- ``game.rom`` (missing,
unreadable, too small, not a multiple of 16 KiB, bad header checksum, unknown cartridge
type), ``game.start_checkpoint`` and ``game.battery_save`` -- checks ``emulator.score``
against that cartridge's memory map (an address it cannot read, a width that runs out of its
region, a milestone naming no value ...), and exits 2 naming the key, the path and what is
wrong.

Example:
  supervisor validate run/profiles/demo.yaml
  supervisor validate run/profiles/demo.yaml --set session.max_steps=10 --json
"""

from __future__ import annotations

import sys

from actors.emulator.session.config import ConfigProblem, EmulatorConfig
from supervisor import profile as prof

from .base import Command, emit


def check_emulator_inputs(profile: dict, where: str) -> None:
    """Read what the pyboy backend would load (``game.rom``, ``game.start_checkpoint``,
    ``game.battery_save``); a problem is a :class:`ProfileError` naming ``where``, the key,
    the path and what is wrong. ``validate`` and ``start`` both call this before anything runs."""
    if profile["game"]["backend"] != "pyboy":
        return
    try:
        EmulatorConfig.from_profile(lambda key, default=None: prof.get(profile, key, default))
    except ConfigProblem as exc:
        raise prof.ProfileError(where, exc.key, exc.problem) from None


class Validate(Command):
    name = "validate"

    def add_arguments(self, p) -> None:
        p.add_argument("profile")
        p.add_argument("--set", dest="overrides", action="append", default=[], metavar="KEY=VALUE")
        p.add_argument("--json", action="store_true", help="print the effective profile as JSON")

    def run(self, args) -> int:
        try:
            profile = prof.load(args.profile, args.overrides)
            check_emulator_inputs(profile, args.profile)
        except prof.ProfileError as exc:
            if args.json:
                emit(args, {"ok": False, "error": str(exc), "key": exc.key}, "")
            sys.stderr.write(f"error: {exc}\n")
            return 2
        emit(args, {"ok": True, "profile": profile}, f"{args.profile}: ok")
        return 0
