"""An emulator recording's retained frames (``supervisor capture frames PATH`` prints them).

``listing`` gives the frames ``capture clip`` can start and end on and the action indices
``capture review`` takes: branch, native frame, action index and the PNG inside the
recording, then the checkpoints and branches. ``recording_dir`` resolves the PATH frames,
review and clip take: a recording directory or a gamerig session directory holding
``recording/``. Reads only (``actors.emulator.recording.reader``).
"""

from __future__ import annotations

from pathlib import Path

from actors.emulator.recording.limits import MANIFEST
from actors.emulator.recording.reader import RecordingReader


def recording_dir(path: str) -> str:
    """PATH itself, or ``PATH/recording`` when PATH is a gamerig session directory."""
    p = Path(path)
    if not (p / MANIFEST).exists() and (p / "recording" / MANIFEST).is_file():
        return str(p / "recording")
    return path


def listing(path: str, branch: str | None = None) -> dict:
    reader = RecordingReader(recording_dir(path))
    s = reader.summary
    frames = [
        {
            "branchId": x.get("branchId"),
            "frame": x.get("frame"),
            "actionIndex": x.get("actionIndex"),
            "png": x.get("png"),
        }
        for x in s.samples
        if x.get("png") and (branch is None or x.get("branchId") == branch)
    ]
    branches = sorted({x.get("branchId") for x in s.samples} | {b.get("branchId") for b in s.branches} | {s.branch_id})
    return {
        "recordingPath": str(reader.path),
        "sessionId": reader.header.get("sessionId"),
        "status": reader.status()["status"],
        "branches": branches,
        "frames": frames,
        "checkpoints": [
            {
                "checkpointId": k,
                "frame": v.get("frame"),
                "actionIndex": v.get("actionIndex"),
                "branchId": v.get("branchId"),
            }
            for k, v in s.checkpoints.items()
        ],
        "sampleEveryFrames": (reader.header.get("limits") or {}).get("sampleEveryFrames"),
    }
