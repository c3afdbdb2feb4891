"""Helper process for test_restored_frames / test_battery: plays to a checkpoint, then a plan
of steps sampling every frame, prints ``READY [[frame, rgbaSha256], ...]`` and waits to be
killed. With BATTERY_PATH the cartridge starts from that battery save and no checkpoint is
taken (a resume then boots again, with the battery RAM the recording started with).

Usage: python restore_worker.py ROM_PATH RECORDING_DIR PLAN_JSON [BATTERY_PATH]
"""

import json
import sys
from pathlib import Path

from actors.emulator.cartridge.layout import DEMO_REGIONS
from actors.emulator.recording.limits import RecordingLimits
from actors.emulator.recording.rom import battery_ram_size
from actors.emulator.session.battery import BatterySave
from actors.emulator.session.core import EmulatorSession, RecordingOptions
from actors.policy.pyboy import DEMO_STEP_FRAMES, demo_next_buttons


def main() -> None:
    rom, path, plan = Path(sys.argv[1]).read_bytes(), Path(sys.argv[2]), json.loads(sys.argv[3])
    battery = BatterySave.read(sys.argv[4], battery_ram_size(rom)) if len(sys.argv) > 4 else None
    session = EmulatorSession(
        rom,
        memory_regions=DEMO_REGIONS,
        battery=battery,
        recording=RecordingOptions(path=path, limits=RecordingLimits(sample_every_frames=1)),
    )
    session.step([], 120)
    for _ in range(6):
        session.step(demo_next_buttons(session.observe().memory), DEMO_STEP_FRAMES)
    session.step([], 1)
    if battery is None:
        session.checkpoint("before the plan")
    frames = []
    for buttons, count in plan:
        frames += [[s.frame, s.rgba_sha256] for s in session.step(buttons, count, samples=count).samples]
    print("READY", json.dumps(frames), flush=True)
    sys.stdin.read()


if __name__ == "__main__":
    main()
