"""A one-node Ray cluster on this machine's loopback, for the tests and ``bench/fleet.py``.

It runs the ``ray`` command of this Python environment (``ray start --head --block``) in a
process group of its own and stops it with SIGTERM (Ray then stops every process it
started: raylet, GCS, workers); it never runs ``ray stop``, which would stop every Ray
cluster on the machine. It does not import Ray.

Everything stays on 127.0.0.1 (``RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER=0`` makes Ray use the
loopback address, as it does on a laptop), and the cluster uses token authentication with
a fresh token of its own (``RAY_AUTH_MODE=token``, ``RAY_AUTH_TOKEN_PATH``): ``env`` is what a
driver (``supervisor fleet start --ray-address``) needs to connect to it.
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class LocalRayHead:
    def __init__(self, num_cpus: int = 2, resources: dict[str, float] | None = None):
        self.dir = tempfile.mkdtemp(prefix="gr-ray-", dir="/tmp")  # short: Ray's socket paths
        token = os.path.join(self.dir, "token")
        with open(token, "w", encoding="utf-8") as fh:
            fh.write(secrets.token_hex(32))
        self.port = _free_port()
        self.address = f"127.0.0.1:{self.port}"
        self.env = {
            **os.environ,
            "RAY_AUTH_MODE": "token",
            "RAY_AUTH_TOKEN_PATH": token,
            "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "0",
            "RAY_USAGE_STATS_ENABLED": "0",
        }
        ray_cmd = os.path.join(os.path.dirname(sys.executable), "ray")
        cmd = [
            ray_cmd,
            "start",
            "--head",
            "--block",
            "--node-ip-address",
            "127.0.0.1",
            "--port",
            str(self.port),
            "--num-cpus",
            str(num_cpus),
            "--include-dashboard=false",
            "--disable-usage-stats",
            "--temp-dir",
            os.path.join(self.dir, "t"),
            "--resources",
            json.dumps(resources or {}),
        ]
        self.log_path = os.path.join(self.dir, "head.log")
        with open(self.log_path, "wb") as log:
            self.proc = subprocess.Popen(
                cmd,
                env=self.env,
                stdout=log,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                start_new_session=True,
            )

    def wait_ready(self, timeout_s: float = 60.0) -> LocalRayHead:
        """Wait until the head says it is up (the GCS answers and the node is registered)."""
        end = time.monotonic() + timeout_s
        while time.monotonic() < end:
            if self.proc.poll() is not None:
                raise RuntimeError(f"ray start exited with {self.proc.returncode}: {self._tail()}")
            if b"block forever" in self._read():
                return self
            time.sleep(0.1)
        raise RuntimeError(f"the Ray head did not start within {timeout_s:.0f}s: {self._tail()}")

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(60)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait()
        shutil.rmtree(self.dir, ignore_errors=True)

    def __enter__(self) -> LocalRayHead:
        return self.wait_ready()

    def __exit__(self, *exc) -> None:
        self.stop()

    def _read(self) -> bytes:
        try:
            with open(self.log_path, "rb") as fh:
                return fh.read()
        except OSError:
            return b""

    def _tail(self) -> str:
        return self._read()[-2000:].decode("utf-8", "replace")
