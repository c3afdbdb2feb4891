"""The recorder's files besides the journal: session directory, observation files, the
finalized summary, the compatibility feeds and the outcome-file baseline.

* Session directories and observation files are created exclusively (never overwritten).
* Observation files hold the parsed state as JSON; they are flushed before any row
  references them, and their SHA-256 is of exactly the stored bytes. The bytes are
  ``json.dumps(state, ensure_ascii=False, indent=1, allow_nan=False)`` in UTF-8, made by
  ``observation_text`` (the same text, several times faster: with an indent, ``json`` uses
  its pure-Python encoder, and this is on every step's path).
* ``session.json`` is written to a temporary file, fsynced and renamed into place.
* The root feeds are appended one whole line at a time under ``fcntl.flock``, so several
  sessions sharing a capture root never interleave partial lines.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
from json.encoder import encode_basestring
from typing import Any

from actors.runtime.durable import replace_durably, sync_path
from protocol.journal import encode_row


def create_session_dir(capture_root: str, session_id: str) -> str:
    sessions = os.path.join(capture_root, "sessions")
    os.makedirs(sessions, exist_ok=True)
    path = os.path.join(sessions, session_id)
    os.mkdir(path)  # FileExistsError: never reuse a capture
    os.mkdir(os.path.join(path, "observations"))
    return path


def make_session_durable(capture_root: str, session_id: str) -> None:
    """fsync the directories a new session's names live in: the session directory (its
    ``events.jsonl`` and ``observations/``), ``sessions/`` (the session directory) and the
    capture root (``sessions/``). Without them a power cut may drop the journal's name with
    everything in it, intents already acknowledged included (bench/powercut.py)."""
    session = os.path.join(capture_root, "sessions", session_id)
    for path in (session, os.path.dirname(session), capture_root):
        sync_path(path)


def observation_relpath(session_id: str, number: int) -> str:
    return f"sessions/{session_id}/observations/{number:06d}.json"


def write_observation(capture_root: str, relpath: str, state: dict) -> str:
    """Write the state exclusively, flush it, and return the SHA-256 of the stored bytes."""
    data = observation_text(state).encode("utf-8")
    fd = os.open(os.path.join(capture_root, relpath), os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
    finally:
        os.close(fd)
    return hashlib.sha256(data).hexdigest()


class _Unusual(Exception):
    """A value ``observation_text``'s fast path leaves to ``json`` itself."""


def observation_text(state: Any) -> str:
    """``json.dumps(state, ensure_ascii=False, indent=1, allow_nan=False)``, character for
    character: str, int, float, bool, None, list and dict with str keys are encoded here
    (strings by ``json``'s own C escaper); anything else (a subclass, a tuple, a non-str key,
    NaN or an infinity, a nesting too deep) is handed to ``json.dumps``, which gives the same
    text or raises the same error."""
    try:
        return _indented(state, "\n")
    except (_Unusual, RecursionError):
        return json.dumps(state, ensure_ascii=False, indent=1, allow_nan=False)


def _indented(value: Any, newline: str) -> str:
    """``value`` as JSON at the indent that ``newline`` (a newline and the indent) ends in."""
    kind = type(value)
    if kind is str:
        return encode_basestring(value)
    if kind is dict:
        if not value:
            return "{}"
        inner = newline + " "
        items = []
        for key, item in value.items():
            if type(key) is not str:
                raise _Unusual
            items.append(
                encode_basestring(key)
                + ": "
                + (encode_basestring(item) if type(item) is str else _indented(item, inner))
            )
        return "{" + inner + ("," + inner).join(items) + newline + "}"
    if kind is list:
        if not value:
            return "[]"
        inner = newline + " "
        return (
            "["
            + inner
            + ("," + inner).join([encode_basestring(v) if type(v) is str else _indented(v, inner) for v in value])
            + newline
            + "]"
        )
    if kind is int:
        return int.__repr__(value)
    if kind is float:
        if value - value != 0.0:  # NaN or an infinity: json's own error
            raise _Unusual
        return float.__repr__(value)
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    raise _Unusual


def make_durable(capture_root: str, relpath: str) -> None:
    """fsync an observation file and its directory (when it is stored: before any intent cites it)."""
    path = os.path.join(capture_root, relpath)
    sync_path(path)
    sync_path(os.path.dirname(path))


def write_json_atomic(path: str, value: Any) -> None:
    replace_durably(path, (json.dumps(value, ensure_ascii=False, indent=2, sort_keys=True) + "\n").encode("utf-8"))


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


def make_feeds_durable(capture_root: str) -> None:
    """fsync the root feeds and the capture root's entries (at a session's finalization): a
    finished session's feed lines, and the feeds' names, survive a power cut. Lines appended
    since are not durable until the next finalization in this root (docs/journal.md)."""
    for name in ("decisions.jsonl", "sessions.jsonl"):
        try:
            sync_path(os.path.join(capture_root, name))
        except FileNotFoundError:
            continue
    sync_path(capture_root)


def list_outcome_dir(path: str | None) -> list[str] | None:
    if not path:
        return None
    return sorted(os.listdir(path))
