"""Read a recording directory without PyBoy: status, paged export, verification.

Works on live, finalized, interrupted (writer killed) and restarted recordings alike, since
it derives everything from the verified journal plus ``recording.json``. This module must
not import PyBoy (it is used after close and from tools that never load a ROM).
"""

from __future__ import annotations

import fcntl
import json
import os
import stat
from dataclasses import dataclass, field
from pathlib import Path

from . import journal as j
from .errors import InvalidOption, RecordingCorrupt
from .frames import decode_rgba, rgba_sha256
from .limits import MANIFEST

EVENTS = "events.jsonl"
LEDGER = "quota-ledger.jsonl"
LOCK = ".writer.lock"
EXPORT_DEFAULT_LIMIT = 64
EXPORT_MAX_LIMIT = 4096
EVIDENCE_MAX = 32
FINAL_STATUSES = ("stopped", "failed", "cancelled")


@dataclass
class Summary:
    """Aggregates over a journal, shared by the reader and a resuming writer."""

    actions: list[dict] = field(default_factory=list)  # normalized inputs in journal order
    samples: list[dict] = field(default_factory=list)  # retained evidence in journal order
    checkpoints: dict[str, dict] = field(default_factory=dict)
    branches: list[dict] = field(default_factory=list)
    frames_executed: int = 0
    execution_ms: float = 0.0
    branch_id: str = "branch-0001"
    action_index: int = 0  # last action index on the current branch
    frame: int = 0  # last frame on the current branch
    branch_start: tuple[int, int] = (0, 0)  # (actionIndex, frame) where the current branch began
    stop: dict | None = None
    lost_intervals: list[dict] = field(default_factory=list)


def summarize(events: list[dict]) -> Summary:
    s = Summary()
    completed = {}
    for ev in events:
        kind = ev["kind"]
        if kind == j.HEADER:
            s.branch_id = ev.get("branchId", s.branch_id)
        elif kind == j.INPUT:
            s.actions.append(dict(ev))
            s.frames_executed += ev["frames"]
            s.action_index, s.frame = ev["actionIndex"], ev["toFrame"]
        elif kind == j.STEPPED:
            completed[(ev["branchId"], ev["actionIndex"])] = True
            s.execution_ms += ev.get("executionMs", 0.0)
        elif kind == j.OBSERVATION:
            s.execution_ms += ev.get("executionMs", 0.0)
        elif kind == j.SAMPLE:
            s.samples.append(ev)
        elif kind == j.CHECKPOINT:
            s.checkpoints[ev["checkpointId"]] = ev
            s.execution_ms += ev.get("executionMs", 0.0)
        elif kind == j.BRANCH:
            s.branches.append(ev)
            s.branch_id = ev["branchId"]
            s.action_index, s.frame = ev["fromActionIndex"], ev["fromFrame"]
            s.branch_start = (s.action_index, s.frame)
            s.execution_ms += ev.get("executionMs", 0.0)
        elif kind == j.LOST_INTERVAL:
            s.lost_intervals.append(ev)
        elif kind == j.STOP:
            s.stop = ev
    for action in s.actions:
        action["completed"] = completed.get((action["branchId"], action["actionIndex"]), False)
    return s


def writer_alive(path: Path) -> bool:
    """True when a live writer holds the recording's lock (never creates the lock file)."""
    try:
        fd = os.open(path / LOCK, os.O_RDONLY)
    except FileNotFoundError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        return False
    except BlockingIOError:
        return True
    finally:
        os.close(fd)


def _action_view(ev: dict) -> dict:
    keys = (
        "branchId",
        "actionIndex",
        "buttons",
        "pressed",
        "released",
        "frames",
        "fromFrame",
        "toFrame",
        "samplesRequested",
        "completed",
    )
    return {k: ev.get(k) for k in keys}


def _sample_view(ev: dict) -> dict:
    keys = ("branchId", "actionIndex", "frame", "rgbaSha256", "png", "pngSha256", "requested", "omitted")
    return {k: ev[k] for k in keys if k in ev}


