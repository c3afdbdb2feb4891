"""Real demo-cartridge recordings and tree snapshots for the lease and archive tests."""

from __future__ import annotations

import functools
import hashlib
import os
import stat
import subprocess
import sys
from pathlib import Path

from actors.emulator.cartridge import build_rom
from actors.emulator.cartridge.layout import DEMO_REGIONS
from actors.emulator.session.core import EmulatorSession, RecordingOptions
from actors.policy.pyboy import DEMO_STEP_FRAMES, demo_next_buttons

REPO = Path(__file__).resolve().parents[3]
WORKER = Path(__file__).with_name("lease_worker.py")
BIG = 64 * 1024 * 1024


@functools.lru_cache(maxsize=1)
def demo_rom() -> bytes:
    return build_rom()


def play_demo(
    parent: Path, *, steps: int = 400, outcome: str | None = "passed", reason: str = "the player walked out of the room"
) -> Path:
    """Record the demo cartridge played to its win (automatic checkpoints every 120 frames),
    stop with ``outcome`` and close; return the finalized recording directory."""
    session = EmulatorSession(
        demo_rom(), memory_regions=DEMO_REGIONS, recording=RecordingOptions(parent=parent), checkpoint_every_frames=120
    )
    try:
        session.step([], 120)
        for _ in range(steps):
            memory = session.observe().memory
            if memory["won"] == b"\x01":
                break
            session.step(demo_next_buttons(memory), DEMO_STEP_FRAMES)
        session.stop(outcome, reason)
    finally:
        session.close()
    return session.recording_path


def snapshot(root: Path, *, times: bool = True) -> dict:
    """Every entry under ``root`` (root included) -> type, mode, size, SHA-256 of file bytes, and
    (with ``times``) mtime in ns. Symlinks are recorded as links, never followed."""
    found = {}
    for base, dirs, files in os.walk(root):
        for name in [".", *dirs, *files]:
            path = Path(base) if name == "." else Path(base) / name
            if name == "." and path != root:
                continue
            info = os.lstat(path)
            entry = {"mode": info.st_mode, "size": info.st_size if not os.path.isdir(path) else None}
            if os.path.isfile(path) and not os.path.islink(path):
                entry["sha256"] = hashlib.sha256(path.read_bytes()).hexdigest()
            if times:
                entry["mtime_ns"] = info.st_mtime_ns
            found[str(path.relative_to(root))] = entry
    return found


def content(root: Path) -> dict:
    """Relative path -> (mode, bytes, mtime) of every member (a symlink's target, never followed;
    no bytes for directories and special files): what a move must preserve."""
    out = {}
    for base, dirs, files in os.walk(root):
        for name in dirs + files:
            path = Path(base) / name
            info = os.lstat(path)
            regular = stat.S_ISREG(info.st_mode)
            if regular and info.st_size > BIG:
                data = (info.st_size, info.st_blocks)  # a huge sparse file: its size and allocation
            else:
                data = path.read_bytes() if regular else os.readlink(path) if stat.S_ISLNK(info.st_mode) else None
            out[str(path.relative_to(root))] = (info.st_mode, data, info.st_mtime_ns if regular else None)
    return out


class Holder:
    """A real process holding a lease: ``record PATH`` (an emulator recording the demo cart),
    ``clip PATH`` (an artifact worker) or ``archive PATH WORKSPACE`` (maintenance, stopped right
    after its rename). Released when its stdin closes; SIGKILL leaves it stale."""

    def __init__(self, mode: str, path: Path, *extra: str):
        self.proc = subprocess.Popen(
            [sys.executable, str(WORKER), mode, str(path), *extra],
            cwd=REPO,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        line = self.proc.stdout.readline()  # blocks until the lease is held
        assert line.startswith("READY"), f"lease worker failed: {line!r}"
        self.pid = self.proc.pid

    def finish(self) -> int:
        self.proc.stdin.close()
        code = self.proc.wait(timeout=60)
        self.proc.stdout.close()
        return code

    def kill(self) -> None:
        self.proc.kill()
        self.proc.wait(timeout=60)
        self.proc.stdin.close()
        self.proc.stdout.close()
