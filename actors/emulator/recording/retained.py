"""Retained evidence of a closed or live recording, read without PyBoy and without writing.

Shared by review (:mod:`.review`) and clips (:mod:`.clips`):

* :func:`branch_routes` indexes a verified journal by branch: each branch's normalized
  inputs (by action index), its ``stepped`` completions, its retained samples in frame order,
  its lost intervals, and where it starts (branch-0001 at action 0, frame 0; a restored or
  resumed branch at its checkpoint's action index and frame).
* :func:`verify_sample` re-reads one retained PNG and checks it against the journal: the
  path is the content address ``frames/<rgbaSha256>.png``, a regular file (no symlink), the
  file's SHA-256 equals the recorded ``pngSha256``, the IHDR says 160x144, and the decoded
  pixels hash to the recorded ``rgbaSha256``. Only a ``verified`` frame carries its bytes.
* Native game time: one frame is 70,224 dots of the 4,194,304 Hz clock (:func:`native_ms`).
"""

from __future__ import annotations

import hashlib
import os
import stat
import struct
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path

from . import journal as j
from .frames import HEIGHT, PNG_SIGNATURE, WIDTH, decode_rgba, rgba_sha256

DOTS_PER_FRAME = 70_224
CLOCK_HZ = 4_194_304
FRAME_SECONDS = Fraction(DOTS_PER_FRAME, CLOCK_HZ)  # ≈ 16.742 ms
MAX_PNG_BYTES = 4 * 1024 * 1024  # far above any 160x144 frame

VERIFIED, TAMPERED, MISSING, OMITTED = "verified", "tampered", "missing", "omitted"


def native_ms(frames: int | Fraction) -> float:
    """Milliseconds of native game time for ``frames`` frames, rounded to 1 µs."""
    return round(float(frames * FRAME_SECONDS * 1000), 3)


@dataclass
class BranchRoute:
    """One branch of a recording as the journal retained it."""

    branch_id: str
    start_action: int = 0
    start_frame: int = 0
    parent: str | None = None
    reason: str | None = None
    seq: int = 1  # the line that started the branch
    imported: dict | None = None  # a checkpoint file of another session (its prefix)
    inputs: dict[int, dict] = field(default_factory=dict)  # actionIndex -> input event
    stepped: dict[int, dict] = field(default_factory=dict)  # actionIndex -> stepped event
    samples: list[dict] = field(default_factory=list)  # sample events in journal order
    lost: list[dict] = field(default_factory=list)  # lost-interval events

    def describe(self) -> dict:
        """Where the branch starts and why (for review results)."""
        return {
            "branchId": self.branch_id,
            "startActionIndex": self.start_action,
            "startFrame": self.start_frame,
            "parentBranchId": self.parent,
            "reason": self.reason,
            "importedFrom": self.imported,
        }

    @property
    def last_action(self) -> int:
        return max(self.inputs, default=self.start_action)

    def frame_at(self, action_index: int) -> int:
        """The native frame after ``action_index`` on this branch (its start or that input's end)."""
        if action_index == self.start_action:
            return self.start_frame
        return self.inputs[action_index]["toFrame"]

    def retained(self) -> list[dict]:
        """Samples whose PNG was stored (not omitted by the byte budget), one per frame."""
        return [s for s in self.samples if s.get("png")]


def branch_routes(events: list[dict]) -> dict[str, BranchRoute]:
    """Index journal events by branch (see the module docstring)."""
    routes = {"branch-0001": BranchRoute("branch-0001", seq=events[0]["seq"] if events else 1)}
    for ev in events:
        kind = ev["kind"]
        if kind == j.BRANCH:
            imported = (
                {k: ev.get(k) for k in ("checkpointFile", "fileSha256", "sourceSessionId", "sourceCheckpointId")}
                if ev.get("checkpointFile")
                else None
            )
            routes[ev["branchId"]] = BranchRoute(
                ev["branchId"],
                ev["fromActionIndex"],
                ev["fromFrame"],
                ev.get("parentBranchId"),
                ev.get("reason"),
                ev["seq"],
                imported,
            )
            continue
        route = routes.get(ev.get("branchId", ""))
        if route is None:
            continue
        if kind == j.INPUT:
            route.inputs[ev["actionIndex"]] = ev
        elif kind == j.STEPPED:
            route.stepped[ev["actionIndex"]] = ev
        elif kind == j.SAMPLE:
            route.samples.append(ev)
        elif kind == j.LOST_INTERVAL:
            route.lost.append(ev)
    return routes


