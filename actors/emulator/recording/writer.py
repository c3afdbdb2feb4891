"""The writer side of one recording directory.

::

    <recording>/
        recording.json        manifest, replaced atomically (tmp + fsync + rename)
        events.jsonl          append-only, hash-chained journal (see journal.py)
        frames/               content-addressed PNGs, <rgbaSha256>.png
        checkpoints/          opaque checkpoint files
        quota-ledger.jsonl    derived-output quota ledger (bytes charged to the budget)
        battery/              battery RAM of MBC+battery carts (written on close)
        .gitignore .npmignore ignore-all markers
        .writer.lock          flock held by the live writer (released by the kernel on death)

A :class:`Recording` enforces the byte budget (every file in the directory plus derived
outputs charged in the ledger), the frame budget (work across all branches) and the
execution-time budget (time spent working, never idle time between calls). Creating one
applies the per-parent admission rules under an exclusive lock on the parent directory.
"""

from __future__ import annotations

import datetime as dt
import fcntl
import hashlib
import json
import os
import uuid
from pathlib import Path

from actors.runtime.durable import replace_durably, sync

from . import journal as j
from .errors import LimitExceeded, PathRefused, RecordingBusy, RecordingCorrupt, RecordingStopped
from .frames import FrameStore
from .identity import PROTOCOL_VERSION, SCHEMA_VERSION, WRITER, implementation_hash, pyboy_version
from .journal import now
from .lease import EMULATOR, Lease
from .lease import acquire as acquire_lease
from .limits import MANIFEST, MARKERS, RecordingLimits, check_admission
from .reader import EVENTS, FINAL_STATUSES, LEDGER, LOCK, Summary, directory_bytes, ledger_outside_bytes, summarize
from .rom import RomIdentity

FINAL_RESERVE = 4 * 1024  # kept free for the stop event and the final manifest
EVENT_ESTIMATE = 640  # bytes budgeted per journal event before a step runs
OUTCOMES = ("passed", "failed", "needs-review", "cancelled")


