"""The authorized workspace: the one directory tree an MCP server reads ROMs from and writes
artifacts into (the Slay the Spire 2 server only writes its captures, under ``artifacts/sts2/``).

Every path an agent passes is resolved against the workspace root the server was started
with (``supervisor mcp --workspace DIR``; relative paths are taken from it) and refused with
:class:`.errors.PathRefused`, naming the argument and the reason, when

* it is empty, holds a NUL byte or has a ``..`` component;
* it is not inside the root (absolute paths elsewhere, ``~``, another mount ...);
* any existing component from the root down is a symlink (so nothing is reached or written
  through a link out of the tree, and nothing inside is renamed through one);
* it is not where that kind of file may be: artifacts go only to ``artifacts/playtests/``
  (attempts: captures and recordings), ``artifacts/clips/`` (GIFs; a clip may also go inside
  its own recording) and ``artifacts/recording-archives/`` (written by the archive itself).

The checks are lexical plus ``lstat`` on each existing component; the root itself is taken
through ``realpath`` once, at start.
"""

from __future__ import annotations

import datetime as dt
import fcntl
import os
import secrets
import stat
from pathlib import Path

from actors.emulator.recording.errors import AdmissionRefused
from actors.emulator.recording.limits import PARENT_MAX_RECORDINGS, PARENT_MAX_RESERVED_BYTES, reserved_by

from .errors import PathRefused

PLAYTESTS = Path("artifacts/playtests")
CLIPS = Path("artifacts/clips")
ARCHIVES = Path("artifacts/recording-archives")
MAX_ROM_BYTES = 8 * 1024 * 1024  # the largest Game Boy cartridges are 8 MiB


