"""Find the recording directory a review or clip request names, without writing anything.

:func:`locate_recording` accepts a recording directory (not a symlink, holding
``events.jsonl`` and ``recording.json``). The archive engineer's verified mapping (an archived
recording's original path) is resolved here once :mod:`.archive` provides it.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from .errors import IntervalRefused
from .limits import MANIFEST
from .reader import EVENTS


def locate_recording(path: str | Path) -> Path:
    """The absolute recording directory for ``path`` or :class:`IntervalRefused` naming it."""
    root = Path(os.path.abspath(path))
    try:
        info = os.lstat(root)
    except OSError as exc:
        raise IntervalRefused("recordingPath", str(path), f"cannot be examined ({exc.strerror})") from None
    if stat.S_ISLNK(info.st_mode):
        raise IntervalRefused("recordingPath", str(path), "is a symlink; recordings are never read through one")
    if not stat.S_ISDIR(info.st_mode):
        raise IntervalRefused("recordingPath", str(path), "is not a directory")
    if not (root / EVENTS).is_file() or not (root / MANIFEST).is_file():
        raise IntervalRefused("recordingPath", str(path), f"is not a recording directory (no {EVENTS} "
                              f"and {MANIFEST})")
    return root
