"""Fault injection for the fault campaign (``bench/chaos.py``): finding a session's actor
processes, signalling them, a hostile proxy in front of an in-process built-in game, and a
small loop-mounted filesystem that can be filled at a chosen moment (disk full).

Nothing here fakes a gamerig part: the actors are the real processes of ``supervisor start``,
the game is the real built-in game (``actors.game.http.start_server``) with the hostile
profile's knobs, and the proxy is ``tests/fuzz/hostile_http.py``'s ``HostileGame``.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import threading
import time

import psutil
import yaml

from actors.game.http import GameServer, start_server
from actors.game.knobs import Knobs
from tests.fuzz.hostile_http import HostileGame

# Actor name -> the module its process runs (``python -m actors.<module>``, supervisor/children.py).
ACTOR_MODULES = {
    "recorder": "actors.recorder",
    "observer": "actors.observer",
    "policy": "actors.policy",
    "model_client": "actors.model_client",
    "actuator": "actors.actuator",
    "game": "actors.game",
    "emulator": "actors.emulator",
}


class ProcessWatch:
    """Every process the supervisor started, remembered by (pid, create time) while it runs,
    so that processes left behind after the supervisor is gone can still be found."""

    def __init__(self, supervisor_pid: int):
        self.root = psutil.Process(supervisor_pid)
        self.seen: dict[int, tuple[float, str]] = {}  # pid -> (create_time, actor name)
        self.lock = threading.Lock()

    def scan(self) -> dict[str, int]:
        """Live actors now: name -> pid (and remember them)."""
        found: dict[str, int] = {}
        try:
            kids = self.root.children(recursive=True)
        except psutil.Error:
            return found
        for p in kids:
            try:
                cmd, created = p.cmdline(), p.create_time()
            except psutil.Error:
                continue
            name = next((n for n, m in ACTOR_MODULES.items() if m in cmd), None)
            if name:
                found[name] = p.pid
                with self.lock:
                    self.seen[p.pid] = (created, name)
        return found

    def left_over(self) -> list[str]:
        """Remembered processes still alive (same pid and create time): ``name:pid``."""
        out = []
        with self.lock:
            items = list(self.seen.items())
        for pid, (created, name) in items:
            try:
                p = psutil.Process(pid)
                if p.create_time() == created and p.status() != psutil.STATUS_ZOMBIE:
                    out.append(f"{name}:{pid}")
            except psutil.Error:
                continue
        return out

    def kill_left_over(self) -> None:
        """SIGKILL what ``left_over`` names (processes this campaign started), by pid."""
        for item in self.left_over():
            try:
                os.kill(int(item.split(":")[1]), signal.SIGKILL)
            except OSError:
                pass


def signal_pid(pid: int, sig: int) -> bool:
    try:
        os.kill(pid, sig)
        return True
    except OSError:
        return False


def stop_then_continue(pid: int, held_s: float, stopping: threading.Event) -> bool:
    """SIGSTOP ``pid``, hold it ``held_s`` (past the heartbeat deadline), then SIGCONT."""
    if not signal_pid(pid, signal.SIGSTOP):
        return False
    stopping.wait(held_s)
    signal_pid(pid, signal.SIGCONT)
    return True


class ProxiedGame:
    """The built-in game in this process with the hostile profile's knobs, behind a hostile
    proxy that spoils the requests named in ``faults`` (``{(method, n): fault}``). The intent
    check is pointed at the session's journal as soon as the session directory exists (before
    the first POST: the first observation and proposal come first)."""

    def __init__(self, profile: str, seed: int, faults: dict[tuple[str, int], str], slow_s: float):
        with open(profile, encoding="utf-8") as fh:
            knobs = Knobs.from_mapping((yaml.safe_load(fh)["game"] or {}).get("knobs"))
        self.server: GameServer = start_server("127.0.0.1", 0, seed, knobs)
        self.proxy = HostileGame(self.server.url, faults, slow_s=slow_s)

    @property
    def url(self) -> str:
        return self.proxy.url

    def point_intent_check(self, journal: str) -> None:
        with self.server.intent.lock:
            self.server.intent.path = journal

    def posted_attempts(self) -> set[str]:
        """Attempt ids of every POST the game received (each needed an acknowledged intent)."""
        with self.server.intent.lock:
            return set(self.server.intent.used)

    def close(self) -> None:
        self.proxy.shutdown()
        self.server.shutdown()


class SmallDisk:
    """A loop-mounted ext4 filesystem of ``mib`` MiB (needs root) holding a capture root;
    ``fill()`` takes all its free space at once, so the next journal write meets ENOSPC."""

    def __init__(self, base: str, mib: int = 24):
        self.image, self.mount = os.path.join(base, "disk.img"), os.path.join(base, "disk")
        os.makedirs(self.mount, exist_ok=True)
        with open(self.image, "wb") as fh:
            fh.truncate(mib << 20)
        subprocess.run(["mkfs.ext4", "-q", "-F", "-m", "0", self.image], check=True, capture_output=True)
        subprocess.run(["mount", "-o", "loop", self.image, self.mount], check=True, capture_output=True)

    def fill(self) -> int:
        """Write a filler file until the filesystem is full; the bytes written."""
        written, chunk = 0, b"\0" * (1 << 16)
        try:
            with open(os.path.join(self.mount, "filler"), "wb", buffering=0) as fh:
                while True:
                    written += fh.write(chunk)
        except OSError:
            pass
        return written

    def copy_out(self, dest: str) -> None:
        """Copy the capture off the small disk (it is unmounted after the run)."""
        shutil.copytree(self.mount, dest, ignore=shutil.ignore_patterns("filler", "lost+found"), dirs_exist_ok=True)

    def close(self) -> None:
        for _ in range(50):
            if subprocess.run(["umount", self.mount], capture_output=True).returncode == 0:
                break
            time.sleep(0.1)
        try:
            os.unlink(self.image)
        except OSError:
            pass