def export_page(summary: Summary, action_offset: int = 0, limit: int = EXPORT_DEFAULT_LIMIT) -> dict:
    """One bounded page of normalized inputs plus the latest min(limit, 32) evidence samples."""
    if isinstance(action_offset, bool) or not isinstance(action_offset, int) or action_offset < 0:
        raise InvalidOption("actionOffset", action_offset, "an integer >= 0")
    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= EXPORT_MAX_LIMIT:
        raise InvalidOption("limit", limit, f"an integer 1..{EXPORT_MAX_LIMIT}")
    action_count, evidence_count = len(summary.actions), len(summary.samples)
    page = summary.actions[action_offset : action_offset + limit]
    end = action_offset + len(page)
    evidence_size = min(limit, EVIDENCE_MAX)
    evidence = summary.samples[-evidence_size:] if evidence_size else []
    return {
        "actionOffset": action_offset,
        "limit": limit,
        "actions": [_action_view(a) for a in page],
        "nextActionOffset": end if end < action_count else None,
        "actionCount": action_count,
        "evidence": [_sample_view(s) for s in evidence],
        "evidenceCount": evidence_count,
        "truncation": {
            "actionsBefore": min(action_offset, action_count),
            "actionsAfter": action_count - end if end < action_count else 0,
            "evidenceOmitted": evidence_count - len(evidence),
            "truncated": len(page) < action_count or len(evidence) < evidence_count,
        },
    }


class RecordingReader:
    """Read-only view of one recording directory."""

    def __init__(self, path: Path | str):
        self.path = Path(path)
        try:
            self.manifest = json.loads((self.path / MANIFEST).read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise RecordingCorrupt(self.path, f"unreadable {MANIFEST} ({exc})") from exc
        self.scan = j.read_journal(self.path / EVENTS)
        self.summary = summarize(self.scan.events)

    @property
    def header(self) -> dict:
        return self.scan.events[0]

    def status(self) -> dict:
        s = self.summary
        if s.stop is not None:
            status = s.stop["status"]
        elif writer_alive(self.path):
            status = "live"
        else:
            status = "interrupted"
        return {
            "recordingPath": str(self.path.resolve()),
            "schema": self.header.get("schema"),
            "sessionId": self.header.get("sessionId"),
            "status": status,
            "finalized": s.stop is not None,
            "outcome": s.stop.get("outcome") if s.stop else None,
            "reason": s.stop.get("reason") if s.stop else None,
            "rom": self.header.get("rom"),
            "cgb": self.header.get("cgb"),
            "limits": self.header.get("limits"),
            "branchId": s.branch_id,
            "actionIndex": s.action_index,
            "frame": s.frame,
            "actionCount": len(s.actions),
            "evidenceCount": len(s.samples),
            "checkpointCount": len(s.checkpoints),
            "branchCount": 1 + len(s.branches),
            "framesExecuted": s.frames_executed,
            "executionWallTimeMs": round(s.execution_ms, 3),
            "lostIntervals": s.lost_intervals,
            "bytesUsed": directory_bytes(self.path) + ledger_outside_bytes(self.path),
            "prefixPin": self.scan.pin,
            "tornTail": self.scan.torn_tail is not None,
        }

    def export(self, action_offset: int = 0, limit: int = EXPORT_DEFAULT_LIMIT) -> dict:
        page = export_page(self.summary, action_offset, limit)
        return {
            "recordingPath": str(self.path.resolve()),
            "sessionId": self.header.get("sessionId"),
            "status": self.status()["status"],
            **page,
        }

    def verify_frames(self) -> list[str]:
        """Problems found re-reading every retained PNG (empty when all verify)."""
        problems = []
        for sample in self.summary.samples:
            if not sample.get("png"):
                continue
            try:
                rgba = decode_rgba((self.path / sample["png"]).read_bytes())
            except OSError as exc:
                problems.append(f"{sample['png']}: {exc.strerror}")
                continue
            if len(rgba) != 160 * 144 * 4 or rgba_sha256(rgba) != sample["rgbaSha256"]:
                problems.append(f"{sample['png']}: pixels do not match rgbaSha256")
        return problems


def directory_bytes(path: Path) -> int:
    """Bytes of every regular file under ``path`` (symlinks are not followed). A live
    recording's frame writer renames temporary files into place while this walks: a file
    that is gone by the time it is measured is skipped (its bytes are under its new name)."""
    total = 0
    for root, _dirs, files in os.walk(path):
        for name in files:
            try:
                info = os.lstat(os.path.join(root, name))
            except FileNotFoundError:
                continue
            if stat.S_ISREG(info.st_mode):
                total += info.st_size
    return total


def ledger_outside_bytes(path: Path) -> int:
    """Derived outputs charged in the ledger that live outside the recording directory."""
    total = 0
    try:
        lines = (path / LEDGER).read_text(encoding="utf-8").splitlines()
    except OSError:
        return 0
    for line in lines:
        try:
            entry = json.loads(line)
        except ValueError:
            continue
        if entry.get("kind") == "derived" and entry.get("outside"):
            total += int(entry.get("bytes", 0))
    return total
