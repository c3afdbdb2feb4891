"""The runtime directory: how ``status``, ``stop`` and ``attach`` find a running session.

Each running supervisor writes ``<runtime_dir>/<session-id>.json`` (mode 0600) naming its
pid, its control endpoint and the session token. The sockets themselves live in a short
private directory (mode 0700) under the system's temporary directory, because unix socket
paths are limited to about 100 bytes; the record points to it.

So that a session is found from any folder, the supervisor also leaves a pointer to its
record in the user's own registry (``user_registry()``: ``$XDG_RUNTIME_DIR/gamerig``, else
``<tmp>/gamerig-<uid>``, mode 0700), as other supervisors keep a per-user runtime directory.
``find_sessions(None)`` looks in ``./run/runtime`` and follows the registry's pointers;
``find_sessions(DIR)`` looks in DIR only. Both say where they looked.
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import tempfile


def endpoint_in(sock_dir: str, name: str) -> str:
    """The address of a session's ``name`` socket in its socket folder."""
    return f"ipc://{os.path.join(sock_dir, name + '.sock')}"


def endpoint_beside(record: dict, name: str) -> str:
    """The address of the ``name`` socket of the session a published record describes: its
    sockets share the folder of its ``control`` socket."""
    return endpoint_in(os.path.dirname(record["control"][len("ipc://") :]), name)


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
        return endpoint_in(self.sock_dir, name)

    def publish(self, info: dict) -> None:
        fd = os.open(self.record_path + ".tmp", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w") as fh:
            json.dump({**info, "token": self.token, "pid": os.getpid(), "session_id": self.session_id}, fh, indent=2)
        os.replace(self.record_path + ".tmp", self.record_path)
        self.pointer = _write_pointer(self.session_id, self.record_path)

    pointer: str | None = None

    def close(self) -> None:
        for path in (self.record_path, self.pointer):
            if path is None:
                continue
            try:
                os.unlink(path)
            except FileNotFoundError:
                pass
        shutil.rmtree(self.sock_dir, ignore_errors=True)


DEFAULT_RUNTIME = os.path.join("run", "runtime")


def user_registry() -> str:
    """This user's registry of running sessions (see the module docstring)."""
    base = os.environ.get("XDG_RUNTIME_DIR")
    if base and os.path.isdir(base):
        return os.path.join(base, "gamerig")
    return os.path.join(tempfile.gettempdir(), f"gamerig-{os.getuid()}")


def _write_pointer(session_id: str, record_path: str) -> str | None:
    """Leave ``<registry>/<session-id>.json`` pointing at the record; None when the registry
    cannot be written (the session is then found only through its runtime directory)."""
    registry = user_registry()
    try:
        os.makedirs(registry, mode=0o700, exist_ok=True)
        st = os.stat(registry)
        if st.st_uid != os.getuid() or st.st_mode & 0o077:
            return None  # not ours, or open to others: never trust it
        path = os.path.join(registry, f"{session_id}.json")
        fd = os.open(path + ".tmp", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w") as fh:
            json.dump({"record": os.path.abspath(record_path)}, fh)
        os.replace(path + ".tmp", path)
        return path
    except OSError:
        return None


def find_sessions(runtime_dir: str | None) -> tuple[list[dict], list[str]]:
    """Running sessions and the places looked in: ``runtime_dir`` alone when given, else
    ``./run/runtime`` and every pointer of this user's registry. Each record carries
    ``_path``, where it was read."""
    if runtime_dir is not None:
        return running_sessions(runtime_dir), [os.path.abspath(runtime_dir)]
    found = {r["session_id"]: r for r in running_sessions(DEFAULT_RUNTIME)}
    registry = user_registry()
    try:
        names = sorted(os.listdir(registry))
    except OSError:
        names = []
    for name in names:
        if not name.endswith(".json"):
            continue
        try:
            with open(os.path.join(registry, name), encoding="utf-8") as fh:
                rec = live_record(str(json.load(fh)["record"]))
        except (OSError, ValueError, KeyError, TypeError):
            continue
        if rec is not None:
            found.setdefault(rec["session_id"], rec)
    return list(found.values()), [os.path.abspath(DEFAULT_RUNTIME), registry]


def running_sessions(runtime_dir: str) -> list[dict]:
    """Records of sessions whose supervisor process is still alive (stale ones are skipped)."""
    try:
        names = sorted(os.listdir(runtime_dir))
    except FileNotFoundError:
        return []
    found = (live_record(os.path.join(runtime_dir, n)) for n in names if n.endswith(".json"))
    return [rec for rec in found if rec is not None]


def live_record(path: str) -> dict | None:
    """The record at ``path`` with ``_path`` added, when its supervisor process is alive."""
    path = os.path.abspath(path)
    try:
        with open(path, encoding="utf-8") as fh:
            rec = json.load(fh)
        os.kill(int(rec["pid"]), 0)
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return {**rec, "_path": path}
