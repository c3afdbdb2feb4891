"""Frame evidence: PNG encoding, RGBA hashing and the content-addressed ``frames/`` store.

A frame is named by the SHA-256 of its raw 160x144 RGBA pixels (``rgbaSha256``), so an
identical picture is stored once: ``frames/<rgbaSha256>.png``. The PNG's own SHA-256 is
recorded too, and :func:`decode_rgba` lets a reader check that the PNG really holds the
recorded pixels.
"""

from __future__ import annotations

import hashlib
import io
import os
import struct
import zlib
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

import numpy as np
from PIL import Image

from actors.runtime.durable import sync_path

WIDTH, HEIGHT = 160, 144


class PngEncoder:
    """Encodes frames as palette PNGs when they have at most 256 opaque colours (every DMG
    frame, most CGB frames): about twice as fast and a third of the size of RGB. The palette
    of the previous frame is tried first; anything else falls back to RGB/RGBA. Decoding
    always gives back the exact RGBA pixels."""

    def __init__(self):
        self._palette: np.ndarray | None = None

    def _indices(self, pixels: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
        palette = self._palette
        if palette is not None and len(palette) <= 8:  # a DMG frame: a pass per colour is fastest
            idx = np.zeros(pixels.shape, np.uint8)
            covered = 0
            for i, colour in enumerate(palette):
                hit = pixels == colour
                idx[hit] = i
                covered += int(np.count_nonzero(hit))
            if covered == pixels.size:
                return palette, idx
        elif palette is not None:
            idx = np.searchsorted(palette, pixels)
            idx[idx >= len(palette)] = 0
            if np.array_equal(palette[idx], pixels):
                return palette, idx
        palette, idx = np.unique(pixels, return_inverse=True)
        if len(palette) > 256 or np.any(palette.view(np.uint8).reshape(-1, 4)[:, 3] != 255):
            return None
        self._palette = palette
        return palette, idx

    def encode(self, rgba: bytes) -> bytes:
        found = self._indices(np.frombuffer(rgba, np.uint32))
        if found is not None:
            palette, idx = found
            return palette_png(palette.view(np.uint8).reshape(-1, 4)[:, :3].tobytes(), idx)
        buf = io.BytesIO()
        image = Image.frombuffer("RGBA", (WIDTH, HEIGHT), rgba, "raw", "RGBA", 0, 1)
        if image.getextrema()[3] == (255, 255):
            image = image.convert("RGB")
        image.save(buf, "PNG", compress_level=1)
        return buf.getvalue()


PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def _chunk(tag: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + tag + data + struct.pack(">I", zlib.crc32(tag + data))


def palette_png(rgb_palette: bytes, indices: np.ndarray) -> bytes:
    """An 8-bit palette PNG of one frame, written directly (PNG spec: IHDR colour type 3,
    PLTE, one IDAT of unfiltered scanlines, IEND) — several times faster than going through
    PIL for these small images, and decoded by any PNG reader to the same pixels."""
    rows = np.zeros((HEIGHT, WIDTH + 1), np.uint8)  # filter byte 0 (None) before each scanline
    rows[:, 1:] = indices.reshape(HEIGHT, WIDTH)
    header = struct.pack(">IIBBBBB", WIDTH, HEIGHT, 8, 3, 0, 0, 0)
    return b"".join(
        (
            PNG_SIGNATURE,
            _chunk(b"IHDR", header),
            _chunk(b"PLTE", rgb_palette),
            _chunk(b"IDAT", zlib.compress(rows.tobytes(), 1)),
            _chunk(b"IEND", b""),
        )
    )


def decode_rgba(png: bytes) -> bytes:
    """The RGBA pixels of a stored PNG (for verification)."""
    with Image.open(io.BytesIO(png)) as image:
        return image.convert("RGBA").tobytes()


def rgba_sha256(rgba: bytes) -> str:
    return hashlib.sha256(rgba).hexdigest()


class FrameStore:
    """Writes each distinct frame once under ``directory``; remembers what exists.

    File creation is slow on some filesystems, so writes run on one background thread
    (file I/O releases the GIL and overlaps with emulation). ``flush`` waits for them and
    re-raises the first failure; the recording flushes at checkpoints, stop and close.
    """

    def __init__(self, directory: Path):
        self.directory = directory
        directory.mkdir(exist_ok=True)
        self._png_sha: dict[str, str | None] = {p.stem: None for p in directory.glob("*.png")}
        self._pool: ThreadPoolExecutor | None = None
        self._pending: list[Future] = []
        self._unsynced: list[str] = []  # frames stored since the last make_durable

    def relative(self, rgba_hash: str) -> str:
        return f"{self.directory.name}/{rgba_hash}.png"

    def has(self, rgba_hash: str) -> bool:
        return rgba_hash in self._png_sha

    def png_sha256(self, rgba_hash: str) -> str:
        """SHA-256 of the stored PNG (read back once for frames stored by an earlier writer)."""
        known = self._png_sha[rgba_hash]
        if known is None:
            known = hashlib.sha256((self.directory / f"{rgba_hash}.png").read_bytes()).hexdigest()
            self._png_sha[rgba_hash] = known
        return known

    def put(self, rgba_hash: str, png: bytes) -> int:
        """Queue ``png`` for storage under its RGBA hash (no-op if present); return its size."""
        if rgba_hash in self._png_sha:
            return 0
        self._png_sha[rgba_hash] = hashlib.sha256(png).hexdigest()
        if self._pool is None:
            self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="frame-writer")
        self._pending = [f for f in self._pending if not f.done() or f.result() is not None]
        self._pending.append(self._pool.submit(_write_atomically, self.directory, rgba_hash, png))
        self._unsynced.append(f"{rgba_hash}.png")
        return len(png)

    def flush(self) -> None:
        """Wait until every queued frame is on disk (handed to the OS); raise the first write error."""
        pending, self._pending = self._pending, []
        for future in pending:
            future.result()

    def make_durable(self) -> None:
        """``flush``, then make every frame stored since the last call durable: each file, then
        their names with one fsync of the directory (the recording's sync points: checkpoints,
        branches, stop; not every step, which only needs the frames on disk)."""
        self.flush()
        unsynced, self._unsynced = self._unsynced, []
        for name in unsynced:
            try:
                sync_path(str(self.directory / name))
            except FileNotFoundError:  # removed behind the writer's back: the readers report it missing
                continue
        if unsynced:
            sync_path(str(self.directory))

    def close(self) -> None:
        try:
            self.flush()
        finally:
            if self._pool is not None:
                self._pool.shutdown(wait=True)
                self._pool = None


def _write_atomically(directory: Path, rgba_hash: str, png: bytes) -> None:
    path = directory / f"{rgba_hash}.png"
    tmp = directory / f".{rgba_hash}.tmp"
    with open(tmp, "wb") as fh:
        fh.write(png)
    os.replace(tmp, path)
