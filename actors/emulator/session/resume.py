"""Continue an interrupted recording in a new process: ``resume_from_latest_checkpoint``.

When the process that owned a recording dies (kill -9, crash, power cut), the kernel drops
its writer lock. A new process calls :func:`resume_from_latest_checkpoint`, which

1. takes the lock and verifies the whole hash chain (terminating and acknowledging a torn
   final line, if the writer died mid-write);
2. checks that the ROM is the recording's exact ROM;
3. appends a ``lost-interval`` event: the actions and frames after the newest checkpoint
   on the branch that was current (or after that branch's start) are not restorable;
4. restores the newest checkpoint into a fresh PyBoy on a new branch (reason ``resume``),
   or boots from frame 0 on a new branch when no checkpoint exists -- with the battery RAM
   the recording started with (``battery/start.ram``, checked against the header).

The returned session's ``resume_info`` holds ``{"lostInterval": ..., "branch": ...}`` (the
``lost-interval`` event's fields and the new branch) for callers that journal the resume.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from ..recording import journal as j
from ..recording.errors import CheckpointIncompatible
from ..recording.reader import Summary
from ..recording.results import BranchInfo
from ..recording.rom import RomIdentity
from ..recording.writer import Recording
from .battery import read_start
from .core import EmulatorSession
from .score import ScoreSpec


def lost_interval(summary: Summary, latest: dict | None) -> dict:
    """The interval of the current branch that the newest checkpoint does not cover."""
    base_action, base_frame = summary.branch_start
    if latest is not None and latest["branchId"] == summary.branch_id:
        base_action, base_frame = latest["actionIndex"], latest["frame"]
    last = summary.actions[-1] if summary.actions else None
    return {
        "branchId": summary.branch_id,
        "fromActionIndex": base_action,
        "toActionIndex": summary.action_index,
        "fromFrame": base_frame,
        "toFrame": summary.frame,
        "checkpointId": latest["checkpointId"] if latest else None,
        "lastActionCompleted": bool(last is None or last.get("completed")),
    }


def resume_from_latest_checkpoint(
    recording_path: Path | str,
    rom: bytes,
    *,
    sound: bool = False,
    memory_regions: Mapping[str, tuple[int, int]] | None = None,
    battery_dir: Path | None = None,
    checkpoint_every_frames: int | None = None,
    fsync_inputs: bool = False,
    score: ScoreSpec | None = None,
) -> EmulatorSession:
    """Reopen an interrupted recording and continue it on a new branch (see module docstring)."""
    rec, scan, summary = Recording.reopen(Path(recording_path))
    session = None
    try:
        header = scan.events[0]
        identity = RomIdentity.from_bytes(rom)
        if identity.sha256 != header["rom"]["sha256"]:
            raise CheckpointIncompatible(recording_path, "romSha256", header["rom"]["sha256"], identity.sha256)
        session = EmulatorSession.__new__(EmulatorSession)
        session._setup(
            rom,
            header["cgb"],
            sound,
            memory_regions,
            rec,
            battery_dir,
            checkpoint_every_frames,
            fsync_inputs=fsync_inputs,
            start_ram=read_start(rec.path, header),
            score=score,
        )
        session.branch_id, session.action_index, session.frame = (
            summary.branch_id,
            summary.action_index,
            summary.frame,
        )
        latest = list(summary.checkpoints.values())[-1] if summary.checkpoints else None
        lost = lost_interval(summary, latest)
        rec.append(j.LOST_INTERVAL, lost)
        if latest is not None:
            branch = session.restore(latest["checkpointId"], reason="resume")
        else:
            branch = _boot_branch(session, rec)
        session.resume_info = {"lostInterval": lost, "branch": branch.to_json()}
    except BaseException:
        if session is not None and hasattr(session, "_machine"):
            session._machine.close()
        rec.close()
        raise
    return session


def _boot_branch(session: EmulatorSession, rec: Recording) -> BranchInfo:
    """No checkpoint to restore: the fresh machine starts from boot on a new branch."""
    rec.branch_count += 1
    branch = BranchInfo(f"branch-{rec.branch_count:04d}", session.branch_id, None, 0, 0, "resume")
    rec.append_synced(j.BRANCH, branch.to_json())
    rec.write_manifest()
    session.branch_id, session.action_index, session.frame = branch.branch_id, 0, 0
    return branch
