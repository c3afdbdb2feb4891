"""``sync(fd)``: make a file's written bytes durable, the one place gamerig asks for it.

Every fsync of the project goes through here: the recorder's intent rows and group commits,
observation files and their directories, emulator recordings, checkpoints, battery saves,
leases, archives and fleet results. On Linux that is ``os.fsync``. On macOS ``fsync`` only
hands the data to the drive, which may keep it in its cache across a power cut; the
platform's ``fcntl(F_FULLFSYNC)`` asks the drive to write it through, so it is used wherever
the platform has it (falling back to ``fsync`` when the file system refuses it, as some
network file systems do). The intent rule, no action without a durable record of it, then
means the same on every system gamerig runs on.
"""

from __future__ import annotations

import os

try:
    import fcntl
except ImportError:  # a system without fcntl is refused at start (supervisor/platform.py)
    fcntl = None  # type: ignore[assignment]


def sync(fd: int) -> None:
    """Make the bytes written to ``fd`` (a file or a directory) durable."""
    full = getattr(fcntl, "F_FULLFSYNC", None) if fcntl is not None else None
    if full is not None:
        try:
            fcntl.fcntl(fd, full)
            return
        except OSError:
            pass  # not supported by this file system: fsync is the best it offers
    os.fsync(fd)


def sync_path(path: str) -> None:
    """``sync`` of the file or directory at ``path`` (a directory: the names it holds)."""
    fd = os.open(path, os.O_RDONLY)
    try:
        sync(fd)
    finally:
        os.close(fd)


def replace_durably(path: str | os.PathLike, data: bytes, *, sync_dir: bool = True) -> None:
    """Replace the file at ``path`` with ``data`` so that a power cut leaves the old file or the
    new one, whole: written beside it as ``.<name>.tmp.<pid>``, made durable, renamed over it,
    and then (``sync_dir``) its directory made durable, so the new name survives too. A caller
    that replaces many files in one directory may pass ``sync_dir=False`` and ``sync_path`` the
    directory once before it relies on them."""
    path = os.fspath(path)
    directory, name = os.path.split(path)
    tmp = os.path.join(directory, f".{name}.tmp.{os.getpid()}")
    with open(tmp, "wb") as fh:
        fh.write(data)
        fh.flush()
        sync(fh.fileno())
    os.replace(tmp, path)
    if sync_dir:
        sync_path(directory or ".")
