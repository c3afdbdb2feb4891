"""An emulator session's recording on the page: status, checkpoints, branches, retained frames,
and an interval as a contact sheet or a GIF.

The recording is read by its own reader (``actors.emulator.recording.reader.RecordingReader``); the
contact sheet is ``actors.emulator.tools.review.review`` with the contact-sheet layout and the GIF
is ``actors.emulator.tools.clips.preview``: the same code, limits and refusals as ``supervisor
capture review`` and ``capture clip``, and neither writes a file (the sheet and the GIF go
to the browser, not to disk).
"""

from __future__ import annotations

import os
import re

from actors.emulator.recording.errors import EmulatorError
from actors.emulator.recording.reader import RecordingReader
from actors.emulator.tools.clips import preview
from actors.emulator.tools.review import review

from .track import Track

FRAME_NAME = re.compile(r"^[0-9a-f]{64}\.png$")
MAX_SAMPLES = 20000


class Refused(Exception):
    """A request the emulator code refused; ``code`` is its stable code."""

    def __init__(self, code: str, message: str):
        super().__init__(message)
        self.code = code


def recording_dir(track: Track) -> str | None:
    path = os.path.join(track.dir, "recording")
    return path if os.path.isdir(path) else None


def info(track: Track) -> dict:
    """The recording's status, checkpoints, branches and retained samples."""
    path = recording_dir(track)
    if path is None:
        return {"recording": None, "problem": "this session has no recording/ directory"}
    try:
        reader = RecordingReader(path)
    except EmulatorError as exc:
        return {"recording": None, "problem": str(exc)}
    s = reader.summary
    status = reader.status()
    status["recordingPath"] = "recording"
    samples = [
        {
            "frame": x.get("frame"),
            "actionIndex": x.get("actionIndex"),
            "branchId": x.get("branchId"),
            "png": os.path.basename(x["png"]) if x.get("png") else None,
            "seq": x.get("seq"),
        }
        for x in s.samples[:MAX_SAMPLES]
    ]
    return {
        "recording": status,
        "sessionId": reader.header.get("sessionId"),
        "checkpoints": [{"id": k, **_scalars(v)} for k, v in s.checkpoints.items()],
        "branches": [_scalars(b) for b in s.branches],
        "current_branch": s.branch_id,
        "samples": samples,
        "samples_total": len(s.samples),
        "lost_intervals": s.lost_intervals,
    }


def _scalars(event: dict) -> dict:
    """An event's plain values (no nested objects): what a table row shows."""
    return {k: v for k, v in event.items() if isinstance(v, (str, int, float, bool)) or v is None}


def frame_file(track: Track, name: str) -> str | None:
    """The retained PNG ``name`` inside this session's recording, or None."""
    path = recording_dir(track)
    if path is None or not FRAME_NAME.match(name):
        return None
    full = os.path.realpath(os.path.join(path, "frames", name))
    if not full.startswith(os.path.realpath(path) + os.sep) or not os.path.isfile(full):
        return None
    return full


def sheet(track: Track, branch: str, first: int, last: int, images: int) -> tuple[dict, bytes]:
    """A contact sheet of actions ``(first, last]`` of one branch (``review``'s limits)."""
    path = recording_dir(track)
    if path is None:
        raise Refused("no_recording", "this session has no recording")
    try:
        session_id = RecordingReader(path).header.get("sessionId") or ""
        result = review(
            {
                "recordingPath": path,
                "sessionId": session_id,
                "branchId": branch,
                "fromActionIndex": first,
                "toActionIndex": last,
                "maxImages": images,
                "imageLayout": "contact-sheet",
            }
        )
    except EmulatorError as exc:
        raise Refused(getattr(exc, "code", "refused"), str(exc)) from None
    if result.sheet is None:
        reason = (result.metadata.get("contactSheet") or {}).get("reason") or "nothing to compose"
        raise Refused("no_frames", reason)
    return result.metadata, result.sheet


def gif(track: Track, branch: str | None, start: int, end: int) -> tuple[dict, bytes]:
    """The GIF of retained frames ``start..end`` (``clip``'s limits and refusals)."""
    path = recording_dir(track)
    if path is None:
        raise Refused("no_recording", "this session has no recording")
    body = {"recordingPath": path, "outputPath": "not-written.gif", "startFrame": start, "endFrame": end}
    if branch:
        body["branchId"] = branch
    try:
        return preview(body)
    except EmulatorError as exc:
        raise Refused(getattr(exc, "code", "refused"), str(exc)) from None