@dataclass(frozen=True)
class CheckedFrame:
    """One retained sample after re-reading its PNG. ``data`` is set only when verified."""

    sample: dict
    status: str
    problem: str | None = None
    png_bytes: int | None = None
    width: int | None = None
    height: int | None = None
    actual_png_sha256: str | None = None
    data: bytes | None = None

    @property
    def verified(self) -> bool:
        return self.status == VERIFIED

    def to_json(self, root: Path) -> dict:
        s = self.sample
        out = {
            "frame": s["frame"],
            "actionIndex": s["actionIndex"],
            "branchId": s["branchId"],
            "seq": s["seq"],
            "png": s.get("png"),
            "rgbaSha256": s["rgbaSha256"],
            "pngSha256": s.get("pngSha256"),
            "requested": s.get("requested", False),
            "status": self.status,
            "verified": self.verified,
        }
        if s.get("png"):
            out["path"] = str(root / s["png"])
        if self.png_bytes is not None:
            out.update(bytes=self.png_bytes, width=self.width, height=self.height)
        if self.problem:
            out["problem"] = self.problem
            out["actualPngSha256"] = self.actual_png_sha256
        return out


def png_size(data: bytes) -> tuple[int, int] | None:
    """(width, height) from a PNG's IHDR chunk, or None when the bytes are not a PNG."""
    if len(data) < 24 or not data.startswith(PNG_SIGNATURE) or data[12:16] != b"IHDR":
        return None
    return struct.unpack(">II", data[16:24])


def _read_regular(path: Path) -> bytes:
    """The bytes of a regular file that is not a symlink (``OSError`` otherwise)."""
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise OSError(f"{path.name} is not a regular file")
        if info.st_size > MAX_PNG_BYTES:
            raise OSError(f"{path.name} has {info.st_size} bytes (more than {MAX_PNG_BYTES})")
        with os.fdopen(os.dup(fd), "rb") as fh:
            return fh.read()
    finally:
        os.close(fd)


def verify_sample(root: Path, sample: dict) -> CheckedFrame:
    """Re-read one sample's PNG under ``root`` and check it (see the module docstring)."""
    png = sample.get("png")
    if not png:
        return CheckedFrame(sample, OMITTED, f"not stored ({sample.get('omitted', 'no png recorded')})")
    if png != f"frames/{sample['rgbaSha256']}.png":
        return CheckedFrame(sample, TAMPERED, f"png path {png!r} is not the content address of its rgbaSha256")
    if (root / "frames").is_symlink():
        return CheckedFrame(sample, TAMPERED, "frames/ is a symlink (recording storage is never redirected)")
    try:
        data = _read_regular(root / png)
    except OSError as exc:
        problem = "file is absent" if isinstance(exc, FileNotFoundError) else f"unreadable: {exc.strerror or exc}"
        return CheckedFrame(sample, MISSING if isinstance(exc, FileNotFoundError) else TAMPERED, problem)
    digest = hashlib.sha256(data).hexdigest()
    size = png_size(data)
    base = {"png_bytes": len(data), "actual_png_sha256": digest}
    if size is not None:
        base.update(width=size[0], height=size[1])
    if digest != sample.get("pngSha256"):
        return CheckedFrame(sample, TAMPERED, "file SHA-256 differs from the recorded pngSha256", **base)
    if size != (WIDTH, HEIGHT):
        return CheckedFrame(sample, TAMPERED, f"PNG dimensions {size} are not {WIDTH}x{HEIGHT}", **base)
    try:
        pixels = decode_rgba(data)
    except (OSError, ValueError) as exc:
        return CheckedFrame(sample, TAMPERED, f"PNG does not decode ({exc})", **base)
    if rgba_sha256(pixels) != sample["rgbaSha256"]:
        return CheckedFrame(sample, TAMPERED, "decoded pixels differ from the recorded rgbaSha256", **base)
    return CheckedFrame(sample, VERIFIED, None, data=data, **base)


def gaps(frames: list[int], low: int, high: int) -> list[dict]:
    """Maximal runs of native frames in ``[low, high]`` with no retained frame in ``frames``."""
    out, expect = [], low
    for frame in sorted({f for f in frames if low <= f <= high}):
        if frame > expect:
            out.append({"fromFrame": expect, "toFrame": frame - 1, "frames": frame - expect})
        expect = frame + 1
    if expect <= high:
        out.append({"fromFrame": expect, "toFrame": high, "frames": high - expect + 1})
    return out
