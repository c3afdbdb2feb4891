"""What ``supervisor view`` was given, and the sessions and fleets found in it, kept current.

Each PATH is resolved as ``capture verify`` resolves it (``supervisor.capture.verify.resolve``):
a session directory, a capture root or a fleet root; anything else is refused with
``NotACapture`` naming the path. ``Catalog.scan()`` lists the session directories (new ones
appear as a running session creates them); ``Catalog.work()`` is one round of the
background thread: follow every journal that grew, then read observation figures for the
sessions someone looks at (and every fleet session, for the fleet's floors).

``Verifier`` runs the capture verifier (``supervisor capture verify SESSION --json``, in a
process of its own so that a long session's verification takes neither the server's memory
nor its interpreter) on every session whose journal has been still for ``SETTLE_S``, one at
a time, and again whenever the journal or its ``session.json`` changes. Nothing here writes
a file.
"""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
import threading
import time
from typing import Any

from supervisor.capture.errors import NotACapture
from supervisor.capture.findings import Finding
from supervisor.capture.verify import resolve
from supervisor.fleet import layout as fleet_layout
from supervisor.fleet.results import read_fleet, read_rows

from .track import Track

SETTLE_S = 2.0  # a journal still this long is verified
MAX_FINDINGS = 50  # findings kept per session (the count is kept too)
VERIFY_TIMEOUT_S = 3600.0  # one session's verification, at most
FOCUS_S = 30.0  # a session looked at in the last FOCUS_S gets its figures read first


class Fleet:
    def __init__(self, key: str, root: str):
        self.key, self.root = key, root
        self.name = os.path.basename(root)

    def info(self) -> dict:
        try:
            return read_fleet(self.root)
        except (OSError, ValueError) as exc:
            return {"error": f"{fleet_layout.FLEET_FILE}: {exc}"}

    def rows(self) -> list[dict]:
        return read_rows(self.root)


