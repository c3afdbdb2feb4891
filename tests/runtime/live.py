"""A real recorder with the real built-in game or the emulator, for unit tests of actors' classes.

``LiveRecorder(tmp_path)`` runs ``supervisor start`` with a profile of only the ``recorder``
and ``game`` actors, until the game listens; ``backend="pyboy"``: the ``recorder`` and the
``emulator`` (the demo cartridge), until it started. There is no policy, actuator or
observer: the test plays their parts with the classes under test, in its own process.
``context(name)`` is an ``ActorContext`` for such a class, with the session's endpoints and
its resolved profile (from the ``session_start`` row); ``recorder()`` and ``follower()`` are
connected to the session's recorder. ``close()`` ends the session with SIGTERM.
"""

from __future__ import annotations

import os
import signal
import socket
import threading
import urllib.parse

import zmq

from actors.runtime.actor import ActorContext
from actors.runtime.follow import Follower
from actors.runtime.recorder_client import RecorderClient
from actors.runtime.transport import Counters
from tests.harness import Session, wait_for

PROFILES = {
    "http": """\
name: recorder-and-game
game: {backend: http, builtin: true, seed: 1}
policy: {module: sts2}
session: {max_steps: 100000, stuck_seconds: 0, stop_on_run_end: false}
actors:
  recorder: {restart: permanent}
  game: {restart: permanent}
""",
    "pyboy": """\
name: recorder-and-emulator
game: {backend: pyboy, seed: 1}
policy: {module: pyboy_demo}
session: {max_steps: 100000, stuck_seconds: 0, stop_on_run_end: false}
emulator: {record: true, frames_per_step: 4}
actors:
  recorder: {restart: permanent}
  emulator: {restart: permanent}
""",
}


class LiveRecorder:
    def __init__(self, base, *sets: str, backend: str = "http"):
        os.makedirs(base, exist_ok=True)
        profile = os.path.join(str(base), f"live-{backend}.yaml")
        with open(profile, "w", encoding="utf-8") as fh:
            fh.write(PROFILES[backend])
        self.session = Session(str(base), profile, *sets)
        wait_for(
            lambda: (
                self.session.events("emulator_started" if backend == "pyboy" else "actor_start")
                and self.session.events("session_start")
            ),
            30,
            f"the recorder and the {backend} game to start",
        )
        self.zctx = zmq.Context.instance()
        self.counters = Counters()
        start = self.session.events("session_start")[0]
        self.profile, self.session_id = start["profile"], start["session"]
        self.endpoints = {name: self.session.endpoint(name) for name in ("recorder", "stream", "emulator")}
        if backend == "http":
            url = urllib.parse.urlparse(self.profile["game"]["base_url"])
            wait_for(lambda: _listening(url.hostname, url.port), 30, f"the game to listen on {url.netloc}")

    def context(self, name: str, **settings) -> ActorContext:
        """An actor's context; ``settings`` override profile sections (``game={"timeout_s": 1}``)."""
        profile = {k: dict(v) if isinstance(v, dict) else v for k, v in self.profile.items()}
        for section, values in settings.items():
            profile[section] = {**profile.get(section, {}), **values}
        return ActorContext(
            name=name,
            session_id=self.session_id,
            session_dir=self.session.session_dir,
            capture_root=self.session.capture,
            endpoints=dict(self.endpoints),
            profile=profile,
            heartbeat_s=1.0,
            start_count=1,
            zctx=self.zctx,
            stopping=threading.Event(),
            counters=self.counters,
        )

    def recorder(self, name: str = "test") -> RecorderClient:
        return RecorderClient(
            self.zctx, self.endpoints["recorder"], session=self.session_id, sender=name, counters=self.counters
        )

    def follower(self, name: str = "test", **kw) -> Follower:
        return Follower(
            self.zctx, self.endpoints["recorder"], session=self.session_id, sender=name, counters=self.counters, **kw
        )

    def rows(self, kind: str | None = None) -> list[dict]:
        rows = self.session.rows()
        return rows if kind is None else [r for r in rows if r["event"] == kind]

    def close(self) -> None:
        if self.session.proc.poll() is None:
            self.session.signal(signal.SIGTERM)
        self.session.wait(60)


def _listening(host: str, port: int) -> bool:
    try:
        socket.create_connection((host, port), timeout=1).close()
    except OSError:
        return False
    return True