def _lock(path: Path) -> int:
    fd = os.open(path / LOCK, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        raise RecordingBusy(path) from None
    return fd


def _prepare_directory(path: Path | None, parent: Path | None) -> Path:
    """Pick or validate the output directory; admission is checked by the caller."""
    if path is None:
        parent = Path(parent or "run/capture/playtests")
        stamp = dt.datetime.now(dt.UTC).strftime("%Y%m%dT%H%M%SZ")
        path = parent / f"{stamp}-{uuid.uuid4().hex[:8]}"
    path = Path(path)
    if path.is_symlink() or path.parent.is_symlink():
        raise PathRefused(path, "symlinks are not followed for recording storage")
    if path.exists() and (not path.is_dir() or any(path.iterdir())):
        raise PathRefused(path, "an explicit output path must be an unused (absent or empty) directory")
    path.parent.mkdir(parents=True, exist_ok=True)
    return path


class Recording:
    """One live recording: journal, frames, checkpoints, ledger, manifest and budgets."""

    def __init__(
        self,
        path: Path,
        limits: RecordingLimits,
        header: dict,
        journal: j.JournalWriter,
        summary: Summary,
        lock_fd: int,
    ):
        self.path, self.limits, self.header, self.journal = path, limits, header, journal
        self.resolved = str(path.resolve())  # for every step's span (a live recording does not move)
        self.session_id: str = header["sessionId"]
        self.frames = FrameStore(path / "frames")
        self.checkpoint_dir = path / "checkpoints"
        self.checkpoints: dict[str, dict] = dict(summary.checkpoints)
        self.branch_count = 1 + len(summary.branches)
        self.action_count = len(summary.actions)
        self.sample_count = len(summary.samples)
        self.frames_executed = summary.frames_executed
        self.execution_ms = summary.execution_ms
        self.status = "live"
        self.outcome = self.reason = None
        self.limit_reached: str | None = None
        self.bytes_used = directory_bytes(path) + ledger_outside_bytes(path)  # a resumed writer counts clips outside
        self._lock_fd = lock_fd
        self.lease: Lease | None = None  # the access lease (lease.py), released on close

    # ---- lifecycle -----------------------------------------------------------------------
    @classmethod
    def create(
        cls,
        rom: RomIdentity,
        cgb: bool,
        limits: RecordingLimits | None = None,
        *,
        path: Path | None = None,
        parent: Path | None = None,
        extra: dict | None = None,
    ) -> Recording:
        """Create a fresh recording (exclusive), applying the parent admission rules.
        ``extra``: more header fields (the battery RAM loaded and started from)."""
        limits = limits or RecordingLimits()
        path = _prepare_directory(path, parent)
        parent_fd = os.open(path.parent, os.O_RDONLY)
        try:
            fcntl.flock(parent_fd, fcntl.LOCK_EX)  # admission and creation are one step
            check_admission(path.parent, limits.max_bytes)
            path.mkdir(exist_ok=True)
            for name, text in MARKERS.items():
                (path / name).write_bytes(text)
            (path / "frames").mkdir()
            (path / "checkpoints").mkdir()
            (path / LEDGER).write_text("", encoding="utf-8")
            lock_fd = _lock(path)
            lease = acquire_lease(path, EMULATOR, "record")
            header = {
                "schema": SCHEMA_VERSION,
                "writer": WRITER,
                "protocolVersion": PROTOCOL_VERSION,
                "pyboyVersion": pyboy_version(),
                "implementationHash": implementation_hash(),
                "sessionId": uuid.uuid4().hex,
                "createdAt": now(),
                "rom": rom.to_json(),
                "cgb": cgb,
                "limits": limits.to_json(),
                "branchId": "branch-0001",
                **(extra or {}),
            }
            writer = j.JournalWriter(path / EVENTS)
            writer.append(j.HEADER, header)
            writer.sync()
            recording = cls(path, limits, header, writer, Summary(), lock_fd)
            recording.lease = lease
            recording.write_manifest()  # fsyncs the recording's directory: every name above
            sync(parent_fd)  # and the recording's own name in its parent
        finally:
            os.close(parent_fd)
        return recording

    @classmethod
    def reopen(cls, path: Path) -> tuple[Recording, j.JournalScan, Summary]:
        """Take over an interrupted recording (its writer died) to continue it."""
        path = Path(path)
        if not (path / EVENTS).is_file():
            raise RecordingCorrupt(path, f"no {EVENTS}")
        lock_fd = _lock(path)
        try:
            scan = j.read_journal(path / EVENTS)
            summary = summarize(scan.events)
            header = scan.events[0]
            if summary.stop is not None:
                raise RecordingStopped("resume", summary.stop["status"])
            lease = acquire_lease(path, EMULATOR, "resume", adopt_emulator=True)  # we hold the writer lock
            writer = j.JournalWriter(path / EVENTS, scan.head, scan.seq)
            recording = cls(path, RecordingLimits.from_options(header["limits"]), header, writer, summary, lock_fd)
            recording.lease = lease
        except BaseException:
            os.close(lock_fd)
            raise
        if scan.torn_tail is not None:
            offset, torn = scan.torn_tail
            writer.write_raw(b"\n")
            recording.append(
                j.TORN_TAIL, {"offset": offset, "length": len(torn), "sha256": hashlib.sha256(torn).hexdigest()}
            )
        return recording, scan, summary

    def stop(self, outcome: str | None, reason: str | None, status: str, *, battery: dict | None = None) -> None:
        """Finalize: the ``stop`` event (with the battery RAM left, if any), fsync, manifest."""
        fields = {
            "status": status,
            "outcome": outcome,
            "reason": reason,
            "at": now(),
            "executionWallTimeMs": round(self.execution_ms, 3),
            "framesExecuted": self.frames_executed,
        }
        if battery is not None:
            fields["battery"] = battery
        self.append_synced(j.STOP, fields)
        self.status, self.outcome, self.reason = status, outcome, reason
        self.write_manifest()

    def close(self) -> None:
        self.frames.close()
        self.journal.close()
        lease, self.lease = self.lease, None
        try:
            if lease is not None:
                lease.release()  # before the writer lock, so no next writer meets our lease
        finally:
            self._close_lock()

    def _close_lock(self) -> None:
        if self._lock_fd is not None:
            os.close(self._lock_fd)
            self._lock_fd = None

    # ---- journal and files ---------------------------------------------------------------
    @property
    def pin(self) -> str:
        return self.journal.pin

    def require_live(self, operation: str) -> None:
        if self.status in FINAL_STATUSES:
            raise RecordingStopped(operation, self.status)

    def append(self, kind: str, fields: dict, *, defer: bool = False) -> dict:
        before = self.journal.bytes_written
        row = self.journal.append(kind, fields, defer=defer)
        self.bytes_used += self.journal.bytes_written - before
        return row

    def append_synced(self, kind: str, fields: dict) -> dict:
        """A sync point (a checkpoint, a branch, the stop): the frames made durable first, then
        the row appended and the journal fsynced, so that whatever part of the journal a power
        cut keeps, a sync-point row in it vouches for every frame named before it."""
        self.frames.make_durable()
        event = self.append(kind, fields)
        self.journal.sync()
        return event

    def sync(self) -> None:
        """The frames made durable, then the journal fsynced (checkpoints, branches, stop): a
        power cut keeps every row up to here and every frame those rows name."""
        self.frames.make_durable()
        self.journal.sync()

    def charge(self, nbytes: int) -> None:
        self.bytes_used += nbytes

    def room_for(self, nbytes: int) -> bool:
        return self.bytes_used + nbytes <= self.limits.max_bytes - FINAL_RESERVE

    def ensure_room(self, nbytes: int) -> None:
        if not self.room_for(nbytes):
            self.limit_reached = "maxBytes"
            raise LimitExceeded("maxBytes", self.bytes_used, nbytes, self.limits.max_bytes - FINAL_RESERVE)

    def check_step(self, frames: int, events: int) -> None:
        """Refuse a step that would break the frame, wall-time or byte budget."""
        if self.frames_executed + frames > self.limits.max_frames:
            self.limit_reached = "maxFrames"
            raise LimitExceeded("maxFrames", self.frames_executed, frames, self.limits.max_frames)
        if self.execution_ms >= self.limits.max_wall_time_ms:
            self.limit_reached = "maxWallTimeMs"
            raise LimitExceeded("maxWallTimeMs", int(self.execution_ms), 0, self.limits.max_wall_time_ms)
        self.ensure_room(events * EVENT_ESTIMATE)

    def store_frame(self, rgba_hash: str, png: bytes) -> bool:
        """Store a PNG if the budget allows; False when it had to be omitted."""
        if self.frames.has(rgba_hash):
            return True
        if not self.room_for(len(png) + EVENT_ESTIMATE):
            self.limit_reached = "maxBytes"
            return False
        self.charge(self.frames.put(rgba_hash, png))
        return True

    def write_manifest(self) -> None:
        """Replace recording.json atomically with the current summary."""
        manifest = {
            "schema": SCHEMA_VERSION,
            "kind": "gamerig.emulator.recording",
            "writer": WRITER,
            "sessionId": self.session_id,
            "createdAt": self.header["createdAt"],
            "updatedAt": now(),
            "recordingPath": str(self.path.resolve()),
            "rom": self.header["rom"],
            "cgb": self.header["cgb"],
            "limits": self.limits.to_json(),
            "status": self.status,
            "outcome": self.outcome,
            "reason": self.reason,
            "limitReached": self.limit_reached,
            "counts": {
                "actions": self.action_count,
                "samples": self.sample_count,
                "checkpoints": len(self.checkpoints),
                "branches": self.branch_count,
            },
            "framesExecuted": self.frames_executed,
            "executionWallTimeMs": round(self.execution_ms, 3),
            "bytesUsed": self.bytes_used,
            "prefixPin": self.pin,
            "files": {"events": EVENTS, "frames": "frames/", "checkpoints": "checkpoints/", "ledger": LEDGER},
        }
        target = self.path / MANIFEST
        old_size = target.stat().st_size if target.exists() else 0
        data = (json.dumps(manifest, indent=2, sort_keys=True) + "\n").encode()
        replace_durably(target, data)  # and the directory: every name the recording holds so far
        self.bytes_used += len(data) - old_size
