"""The frames a step captures: where it samples, and the pictures it grabs there.

* :func:`sample_points`: the frames of a step to capture (the requested samples, evenly
  spaced with the endpoint, and with a recording every frame its ``sampleEveryFrames`` retains).
* :class:`FrameSampler`: runs a step's frames on the machine, grabbing the picture at each
  sample point; hashes a new picture on a helper thread while the emulation goes on; stores its
  PNG in the recording and journals a ``sample`` row for it; keeps the recording's recent
  frames (what ``EmulatorSession.status`` lists).
"""

from __future__ import annotations

from collections import deque
from concurrent.futures import Future, ThreadPoolExecutor

from ..recording import journal as j
from ..recording.frames import PngEncoder, rgba_sha256
from ..recording.results import Sample
from ..recording.writer import Recording
from .machine import Machine


def sample_points(start: int, frames: int, samples: int, every: int | None) -> tuple[list[int], set[int]]:
    """Sorted frames to capture in (start, start+frames], and which were requested.

    ``samples`` requested points are evenly spaced and always include the endpoint; a
    recording also retains every frame divisible by ``every``.
    """
    requested = {start + (i * frames) // samples for i in range(1, samples + 1)} if samples else set()
    points = set(requested)
    if every:
        first = (start // every + 1) * every
        points.update(range(first, start + frames + 1, every))
    return sorted(points), requested


class FrameSampler:
    """The pictures one session's steps capture. Kept across steps: the last picture and its
    digest (a repeated picture is not hashed again), the recent frames, the hash thread."""

    def __init__(self, png: PngEncoder, recent_frames: int):
        self.png = png
        self.recent: deque = deque(maxlen=recent_frames)
        self._last_rgba, self._last_digest = b"", ""
        self._hasher: ThreadPoolExecutor | None = None

    def run(
        self,
        machine: Machine,
        rec: Recording | None,
        branch_id: str,
        start: int,
        frames: int,
        points: list[int],
        requested: set[int],
        action: int,
    ) -> list[Sample]:
        """Run the frames, grabbing the picture at each sample point. A new picture's SHA-256
        is computed on a helper thread while the emulation goes on (hashlib releases the GIL),
        and the samples are recorded, in frame order, once the frames have run."""
        at, grabbed, previous = start, [], self._last_rgba
        for point in points:
            machine.run(point - at)
            at = point
            rgba = machine.rgba()
            # most samples repeat the previous picture: no hash (None: the previous digest)
            grabbed.append((point, rgba, None if rgba == previous else self._hash_async(rgba)))
            previous = rgba
        if at < start + frames:
            machine.run(start + frames - at)
        out = []
        for point, rgba, pending in grabbed:
            digest = self._last_digest if pending is None else pending.result()
            self._last_rgba, self._last_digest = rgba, digest  # always a matching pair
            sample = self._capture(rec, branch_id, point, action, point in requested, rgba, digest)
            if sample.requested:
                out.append(sample)
        return out

    def close(self) -> None:
        """Stop the hash thread (after the hashes it was given)."""
        if self._hasher is not None:
            self._hasher.shutdown(wait=True)

    def _hash_async(self, rgba: bytes) -> Future:
        if self._hasher is None:
            self._hasher = ThreadPoolExecutor(max_workers=1, thread_name_prefix="frame-hash")
        return self._hasher.submit(rgba_sha256, rgba)

    def _capture(
        self, rec: Recording | None, branch_id: str, frame: int, action: int, requested: bool, rgba: bytes, digest: str
    ) -> Sample:
        png = self.png.encode(rgba) if requested or (rec and not rec.frames.has(digest)) else None
        if rec is None:
            return Sample(frame, digest, requested, png=png)
        stored = rec.store_frame(digest, png) if png is not None else rec.frames.has(digest)
        path = rec.frames.relative(digest) if stored else None
        png_sha = rec.frames.png_sha256(digest) if stored else None
        event = {
            "branchId": branch_id,
            "actionIndex": action,
            "frame": frame,
            "rgbaSha256": digest,
            "png": path,
            "pngSha256": png_sha,
            "requested": requested,
        }
        if not stored:
            event["omitted"] = "maxBytes"
        rec.append(j.SAMPLE, event, defer=True)
        rec.sample_count += 1
        self.recent.append({"frame": frame, "branchId": branch_id, "rgbaSha256": digest, "png": path})
        return Sample(frame, digest, requested, path, png_sha, png if requested else None)
