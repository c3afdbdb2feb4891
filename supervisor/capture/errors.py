"""Exceptions of the capture tools; one root, constructors take the offending values.

    CaptureError
    ├── NotACapture      PATH is neither a session directory nor a capture root, or it
    │                    cannot be listed at all (``supervisor capture ...`` exits 2)
    └── PackRefused      a session cannot be packed or unpacked now (not finished, no
                         observations, a pack that disagrees with its files); the message
                         says why (``capture pack``/``unpack`` exit 1)

Damage found *inside* a capture is never an exception: it is a finding in the report.
"""

from __future__ import annotations


class CaptureError(Exception):
    """Root of the capture tools' exceptions."""


class NotACapture(CaptureError):
    def __init__(self, path: str, problem: str):
        super().__init__(f"{path}: {problem}")
        self.path, self.problem = path, problem


class PackRefused(CaptureError):
    """This session cannot be packed or unpacked now; the message says why."""
