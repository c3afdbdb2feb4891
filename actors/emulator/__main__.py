"""``python -m actors.emulator``: the supervised emulator actor (``session/actor.py``), with the
live clip of the tools room wired in (the package's entry point may use every room)."""

from __future__ import annotations

import functools
import warnings

from actors.runtime.actor import run_actor

from .session.actor import run
from .tools.clips import clip_live

if __name__ == "__main__":
    warnings.filterwarnings("ignore", message=".*SDL2.*")  # PyBoy's import-time notice
    run_actor("emulator", functools.partial(run, clip_maker=clip_live))
