"""The recorder's files besides the journal: session directory, observation files, the
finalized summary, the compatibility feeds and the outcome-file baseline.

* Session directories and observation files are created exclusively (never overwritten).
* Observation files hold the parsed state as JSON; they are flushed before any row
  references them, and their SHA-256 is of exactly the stored bytes.
* ``session.json`` is written to a temporary file, fsynced and renamed into place.
* The root feeds are appended one whole line at a time under ``fcntl.flock``, so several
  sessions sharing a capture root never interleave partial lines.
"""
from __future__ import annotations

import fcntl
import hashlib
import json
import os
from typing import Any

from protocol.journal import encode_row


def create_session_dir(capture_root: str, session_id: str) -> str:
    sessions = os.path.join(capture_root, "sessions")
    os.makedirs(sessions, exist_ok=True)
    path = os.path.join(sessions, session_id)
    os.mkdir(path)  # FileExistsError: never reuse a capture
    os.mkdir(os.path.join(path, "observations"))
    return path


def observation_relpath(session_id: str, number: int) -> str:
    return f"sessions/{session_id}/observations/{number:06d}.json"


def write_observation(capture_root: str, relpath: str, state: dict) -> str:
    """Write the state exclusively, flush it, and return the SHA-256 of the stored bytes."""
    data = json.dumps(state, ensure_ascii=False, indent=1, allow_nan=False).encode("utf-8")
    with open(os.path.join(capture_root, relpath), "xb") as fh:
        fh.write(data)
        fh.flush()
    return hashlib.sha256(data).hexdigest()


def make_durable(capture_root: str, relpath: str) -> None:
    """fsync an observation file and its directory (when it is stored: before any intent cites it)."""
    path = os.path.join(capture_root, relpath)
    for target, flags in ((path, os.O_RDONLY), (os.path.dirname(path), os.O_RDONLY)):
        fd = os.open(target, flags)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def write_json_atomic(path: str, value: Any) -> None:
    tmp = f"{path}.tmp.{os.getpid()}"
    with open(tmp, "w", encoding="utf-8") as fh:
        json.dump(value, fh, ensure_ascii=False, indent=2, sort_keys=True)
        fh.write("\n")
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, path)
    dfd = os.open(os.path.dirname(path) or ".", os.O_RDONLY)
    try:
        os.fsync(dfd)
    finally:
        os.close(dfd)


def append_feed(path: str, row: dict) -> None:
    """Append one whole line under an exclusive lock."""
    line = encode_row(row) + b"\n"
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        try:
            os.write(fd, line)
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)


def list_outcome_dir(path: str | None) -> list[str] | None:
    if not path:
        return None
    return sorted(os.listdir(path))
