"""Helper process for the lost-evidence test: plays the demo cartridge, then starts one long
step (every frame sampled, sound emulated: about a second of work) and is killed with SIGKILL
by the test while that step's frames run, so its ``input`` line is on disk and its
``stepped`` line never is.

Usage: python -m tests.recordings.crash_worker RECORDING_DIR STEPS LONG_FRAMES
Prints ``STEP`` just before the long step starts.
"""

import sys
from pathlib import Path

from actors.emulator.cartridge import build_rom
from actors.emulator.limits import RecordingLimits
from actors.emulator.policy import DEMO_REGIONS, DEMO_STEP_FRAMES, demo_next_buttons
from actors.emulator.session import EmulatorSession, RecordingOptions


def main() -> None:
    path, steps, long_frames = Path(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
    limits = RecordingLimits.from_options({"sampleEveryFrames": 1})
    session = EmulatorSession(build_rom(), memory_regions=DEMO_REGIONS, checkpoint_every_frames=40, sound=True,
                              recording=RecordingOptions(path=path, limits=limits))
    session.step([], 120)
    for _ in range(steps):
        session.step(demo_next_buttons(session.observe().memory), DEMO_STEP_FRAMES)
    session.step([], 1)
    print("STEP", flush=True)
    session.step(["down", "right"], long_frames)   # killed while these frames run
    print("FINISHED", flush=True)


if __name__ == "__main__":
    main()
