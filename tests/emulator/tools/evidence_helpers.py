"""Real demo-cartridge recordings for the review and clip tests, made through EmulatorSession.

Each builder plays the cartridge we own (actors/emulator/cartridge) with the real session
code, stops and closes the recording, and returns what a caller of ``step`` would have kept:
the exact ``recordingSpan`` of every step.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import stat
from dataclasses import dataclass, field
from pathlib import Path

from actors.emulator.cartridge import build_rom
from actors.emulator.cartridge.layout import DEMO_REGIONS
from actors.emulator.recording.limits import RecordingLimits
from actors.emulator.session.core import EmulatorSession, RecordingOptions
from actors.policy.pyboy import DEMO_STEP_FRAMES, demo_next_buttons


@dataclass
class Played:
    path: Path
    session_id: str
    spans: list[dict] = field(default_factory=list)  # recordingSpan of every step, in order

    def span(self, index: int) -> dict:
        """The span whose toActionIndex is ``index`` on branch-0001."""
        return next(s for s in self.spans if s["toActionIndex"] == index and s["branchId"] == "branch-0001")


def _session(parent: Path, **limits) -> EmulatorSession:
    options = RecordingOptions(parent=parent, limits=RecordingLimits.from_options(limits))
    return EmulatorSession(build_rom(), memory_regions=DEMO_REGIONS, recording=options)


def _play_to_win(session: EmulatorSession, played: Played, max_steps: int = 400) -> None:
    for _ in range(max_steps):
        memory = session.observe().memory
        if memory["won"] == b"\x01":
            return
        played.spans.append(session.step(demo_next_buttons(memory), DEMO_STEP_FRAMES).span.to_json())
    raise AssertionError("the demo policy did not win within max_steps")


def play_demo(parent: Path) -> Played:
    """Boot, then the demo policy to the win (default sampling: every 4th frame)."""
    session = _session(parent)
    played = Played(session.recording_path, session.session_id)
    played.spans.append(session.step([], 120).span.to_json())
    _play_to_win(session, played)
    session.stop("passed", "walked out of the room")
    session.close()
    return played


def play_branched(parent: Path) -> tuple[Played, int]:
    """Twenty demo steps, a neutral frame and a checkpoint, ten more steps, a restore (branch-0002)
    and the rest of the game on the new branch. Returns (played, the checkpoint's action index)."""
    session = _session(parent)
    played = Played(session.recording_path, session.session_id)
    played.spans.append(session.step([], 120).span.to_json())
    for _ in range(20):
        played.spans.append(session.step(demo_next_buttons(session.observe().memory), DEMO_STEP_FRAMES).span.to_json())
    played.spans.append(session.step([], 1).span.to_json())
    saved = session.checkpoint("before the key")
    for _ in range(10):
        played.spans.append(session.step(demo_next_buttons(session.observe().memory), DEMO_STEP_FRAMES).span.to_json())
    session.restore(saved.checkpoint_id)
    _play_to_win(session, played)
    session.stop("passed", "won on the restored branch")
    session.close()
    return played, saved.action_index


def play_long(parent: Path) -> Played:
    """Boot, 4,097 one-frame steps, one 3,600-frame step and one 3,601-frame step (a sample
    every 3,600 frames, so the journal stays small)."""
    session = _session(parent, sampleEveryFrames=3600)
    played = Played(session.recording_path, session.session_id)
    for frames in [120] + [1] * 4097 + [3600, 3601]:
        played.spans.append(session.step([], frames).span.to_json())
    session.stop("passed", "limits fixture")
    session.close()
    return played


def play_sparse(parent: Path) -> Played:
    """Requested samples only at frames 1, 3583 and 3584: the cut 1..3583 is exactly 3,583
    native frames (the most that fit in 60 s), 1..3584 one more."""
    session = _session(parent, sampleEveryFrames=3600)
    played = Played(session.recording_path, session.session_id)
    for frames in (1, 3582, 1):
        played.spans.append(session.step([], frames, samples=1).span.to_json())
    session.stop("passed", "sparse fixture")
    session.close()
    return played


def tree(path: Path) -> dict[str, tuple]:
    """Every member under ``path``: (kind, mode, size, SHA-256 of its bytes or link target)."""
    out = {}
    for root, dirs, files in os.walk(path):
        for name in dirs + files:
            full = Path(root, name)
            info = os.lstat(full)
            if stat.S_ISLNK(info.st_mode):
                out[str(full.relative_to(path))] = ("link", os.readlink(full))
            elif stat.S_ISDIR(info.st_mode):
                out[str(full.relative_to(path))] = ("dir", stat.S_IMODE(info.st_mode))
            else:
                digest = hashlib.sha256(full.read_bytes()).hexdigest()
                out[str(full.relative_to(path))] = ("file", stat.S_IMODE(info.st_mode), info.st_size, digest)
    return out


def copy_recording(src: Path, dst: Path) -> Path:
    """A private copy of a recording (tests that damage or extend one)."""
    shutil.copytree(src, dst, symlinks=True)
    return dst