class Catalog:
    def __init__(self, paths: list[str]):
        if not paths:
            raise NotACapture("", "give at least one capture root, session directory or fleet root")
        self.given: list[tuple[str, str]] = [resolve(p) for p in paths]  # raises NotACapture
        self.lock = threading.RLock()
        self.tracks: dict[str, Track] = {}
        self.by_dir: dict[str, str] = {}
        self.fleets: dict[str, Fleet] = {}
        self.verdicts: dict[str, dict] = {}
        self.focus: dict[str, float] = {}
        self.allowed = [os.path.realpath(p) for _kind, p in self.given]
        self.scan()

    # -- discovery ------------------------------------------------------------------------
    def scan(self) -> None:
        for kind, path in self.given:
            if kind == "session":
                self._add(path, os.path.dirname(os.path.dirname(path)), None)
            elif kind == "capture_root":
                self._add_root(path, None)
            else:
                fleet = self._fleet(path)
                for root in fleet_layout.capture_roots(path):
                    self._add_root(root, fleet.key)

    def _fleet(self, root: str) -> Fleet:
        with self.lock:
            for f in self.fleets.values():
                if f.root == root:
                    return f
            key = self._unique(os.path.basename(root), self.fleets)
            self.fleets[key] = Fleet(key, root)
            return self.fleets[key]

    def _add_root(self, root: str, fleet: str | None) -> None:
        sessions = os.path.join(root, "sessions")
        try:
            names = sorted(os.listdir(sessions))
        except OSError:
            return
        for name in names:
            path = os.path.join(sessions, name)
            if os.path.isdir(path):
                self._add(path, root, fleet)

    def _add(self, session_dir: str, root: str, fleet: str | None) -> None:
        real = os.path.realpath(session_dir)
        with self.lock:
            if real in self.by_dir:
                return
            key = self._unique(os.path.basename(session_dir), self.tracks)
            self.tracks[key] = Track(key, session_dir, root, fleet)
            self.by_dir[real] = key

    @staticmethod
    def _unique(name: str, taken: dict) -> str:
        key, n = name, 1
        while key in taken:
            n += 1
            key = f"{name}~{n}"
        return key

    # -- access ---------------------------------------------------------------------------
    def track(self, key: str) -> Track | None:
        with self.lock:
            return self.tracks.get(key)

    def all_tracks(self) -> list[Track]:
        with self.lock:
            return list(self.tracks.values())

    def fleet_tracks(self, fleet: str) -> list[Track]:
        return [t for t in self.all_tracks() if t.fleet == fleet]

    def looked_at(self, key: str) -> None:
        self.focus[key] = time.monotonic()

    def verdict(self, key: str) -> dict | None:
        return self.verdicts.get(key)

    # -- background work ------------------------------------------------------------------
    def follow_all(self, max_lines: int = 5000) -> int:
        """Follow every journal that grew, the ones looked at first; return lines read."""
        now = time.monotonic()
        tracks = sorted(self.all_tracks(), key=lambda t: -self.focus.get(t.key, 0))
        done = 0
        for t in tracks:
            if t.changed() or t.offset < t.size:
                done += t.follow(max_lines if now - self.focus.get(t.key, -1e9) < FOCUS_S else max_lines // 5)
        return done

    def read_figures(self, limit: int = 500) -> int:
        now = time.monotonic()
        wanted = [
            t
            for t in self.all_tracks()
            if t.figures_read < t.steps and (now - self.focus.get(t.key, -1e9) < FOCUS_S or t.fleet is not None)
        ]
        wanted.sort(key=lambda t: -self.focus.get(t.key, 0))
        done = 0
        for t in wanted:
            done += t.read_figures(limit)
            if done >= limit:
                break
        return done

    def work(self) -> bool:
        """One round; True when there was anything to do."""
        return bool(self.follow_all()) | bool(self.read_figures())


class Verifier:
    """Verifies settled sessions in the background, one at a time (see the module docstring)."""

    def __init__(self, catalog: Catalog):
        self.catalog = catalog
        self.current: subprocess.Popen | None = None

    def stop(self) -> None:
        """End a verification still running (the viewer is closing, or it timed out)."""
        proc, self.current = self.current, None
        if proc is not None and proc.poll() is None:
            proc.kill()
            proc.wait()

    def stamp(self, t: Track) -> tuple:
        def st(path):
            try:
                s = os.stat(path)
                return (s.st_size, s.st_mtime_ns)
            except OSError:
                return None

        return (st(t.journal), st(os.path.join(t.dir, "session.json")))

    def due(self, t: Track, now: float) -> bool:
        known = self.catalog.verdicts.get(t.key)
        stamp = self.stamp(t)
        if known is not None and known.get("_stamp") == stamp:
            return False
        settled = now - (t.mtime or 0) >= SETTLE_S or t.end is not None
        return settled and not (known and known.get("state") == "verifying")

    def run_one(self) -> bool:
        now = time.time()
        for t in self.catalog.all_tracks():
            if self.due(t, now):
                self.verify(t)
                return True
        return False

    def verify(self, t: Track) -> dict:
        """Run ``supervisor capture verify SESSION --json`` in its own process (its memory and
        CPU stay out of the server's) and keep the verdict with the first findings."""
        stamp = self.stamp(t)
        self.catalog.verdicts[t.key] = {**(self.catalog.verdicts.get(t.key) or {}), "state": "verifying"}
        try:
            self.current = subprocess.Popen(
                [sys.executable, "-m", "supervisor", "capture", "verify", t.dir, "--json"],
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
                text=True,
            )
            try:
                out, _err = self.current.communicate(timeout=VERIFY_TIMEOUT_S)
            finally:
                self.stop()
            data = json.loads(out)
            if "error" in data:
                raise ValueError(data["error"])
            report = data["sessions"][0]
            findings = [Finding(**{k: f.get(k) for k in _FINDING_FIELDS}) for f in report["findings"]]
            result = {
                "state": "done",
                "verdict": report["verdict"],
                "count": len(findings),
                "findings": [_finding(f) for f in findings[:MAX_FINDINGS]],
                "first": _first_bad(findings),
                "stats": report.get("stats"),
            }
        except (OSError, ValueError, KeyError, IndexError, TypeError, subprocess.TimeoutExpired) as exc:
            result = {"state": "error", "verdict": None, "error": f"the verifier failed: {type(exc).__name__}: {exc}"}
        result["_stamp"] = stamp
        result["at"] = time.time()
        self.catalog.verdicts[t.key] = result
        return result


_FINDING_FIELDS = [f.name for f in dataclasses.fields(Finding)]


def _finding(f: Finding) -> dict[str, Any]:
    return {**f.to_dict(), "where": f.where()}


def _first_bad(findings: list[Finding]) -> dict | None:
    for severity in ("damaged", "incomplete"):
        for f in findings:
            if f.severity == severity:
                return _finding(f)
    return None


def public_verdict(v: dict | None) -> dict | None:
    return None if v is None else {k: val for k, val in v.items() if not k.startswith("_")}
