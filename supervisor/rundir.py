"""The runtime directory: how ``status``, ``stop`` and ``attach`` find a running session.

Each running supervisor writes ``<runtime_dir>/<session-id>.json`` (mode 0600) naming its
pid, its control endpoint and the session token. The sockets themselves live in a short
private directory (mode 0700) under the system's temporary directory, because unix socket
paths are limited to about 100 bytes; the record points to it.
"""
from __future__ import annotations

import json
import os
import secrets
import shutil
import tempfile


class SessionRuntime:
    def __init__(self, runtime_dir: str, session_id: str):
        self.runtime_dir = os.path.abspath(runtime_dir)
        os.makedirs(self.runtime_dir, mode=0o700, exist_ok=True)
        self.session_id = session_id
        self.sock_dir = tempfile.mkdtemp(prefix="gamerig-")  # mode 0700
        os.chmod(self.sock_dir, 0o700)
        self.token = secrets.token_hex(16)
        self.record_path = os.path.join(self.runtime_dir, f"{session_id}.json")
        self.logs_dir = os.path.join(self.runtime_dir, session_id + ".logs")
        os.makedirs(self.logs_dir, mode=0o700, exist_ok=True)

    def endpoint(self, name: str) -> str:
        return f"ipc://{os.path.join(self.sock_dir, name + '.sock')}"

    def publish(self, info: dict) -> None:
        fd = os.open(self.record_path + ".tmp", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w") as fh:
            json.dump({**info, "token": self.token, "pid": os.getpid(),
                       "session_id": self.session_id}, fh, indent=2)
        os.replace(self.record_path + ".tmp", self.record_path)

    def close(self) -> None:
        for path in (self.record_path,):
            try:
                os.unlink(path)
            except FileNotFoundError:
                pass
        shutil.rmtree(self.sock_dir, ignore_errors=True)


def running_sessions(runtime_dir: str) -> list[dict]:
    """Records of sessions whose supervisor process is still alive (stale ones are skipped)."""
    out = []
    try:
        names = sorted(os.listdir(runtime_dir))
    except FileNotFoundError:
        return out
    for name in names:
        if not name.endswith(".json"):
            continue
        try:
            with open(os.path.join(runtime_dir, name), encoding="utf-8") as fh:
                rec = json.load(fh)
            os.kill(int(rec["pid"]), 0)
        except (OSError, ValueError, KeyError, TypeError):
            continue
        out.append(rec)
    return out
