"""``python -m actors.emulator``: the supervised emulator actor (see ``actor.py``)."""
from __future__ import annotations

import warnings

from actors.runtime.actor import run_actor

from .actor import run

if __name__ == "__main__":
    warnings.filterwarnings("ignore", message=".*SDL2.*")  # PyBoy's import-time notice
    run_actor("emulator", run)
