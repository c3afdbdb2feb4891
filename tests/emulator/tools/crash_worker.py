"""Helper process for the lost-evidence test: plays the demo cartridge, then starts one long
step (every frame sampled, sound emulated: about a second of work) and dies by SIGKILL while
that step's frames run, so its ``input`` line is on disk and its ``stepped`` line never is.

A watcher thread in this process (PyBoy's tick releases the GIL) sees the step's ``input``
line reach events.jsonl and kills the process at once, independently of how quickly the
test process is scheduled.

Usage: python -m tests.emulator.tools.crash_worker RECORDING_DIR STEPS LONG_FRAMES
Prints ``FINISHED`` only if the long step completed before the kill (the test then fails).
"""

import os
import signal
import sys
import threading
from pathlib import Path

from actors.emulator.cartridge import build_rom
from actors.emulator.cartridge.layout import DEMO_REGIONS
from actors.emulator.recording.limits import RecordingLimits
from actors.emulator.session.core import EmulatorSession, RecordingOptions
from actors.policy.pyboy import DEMO_STEP_FRAMES, demo_next_buttons


def kill_when_written(journal: Path, marker: bytes) -> None:
    with open(journal, "rb") as fh:
        seen = b""
        while marker not in seen:
            seen = seen[-len(marker) :] + fh.read()
    os.kill(os.getpid(), signal.SIGKILL)


def main() -> None:
    path, steps, long_frames = Path(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
    limits = RecordingLimits.from_options({"sampleEveryFrames": 1})
    session = EmulatorSession(
        build_rom(),
        memory_regions=DEMO_REGIONS,
        checkpoint_every_frames=40,
        sound=True,
        recording=RecordingOptions(path=path, limits=limits),
    )
    session.step([], 120)
    for _ in range(steps):
        session.step(demo_next_buttons(session.observe().memory), DEMO_STEP_FRAMES)
    session.step([], 1)
    marker = f'"frames":{long_frames},'.encode()
    threading.Thread(target=kill_when_written, args=(path / "events.jsonl", marker), daemon=True).start()
    session.step(["down", "right"], long_frames)  # killed while these frames run
    print("FINISHED", flush=True)


if __name__ == "__main__":
    main()
