"""Checkpoint files: an opaque, self-checking container around a PyBoy save state.

Layout of ``checkpoints/<id>.ckpt``::

    b"GAMERIG-CKPT\\x01\\n" | u32 big-endian header length | canonical JSON header | zlib(state)

The header carries the identity the state is bound to (exact ROM SHA-256, active CGB mode,
PyBoy version, protocol version, implementation hash — see :mod:`.identity`) plus where it
was taken (frame, branch, action index, prefix pin) and the state's SHA-256 and length.

Refusals, in the order they are checked: unreadable or inconsistent bytes →
:class:`CheckpointDamaged`; ROM or CGB mode differs → :class:`CheckpointIncompatible`;
PyBoy, protocol or implementation differs → :class:`CheckpointStale`. :func:`load` then
checks the file against the journal's recorded hash (:class:`CheckpointTampered`), and the
session that the state reloads byte-identical in a fresh PyBoy.

In a recording, :func:`store` writes a checkpoint (its room checked, its bytes charged) and
:func:`load` finds one by id (or takes a file of another session) and reads it back checked.
"""

from __future__ import annotations

import hashlib
import json
import struct
import zlib
from pathlib import Path
from typing import TYPE_CHECKING

from actors.runtime.durable import replace_durably

from ..recording.errors import (
    CheckpointDamaged,
    CheckpointIncompatible,
    CheckpointNotFound,
    CheckpointStale,
    CheckpointTampered,
)
from ..recording.journal import canonical
from ..recording.results import CheckpointInfo

if TYPE_CHECKING:  # only named in annotations: the profile check imports this module, and the
    # writer brings the frame encoder (Pillow, numpy) that a supervisor never needs
    from ..recording.writer import Recording

MAGIC = b"GAMERIG-CKPT\x01\n"
SUFFIX = ".ckpt"
_IDENTITY_FIELDS = ("romSha256", "cgb")
_VERSION_FIELDS = ("pyboyVersion", "protocolVersion", "implementationHash")


def encode(header: dict, state: bytes) -> bytes:
    """Container bytes for ``state``; fills in the state's hash and length."""
    header = {**header, "stateSha256": hashlib.sha256(state).hexdigest(), "stateBytes": len(state)}
    head = canonical(header)
    return MAGIC + struct.pack(">I", len(head)) + head + zlib.compress(state, 6)


def decode(data: bytes, source: object) -> tuple[dict, bytes]:
    """(header, state) from container bytes, or :class:`CheckpointDamaged`."""
    if not data.startswith(MAGIC):
        raise CheckpointDamaged(source, "not a gamerig checkpoint (bad magic)")
    at = len(MAGIC)
    if len(data) < at + 4:
        raise CheckpointDamaged(source, "truncated before the header")
    (length,) = struct.unpack(">I", data[at : at + 4])
    try:
        header = json.loads(data[at + 4 : at + 4 + length])
        state = zlib.decompress(data[at + 4 + length :])
    except (ValueError, zlib.error) as exc:
        raise CheckpointDamaged(source, f"unreadable header or state ({exc})") from exc
    if not isinstance(header, dict) or not isinstance(header.get("identity"), dict):
        raise CheckpointDamaged(source, "header has no identity")
    if len(state) != header.get("stateBytes") or hashlib.sha256(state).hexdigest() != header.get("stateSha256"):
        raise CheckpointDamaged(source, "state bytes do not match the header's length and sha256")
    return header, state


def check_identity(header: dict, expected: dict, source: object) -> None:
    """Refuse a checkpoint whose identity differs from ``expected`` (see module docstring)."""
    found = header["identity"]
    for name in _IDENTITY_FIELDS:
        if found.get(name) != expected[name]:
            raise CheckpointIncompatible(source, name, expected[name], found.get(name))
    for name in _VERSION_FIELDS:
        if found.get(name) != expected[name]:
            raise CheckpointStale(source, name, expected[name], found.get(name))


def write(directory: Path, checkpoint_id: str, data: bytes) -> Path:
    """Write a checkpoint file atomically and durably; return its path."""
    directory.mkdir(exist_ok=True)
    path = directory / f"{checkpoint_id}{SUFFIX}"
    replace_durably(path, data)  # its name too: the journal row that names it is fsynced next
    return path


def read(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except OSError as exc:
        raise CheckpointDamaged(path, f"cannot read ({exc.strerror})") from exc


def store(rec: Recording, header: dict, state: bytes) -> CheckpointInfo:
    """Write the checkpoint ``header`` describes into the recording's ``checkpoints/`` (room
    checked first, its bytes charged); what the journal's ``checkpoint`` row says of it."""
    data = encode(header, state)
    rec.ensure_room(len(data) + 2 * 640)
    path = write(rec.checkpoint_dir, header["checkpointId"], data)
    rec.charge(len(data))
    return CheckpointInfo(
        header["checkpointId"],
        f"checkpoints/{path.name}",
        header["frame"],
        header["branchId"],
        header["actionIndex"],
        header["label"],
        header["automatic"],
        hashlib.sha256(data).hexdigest(),
        len(data),
    )


def load(rec: Recording | None, checkpoint: str | Path, expected: dict) -> tuple[dict, bytes, dict | None, str]:
    """(header, state, journal row, file SHA-256) of ``checkpoint``: an id of the recording's
    (``CheckpointNotFound`` without it; checked against the row's hash), or a file path (no
    row: None). Its identity is checked against ``expected``; a recording must be live."""
    event = None
    if isinstance(checkpoint, Path):
        path = checkpoint
        if rec is not None:
            rec.require_live("restore a checkpoint")
    else:
        if rec is None or checkpoint not in rec.checkpoints:
            raise CheckpointNotFound(str(checkpoint))
        rec.require_live("restore a checkpoint")
        event = rec.checkpoints[checkpoint]
        path = rec.path / event["path"]
    data = read(path)
    header, state = decode(data, checkpoint)
    check_identity(header, expected, checkpoint)
    file_sha = hashlib.sha256(data).hexdigest()
    if event is not None and file_sha != event["fileSha256"]:
        raise CheckpointTampered(checkpoint, event["fileSha256"], file_sha)
    return header, state, event, file_sha
