"""Helper process for test_lease / test_archive: holds a recording root's access lease.

Usage: python lease_worker.py record PATH   an emulator session recording the demo cart at PATH
       python lease_worker.py clip PATH     an artifact worker holding the lease on the recording PATH
       python lease_worker.py archive PATH WORKSPACE
                                            archives PATH and stops right after the rename (before the
                                            mapping is published), printing READY, until SIGKILLed
Prints ``READY`` once the lease is held, then blocks on stdin; when stdin closes it closes the
session / releases the lease and exits 0. A SIGKILL leaves the lease file behind (stale).
"""

import sys
from pathlib import Path

from actors.emulator.cartridge import build_rom
from actors.emulator.cartridge.layout import DEMO_REGIONS
from actors.emulator.recording.lease import ARTIFACT_WORKER, hold
from actors.emulator.session.core import EmulatorSession, RecordingOptions
from actors.emulator.tools.archive import archive


def main() -> None:
    mode, path = sys.argv[1], Path(sys.argv[2])
    if mode == "record":
        session = EmulatorSession(
            build_rom(), memory_regions=DEMO_REGIONS, recording=RecordingOptions(path=path), checkpoint_every_frames=40
        )
        session.step([], 120)
        session.step([], 1)
        session.flush_evidence()  # frames on disk before READY: the tree is quiet
        print("READY", flush=True)
        sys.stdin.read()
        session.stop("passed", "the holder closed its recording")
        session.close()
    elif mode == "clip":
        with hold(path, ARTIFACT_WORKER, "clip"):
            print("READY", flush=True)
            sys.stdin.read()
    elif mode == "archive":
        archive(path, Path(sys.argv[3]), step_hook=_hang_after_move)
    else:
        raise SystemExit(f"unknown mode {mode!r}; expected record, clip or archive")


def _hang_after_move(step: str) -> None:
    if step == "moved":
        print("READY", flush=True)
        sys.stdin.read()
        raise SystemExit("stdin closed mid-move")


if __name__ == "__main__":
    main()
