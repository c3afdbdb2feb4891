"""Find the recording a review or clip request names, without writing anything.

:func:`locate_recording` accepts a recording directory (not a symlink, holding
``events.jsonl`` and ``recording.json``), or an archived recording's original path or direct
archive path, which :func:`.archive.resolve_recording` resolves through its verified mapping
(``MaintenanceRefused`` when the mapping, inventory or journal does not verify).
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from ..recording.errors import IntervalRefused
from ..recording.limits import MANIFEST
from ..recording.reader import EVENTS
from .archive import ARCHIVED, CONTAINER_MAPPING, MAPPING_FILE, Resolved, resolve_recording


def locate_recording(path: str | Path) -> Resolved:
    """Where the recording ``path`` names is now, or :class:`IntervalRefused` naming ``path``."""
    requested = Path(os.path.abspath(path))
    try:
        info = os.lstat(requested)
    except OSError as exc:
        raise IntervalRefused("recordingPath", str(path), f"cannot be examined ({exc.strerror})") from None
    if stat.S_ISLNK(info.st_mode):
        raise IntervalRefused("recordingPath", str(path), "is a symlink; recordings are never read through one")
    if not stat.S_ISDIR(info.st_mode):
        raise IntervalRefused("recordingPath", str(path), "is not a directory")
    archived = os.path.lexists(requested / MAPPING_FILE) or (
        requested.name == ARCHIVED and os.path.lexists(requested.parent / CONTAINER_MAPPING)
    )
    if not archived and not ((requested / EVENTS).is_file() and (requested / MANIFEST).is_file()):
        raise IntervalRefused(
            "recordingPath",
            str(path),
            f"is not a recording directory (no {EVENTS} and {MANIFEST}) nor an archived recording's path",
        )
    resolved = resolve_recording(requested)
    root = resolved.recording_path
    if not (root / EVENTS).is_file() or not (root / MANIFEST).is_file():
        raise IntervalRefused("recordingPath", str(path), f"is not a recording directory (no {EVENTS} and {MANIFEST})")
    return resolved
