"""Helper process for test_crash: records demo play with automatic checkpoints, then waits.

Usage: python crash_worker.py RECORDING_DIR STEPS. Prints one ``READY {json}`` line once the
steps are recorded, then blocks on stdin until the test kills it with SIGKILL.
"""

import json
import sys
from pathlib import Path

from actors.emulator.cartridge import build_rom
from actors.emulator.cartridge.layout import DEMO_REGIONS
from actors.emulator.session.core import EmulatorSession, RecordingOptions
from actors.policy.pyboy import DEMO_STEP_FRAMES, demo_next_buttons


def main() -> None:
    path, steps = Path(sys.argv[1]), int(sys.argv[2])
    session = EmulatorSession(
        build_rom(), memory_regions=DEMO_REGIONS, recording=RecordingOptions(path=path), checkpoint_every_frames=40
    )
    session.step([], 120)
    for _ in range(steps):
        session.step(demo_next_buttons(session.observe().memory), DEMO_STEP_FRAMES)
    status = session.status()
    print(
        "READY",
        json.dumps({"frame": status["frame"], "actionIndex": status["actionIndex"], "branchId": status["branchId"]}),
        flush=True,
    )
    sys.stdin.read()


if __name__ == "__main__":
    main()
