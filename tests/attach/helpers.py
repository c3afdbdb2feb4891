"""Helpers for the attach tests: ``supervisor attach`` subprocesses and in-process taps."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time

from actors.taps.connect import access_from_record
from actors.taps.runtime import AttachedTap, TapRunner
from tests.harness import REPO

LONG = (
    "session.max_steps=100000",
    "session.stop_on_run_end=false",
    "session.stuck_seconds=0",
    "supervisor.taps.keepalive_s=0.5",
)


class Attached:
    """A ``supervisor attach`` subprocess whose stdout/stderr lines are collected."""

    def __init__(self, session, *args: str, env: dict | None = None):
        self.cmd = [sys.executable, "-m", "supervisor", "attach", *args, "--runtime-dir", session.runtime]
        self.proc = subprocess.Popen(
            self.cmd,
            cwd=REPO,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env={**os.environ, **(env or {})},
        )
        self.out: list[str] = []
        self.err: list[str] = []
        for stream, sink in ((self.proc.stdout, self.out), (self.proc.stderr, self.err)):
            threading.Thread(target=lambda s=stream, k=sink: [k.append(ln) for ln in s], daemon=True).start()

    def grep(self, text: str, err: bool = False) -> list[str]:
        return [ln for ln in (self.err if err else self.out) if text in ln]

    def wait(self, timeout: float = 20) -> int:
        try:
            return self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            raise AssertionError(f"tap did not exit: {''.join(self.err)[-2000:]}") from None


class InProcess:
    """Run a tap on a thread of the test process; ``stop()`` detaches it."""

    def __init__(
        self,
        session,
        tap: AttachedTap,
        transport: str = "ipc",
        record: dict | None = None,
        client_key: str | None = None,
    ):
        self.tap = tap
        access = access_from_record(record or session.record(), transport, client_key)
        self.runner = TapRunner(tap, access)
        self.reason: str | None = None
        self.error: BaseException | None = None
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self) -> None:
        try:
            self.reason = self.runner.run()
        except BaseException as exc:  # noqa: BLE001 - any failure of the tap is surfaced by stop()
            self.error = exc

    def stop(self, timeout: float = 15) -> str:
        self.runner.stop.set()
        self.thread.join(timeout)
        assert not self.thread.is_alive(), "the tap did not detach"
        if self.error:
            raise self.error
        return self.reason


class Recording(AttachedTap):
    """Keeps everything it is given."""

    name = "recording"

    def __init__(self, max_lag: int | None = None, row_delay_s: float = 0.0):
        self.max_lag, self.row_delay_s = max_lag, row_delay_s
        self.snapshots: list[tuple[int, dict]] = []
        self.seqs: list[int] = []
        self.drops: list[int] = []
        self.statuses = 0
        self.detached = ""

    def on_snapshot(self, last_sequence, summary):
        self.snapshots.append((last_sequence, summary))

    def on_row(self, row):
        self.seqs.append(row["sequence"])
        if self.row_delay_s:
            time.sleep(self.row_delay_s)  # a deliberately slow consumer

    def on_drop(self, n):
        self.drops.append(n)

    def on_status(self, status):
        self.statuses += 1

    def on_detach(self, reason):
        self.detached = reason


def steps_per_s(session, seconds: float) -> float:
    """Observations recorded during the next ``seconds`` seconds, per second."""
    before = len(session.events("observation"))
    start = time.monotonic()
    time.sleep(seconds)  # a measurement window, not a wait for a condition
    return (len(session.events("observation")) - before) / (time.monotonic() - start)
