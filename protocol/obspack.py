"""A session's observation files packed into one file: ``observations.pack`` beside the journal.

``supervisor capture pack`` writes it for a finished session and removes ``observations/``;
``supervisor capture unpack`` gives the files back, byte for byte. Every reader of an
observation goes through :func:`read_bytes` (or :func:`read_state`), which reads the file when
it is there and the pack otherwise, so verify, audit, coverage, the feeds, the viewer, the
policy's replay and the recorder's resume read packed and unpacked sessions alike. The
journal's rows still pin each observation's SHA-256: a pack proves nothing by itself.

Layout (integers little-endian)::

    b"GRPACK01"                        magic
    segment 0, segment 1, ...          each: zlib of the concatenated files of up to SEGMENT files
    index                              zlib of JSON: {"version": 1, "segments": [[offset, size,
                                       sha256 of the compressed bytes], ...], "files": [[name,
                                       segment, offset in the segment, length, sha256], ...]}
    u64 index offset, u64 index size, b"GRPACK01"   the footer

A damaged pack is reported at what it breaks: ``PackDamaged`` names the segment and the file
asked for (a segment whose bytes do not hash to the index's SHA-256, or do not decompress);
a cut-short pack has no footer and none of it is trusted; an index that does not describe a pack
(its tables malformed, a file in a segment it does not list) is damage found at open.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import struct
import zlib
from collections.abc import Iterable
from typing import Any

PACK = "observations.pack"
DIRNAME = "observations"
MAGIC = b"GRPACK01"
FOOTER = struct.Struct("<QQ8s")
SEGMENT = 1024  # files per segment: one segment is decompressed to read one of its files
LEVEL = 6
VERSION = 1


class PackDamaged(OSError):
    """The pack cannot give this file: ``what`` says why and where."""


def write(path: str, files: Iterable[tuple[str, bytes]], segment: int = SEGMENT) -> dict[str, Any]:
    """Write a pack of ``(name, bytes)`` at ``path`` (not fsynced here); its index."""
    segments: list[list[Any]] = []  # [offset, length, sha256] per segment
    entries: list[list[Any]] = []  # [name, segment, offset, length, sha256] per file
    with open(path, "wb") as fh:
        fh.write(MAGIC)
        batch: list[tuple[str, bytes]] = []

        def flush() -> None:
            raw = b"".join(data for _, data in batch)
            packed = zlib.compress(raw, LEVEL)
            seg, offset = len(segments), 0
            for name, data in batch:
                entries.append([name, seg, offset, len(data), hashlib.sha256(data).hexdigest()])
                offset += len(data)
            segments.append([fh.tell(), len(packed), hashlib.sha256(packed).hexdigest()])
            fh.write(packed)
            batch.clear()

        for name, data in files:
            batch.append((name, data))
            if len(batch) >= segment:
                flush()
        if batch:
            flush()
        index = {"version": VERSION, "segments": segments, "files": entries}
        blob = zlib.compress(json.dumps(index, separators=(",", ":")).encode(), LEVEL)
        at = fh.tell()
        fh.write(blob)
        fh.write(FOOTER.pack(at, len(blob), MAGIC))
    return index


def index_problem(index: dict[str, Any]) -> str | None:
    """What makes a decoded index unusable (its tables' shape, a file in a segment it does not
    list), or None."""
    segments, files = index.get("segments"), index.get("files")
    if not isinstance(segments, list) or not isinstance(files, list):
        return "no segments or files table"
    for n, s in enumerate(segments):
        if not (
            isinstance(s, list)
            and len(s) == 3
            and all(type(v) is int and v >= 0 for v in s[:2])
            and isinstance(s[2], str)
        ):
            return f"segment entry {n}: {s!r}"
    for e in files:
        if not (
            isinstance(e, list)
            and len(e) == 5
            and isinstance(e[0], str)
            and isinstance(e[4], str)
            and all(type(v) is int and v >= 0 for v in e[1:4])
            and e[1] < len(segments)
        ):
            return f"file entry {e!r}"
    return None


class Pack:
    """A pack opened for reading (its index read and checked at open)."""

    def __init__(self, path: str):
        self.path = path
        with open(path, "rb") as fh:
            head = fh.read(len(MAGIC))
            fh.seek(0, os.SEEK_END)
            size = fh.tell()
            if head != MAGIC or size < len(MAGIC) + FOOTER.size:
                raise PackDamaged(f"{path}: not a pack (no {MAGIC!r} header), or cut short")
            fh.seek(size - FOOTER.size)
            at, length, tail = FOOTER.unpack(fh.read(FOOTER.size))
            if tail != MAGIC or at + length > size - FOOTER.size or at < len(MAGIC):
                raise PackDamaged(f"{path}: no footer: the pack was cut short")
            fh.seek(at)
            try:
                index = json.loads(zlib.decompress(fh.read(length)))
            except (zlib.error, ValueError) as exc:
                raise PackDamaged(f"{path}: its index is damaged ({exc})") from None
        if not isinstance(index, dict) or index.get("version") != VERSION:
            version = index.get("version") if isinstance(index, dict) else "?"
            raise PackDamaged(f"{path}: unknown pack version {version}")
        problem = index_problem(index)
        if problem is not None:
            raise PackDamaged(f"{path}: its index does not describe a pack ({problem})")
        self.segments = index["segments"]
        self.files = {e[0]: e for e in index["files"]}
        self.order = [e[0] for e in index["files"]]
        self._segment: tuple[int, bytes] | None = None

    def names(self) -> list[str]:
        return list(self.order)

    def segment(self, n: int, asked: str) -> bytes:
        if self._segment is not None and self._segment[0] == n:
            return self._segment[1]
        offset, size, digest = self.segments[n]
        with open(self.path, "rb") as fh:
            fh.seek(offset)
            packed = fh.read(size)
        if hashlib.sha256(packed).hexdigest() != digest:
            raise PackDamaged(
                f"{os.path.basename(self.path)}: segment {n} (bytes {offset}..{offset + size}) does "
                f"not hash to its index's sha256: {asked} and the other files of that segment "
                "cannot be read"
            )
        try:
            raw = zlib.decompress(packed)
        except zlib.error as exc:
            raise PackDamaged(
                f"{os.path.basename(self.path)}: segment {n} does not decompress ({exc}): {asked} cannot be read"
            ) from None
        self._segment = (n, raw)
        return raw

    def read(self, name: str) -> bytes:
        entry = self.files.get(name)
        if entry is None:
            raise FileNotFoundError(f"{name} is neither in {DIRNAME}/ nor in {os.path.basename(self.path)}")
        _, seg, offset, length, digest = entry
        data = self.segment(seg, name)[offset : offset + length]
        if len(data) != length or hashlib.sha256(data).hexdigest() != digest:
            raise PackDamaged(f"{os.path.basename(self.path)}: {name} does not match its index entry")
        return data


@functools.lru_cache(maxsize=16)
def _open(path: str, mtime_ns: int, size: int) -> Pack:
    return Pack(path)


def open_pack(session_dir: str) -> Pack | None:
    """The session's pack, or None when it has none (opened once per version of the file)."""
    path = os.path.join(session_dir, PACK)
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return None
    return _open(path, st.st_mtime_ns, st.st_size)


def read_bytes(capture_root: str, relpath: str) -> bytes:
    """An observation's bytes by its row's ``path`` (``sessions/<id>/observations/<n>.json``):
    the file, or its entry in the session's pack. ``FileNotFoundError`` when neither has it,
    ``PackDamaged`` when the pack cannot give it."""
    full = os.path.join(capture_root, relpath)
    try:
        with open(full, "rb") as fh:
            return fh.read()
    except FileNotFoundError:
        pack = open_pack(os.path.dirname(os.path.dirname(full)))
        if pack is None:
            raise
        return pack.read(os.path.basename(full))


def read_state(capture_root: str, relpath: str) -> dict[str, Any]:
    state: dict[str, Any] = json.loads(read_bytes(capture_root, relpath))
    return state