class Workspace:
    def __init__(self, root: str | Path):
        real = Path(os.path.realpath(root))
        if not real.is_dir():
            raise PathRefused("--workspace", str(root), "is not a directory")
        self.root = real

    # -- resolving ------------------------------------------------------------------------
    def resolve(self, argument: str, value: object) -> Path:
        """The absolute path of ``value`` inside the root, with no symlink on the way."""
        if not isinstance(value, str) or not value or "\x00" in value:
            raise PathRefused(argument, value, "a path must be a non-empty string")
        if ".." in Path(value).parts:
            raise PathRefused(argument, value, "'..' components are not allowed")
        path = Path(value) if os.path.isabs(value) else self.root / value
        path = Path(os.path.normpath(path))
        if path == self.root or not path.is_relative_to(self.root):
            raise PathRefused(argument, value, f"it is not inside the workspace {self.root}")
        current = self.root
        for part in path.relative_to(self.root).parts:
            current = current / part
            try:
                info = os.lstat(current)
            except FileNotFoundError:
                break
            if stat.S_ISLNK(info.st_mode):
                raise PathRefused(
                    argument, value, f"{current} is a symlink; the workspace is never left or entered through one"
                )
        return path

    def under(self, argument: str, value: object, *areas: Path) -> Path:
        """``resolve``, and the path must lie below one of ``areas`` (relative to the root)."""
        path = self.resolve(argument, value)
        if not any(path.is_relative_to(self.root / area) and path != self.root / area for area in areas):
            where = " or ".join(f"{self.root / area}/" for area in areas)
            raise PathRefused(argument, value, f"only {where} may receive it")
        return path

    # -- what the tools need --------------------------------------------------------------
    def rom(self, value: object) -> Path:
        """A ROM to read: an existing regular file inside the root, at most 8 MiB."""
        path = self.resolve("romPath", value)
        try:
            info = os.lstat(path)
        except FileNotFoundError:
            raise PathRefused("romPath", value, f"{path} does not exist") from None
        if not stat.S_ISREG(info.st_mode):
            raise PathRefused("romPath", value, f"{path} is not a regular file")
        if info.st_size > MAX_ROM_BYTES:
            raise PathRefused(
                "romPath", value, f"{info.st_size:,} bytes is larger than any Game Boy ROM ({MAX_ROM_BYTES:,})"
            )
        return path

    def attempt_target(self, value: object | None) -> Path:
        """Where a new attempt (its capture and recording) goes: ``value`` (below
        ``artifacts/playtests/``), or a new unique directory there. Creates nothing."""
        if value is None:
            stamp = dt.datetime.now(dt.UTC).strftime("%Y%m%dT%H%M%SZ")
            return self.root / PLAYTESTS / f"{stamp}-{secrets.token_hex(4)}"
        return self.under("recording.outputPath", value, PLAYTESTS)

    def create_attempt(self, path: Path, max_bytes: int | None) -> Path:
        """Create the attempt directory ``path`` (unused, or an empty directory). A recorded
        attempt (``max_bytes``: its budget) is admitted into its recording parent first
        (:func:`admit`: at most 64 recordings and 1 GiB reserved there), under an exclusive
        lock on the parent."""
        self.make_dirs(path.parent, "recording.outputPath")
        fd = os.open(path.parent, os.O_RDONLY | os.O_DIRECTORY)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            if max_bytes is not None:
                admit(path.parent, max_bytes)
            try:
                os.mkdir(path, 0o755)
            except FileExistsError:
                info = os.lstat(path)
                if not stat.S_ISDIR(info.st_mode) or any(os.scandir(path)):
                    raise PathRefused(
                        "recording.outputPath",
                        str(path),
                        "it exists and is not an empty directory (attempts are never written over)",
                    ) from None
        finally:
            os.close(fd)
        return path

    def make_dirs(self, path: Path, argument: str = "path") -> None:
        """Create ``path`` and its missing parents below the root, refusing symlinks."""
        current = self.root
        for part in path.relative_to(self.root).parts:
            current = current / part
            try:
                os.mkdir(current, 0o755)
            except FileExistsError:
                mode = os.lstat(current).st_mode
                if stat.S_ISLNK(mode):
                    raise PathRefused(
                        argument, str(path), f"{current} is a symlink; artifacts are never redirected"
                    ) from None
                if not stat.S_ISDIR(mode):
                    raise PathRefused(argument, str(path), f"{current} is not a directory") from None

    def recording(self, value: object, argument: str = "recordingPath") -> Path:
        """A recording to read or maintain: inside the root, reached through no symlink."""
        return self.resolve(argument, value)

    def clip_output(self, value: object, recording: Path) -> Path:
        """A clip's output: below ``artifacts/clips/`` or inside its own recording."""
        path = self.resolve("outputPath", value)
        if path.is_relative_to(recording) and path != recording:
            return path
        path = self.under("outputPath", value, CLIPS)
        self.make_dirs(self.root / CLIPS, "outputPath")
        return path


def admit(parent: Path, max_bytes: int) -> None:
    """Refuse a new recorded attempt under ``parent`` (``artifacts/playtests/``, or the
    directory an ``outputPath`` names) when 64 attempts there already hold a recording, or
    when their reserved ``maxBytes`` plus ``max_bytes`` would pass 1 GiB
    (``admission-refused``). An archived recording leaves a mapping, not a ``recording.json``:
    its reservation is released. Old attempts are never pruned."""
    held = []
    if not parent.is_dir():
        return
    for attempt in parent.iterdir():
        if attempt.is_dir() and not attempt.is_symlink():
            held += [m.parent for m in attempt.glob("sessions/*/recording/recording.json")]
    if len(held) >= PARENT_MAX_RECORDINGS:
        raise AdmissionRefused(parent, "recorded attempts", len(held), 1, PARENT_MAX_RECORDINGS)
    reserved = sum(reserved_by(rec) for rec in held)
    if reserved + max_bytes > PARENT_MAX_RESERVED_BYTES:
        raise AdmissionRefused(parent, "reserved bytes", reserved, max_bytes, PARENT_MAX_RESERVED_BYTES)
