"""One supervised session's process lifecycle: start actors in profile order, reap their
exits, restart them by policy, follow the journal, and stop everything in reverse order,
draining, then finalize.

The loop never blocks on one actor: control messages (answered by ``control.Control``),
journal rows, lifecycle events, heartbeats, exits and restarts are all handled from one
poller.
"""

from __future__ import annotations

import datetime as dt
import logging
import os
import signal
import socket
import time
import urllib.parse
import uuid

import zmq

from actors.model_client.config import ModelConfig
from actors.runtime.follow import Follower
from actors.runtime.recorder_client import RecorderClient
from actors.runtime.transport import Counters
from protocol.events import ActorExit, ActorGiveUp, ActorRestart, ActorStart, ActorUnresponsive, SessionStopping
from protocol.supervisor_to_actor import SessionInfo, StopActor

from . import children as ch
from .control import Control
from .outbox import Outbox
from .progress import Progress
from .restart import RestartPolicy
from .rundir import SessionRuntime
from .taps import TapRegistry
from .tcp import record_fields, start_gateway, tap_streams
from .watch import StreamWatch

log = logging.getLogger("supervisor")

MODULES = {
    "recorder": "actors.recorder",
    "game": "actors.game",
    "policy": "actors.policy",
    "model_client": "actors.model_client",
    "actuator": "actors.actuator",
    "observer": "actors.observer",
    "emulator": "actors.emulator",
}
REQUIRED = {"recorder", "game", "policy", "actuator", "observer", "emulator"}
#: Exit codes of ``supervisor start`` by stop reason; anything else is a failure (1).
EXIT_CODES = {"run_ended": 0, "run_changed": 0, "max_steps": 0, "stop_command": 0, "sigint": 130, "sigterm": 143}


def new_session_id() -> str:
    stamp = dt.datetime.now(dt.UTC).strftime("%Y%m%dT%H%M%SZ")
    return f"{stamp}-{uuid.uuid4().hex}"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Supervisor:
    def __init__(self, profile: dict, *, progress_stream=None):
        self.profile = profile
        self.session_id = new_session_id()
        self.capture_root = os.path.abspath(profile["capture"]["root"])
        self.session_dir = os.path.join(self.capture_root, "sessions", self.session_id)
        sup = profile["supervisor"]
        self.hb = float(sup["heartbeat_s"])
        self.rt = SessionRuntime(sup["runtime_dir"], self.session_id)
        self.endpoints = {
            "control": self.rt.endpoint("control"),
            "recorder": self.rt.endpoint("recorder"),
            "model": self.rt.endpoint("model"),
            "emulator": self.rt.endpoint("emulator"),
            "stream": self.rt.endpoint("stream"),
        }
        self._prepare_game()
        self.order = [n for n in profile["actors"] if self._wanted(n)]
        self.children = {n: self._child(n) for n in self.order}
        self.policy = RestartPolicy(self.order, {n: profile["actors"][n] for n in self.order}, sup["strategy"])
        self.zctx = zmq.Context()
        self.counters = Counters()
        model = profile.get("model") or {}
        self.watch = StreamWatch(
            profile["session"]["max_steps"],
            model_stop_after=(
                model.get("unreachable_after", ModelConfig.unreachable_after)
                if model.get("base_url") and model.get("on_unreachable") == "stop"
                else None
            ),
        )
        self.progress = Progress(sup["progress"], progress_stream)
        self.stop_reason: str | None = None
        self.stop_detail = ""
        self.pending_starts: list[tuple[float, str]] = []
        self.restarts = 0
        self.summary: dict | None = None
        self._next_ping = self._next_sample = 0.0

    # -- set-up ---------------------------------------------------------------------------
    def _prepare_game(self) -> None:
        game = self.profile["game"]
        if game["backend"] == "http" and game["builtin"]:
            url = game["base_url"]
            port = urllib.parse.urlparse(url).port if url else None
            if not port:
                game["base_url"] = f"http://127.0.0.1:{free_port()}"

    def _wanted(self, name: str) -> bool:
        game = self.profile["game"]
        if name == "game":
            return game["backend"] == "http" and game["builtin"]
        if name == "emulator":
            return game["backend"] == "pyboy"
        return True

    def _child(self, name: str) -> ch.Child:
        spec = self.profile["actors"][name]
        env = {"GAMERIG_CONTROL": self.endpoints["control"], "GAMERIG_SESSION": self.session_id, "GAMERIG_ACTOR": name}
        return ch.Child(
            name=name,
            module=spec.get("module") or MODULES[name],
            args=[str(a) for a in spec.get("args") or []],
            env=env,
            log_path=os.path.join(self.rt.logs_dir, f"{name}.log"),
        )

    # -- the run --------------------------------------------------------------------------
    def run(self) -> int:
        old = {s: signal.signal(s, self._on_signal) for s in (signal.SIGINT, signal.SIGTERM)}
        self.recorder = RecorderClient(
            self.zctx, self.endpoints["recorder"], session=self.session_id, sender="supervisor", counters=self.counters
        )
        self.outbox = Outbox(self.recorder)
        self.follower = self.watch.follower = Follower(  # paced by the watch (StreamWatch.PACE_S)
            self.zctx,
            self.endpoints["recorder"],
            session=self.session_id,
            sender="supervisor",
            counters=self.counters,
            wait_ms=500,
        )
        self.tcp = start_gateway(self.profile["supervisor"]["tcp"], self.endpoints)
        self.taps = TapRegistry(
            session_token=self.rt.token,
            record=self.outbox.put,
            status=self.status,
            streams=tap_streams(self.endpoints, self.tcp),
            keepalive_s=float(self.profile["supervisor"]["taps"]["keepalive_s"]),
        )
        self.control = Control(
            self.zctx,
            self._session_info(),
            token=self.rt.token,
            startup_timeout_s=float(self.profile["supervisor"]["startup_timeout_s"]),
            children=self.children,
            taps=self.taps,
            counters=self.counters,
            record=self.outbox.put,
            request_stop=self.request_stop,
            status=self.status,
        )
        self.rt.publish(
            {
                "control": self.endpoints["control"],
                "capture_root": self.capture_root,
                "session_dir": self.session_dir,
                "profile": self.profile.get("name"),
                "started_at": time.time(),
                "actors": self.order,
                **record_fields(self.tcp),
            }
        )
        affinity = self._dedicate_cpu()
        try:
            if self._start_all():
                self._loop()
            return self._shutdown()
        finally:
            if affinity is not None:
                os.sched_setaffinity(0, affinity)
            for s, h in old.items():
                signal.signal(s, h)
            if self.tcp is not None:
                self.tcp.close()
            self.outbox.close()
            self.recorder.close()
            self.follower.close()
            self.control.close()
            self.rt.close()
            self.zctx.term()

    def _session_info(self) -> SessionInfo:
        """What every actor's ``welcome`` tells it."""
        return SessionInfo(
            session_id=self.session_id,
            session_dir=self.session_dir,
            capture_root=self.capture_root,
            endpoints=self.endpoints,
            profile=self.profile,
            heartbeat_s=self.hb,
        )

    def _dedicate_cpu(self) -> set[int] | None:
        """``supervisor.dedicated_cpu``: that actor gets the last CPU this process may use to
        itself; the supervisor and every other actor (which inherit its affinity) get the
        rest. Returns the affinity to restore; None when there is nothing to do (fewer than
        two CPUs: then it says so in the log and changes nothing)."""
        name = self.profile["supervisor"]["dedicated_cpu"]
        if name is None or name not in self.children:
            return None
        allowed = os.sched_getaffinity(0)
        if len(allowed) < 2:
            log.warning("supervisor.dedicated_cpu: only %d CPU available; %s shares it", len(allowed), name)
            return None
        cpus = sorted(allowed)
        self.children[name].cpus = [cpus[-1]]
        os.sched_setaffinity(0, cpus[:-1])
        return allowed

    def _on_signal(self, signum, _frame) -> None:
        self.request_stop("sigint" if signum == signal.SIGINT else "sigterm")

    def request_stop(self, reason: str, detail: str = "") -> None:
        if self.stop_reason is None:
            self.stop_reason, self.stop_detail = reason, detail
            log.info("stopping: %s %s", reason, detail)

    def _start_all(self) -> bool:
        timeout = float(self.profile["supervisor"]["startup_timeout_s"])
        for name in self.order:
            child = self.children[name]
            self._start(child)
            deadline = time.monotonic() + timeout
            while not self._ready(child):
                self._pump(0.05)
                if self.stop_reason:
                    return False
                code = child.poll()
                if code is not None or time.monotonic() > deadline:
                    why = f"exited with {code}" if code is not None else f"no hello in {timeout:.0f}s"
                    child.kill()
                    child.wait(2)
                    self._record_exit(child, code)
                    self.request_stop("startup_failed", f"{name} {why}; see {child.log_path}")
                    return False
        return True

    def _emulator_status(self) -> dict | None:
        """The emulator actor's last heartbeat status (frames run, frame budget), if any."""
        child = self.children.get("emulator")
        return child.status if child is not None else None

    def _ready(self, child: ch.Child) -> bool:
        """Welcomed; and for the recorder, its session_start is on disk (it created the
        session directory), so no later actor can race it to that directory."""
        return child.welcomed and (child.name != "recorder" or self.watch.last_sequence >= 1)

    def _start(self, child: ch.Child) -> None:
        child.start()
        log.info("started %s (pid %s)", child.name, child.pid)
        self.outbox.put(
            ActorStart(
                actor=child.name,
                pid=child.pid,
                start_count=child.start_count,
                module=child.module,
                cpus=child.cpus or None,
            )
        )

    def _loop(self) -> None:
        stuck = float(self.profile["session"]["stuck_seconds"])
        while self.stop_reason is None:
            self._pump(0.1)
            now = time.monotonic()
            self._reap()
            self._due_starts(now)
            if self.watch.stop_reason:
                self.request_stop(self.watch.stop_reason)
            elif stuck and self.watch.idle_seconds() > stuck:
                self.request_stop("stuck", f"no journal progress for {stuck:.0f}s")
            self.progress.update(self.watch, self.restarts, emulator=self._emulator_status())

    def _pump(self, timeout_s: float) -> None:
        poller = zmq.Poller()
        poller.register(self.control.socket, zmq.POLLIN)
        fsock = self.watch.socket()
        poller.register(fsock, zmq.POLLIN)
        self.outbox.pump()
        if self.outbox.socket is not None:
            poller.register(self.outbox.socket, zmq.POLLIN)
        events = dict(poller.poll(int(timeout_s * 1000)))
        if self.control.socket in events:
            self.control.handle_waiting()
        if fsock in events:
            self.watch.pump()
        self.outbox.pump()
        self._timers()

    def _timers(self) -> None:
        """Heartbeats and samples, due in every phase (start-up and stopping included)."""
        now = time.monotonic()
        if now >= self._next_ping:
            for c in self.control.ping_all(now):
                self.outbox.put(ActorUnresponsive(actor=c.name, pid=c.pid, silent_s=round(now - c.last_heard, 2)))
                c.kill()
            self._next_ping = now + self.hb
        if now >= self._next_sample:
            for c in self.children.values():
                c.take_sample()
            self._next_sample = now + 2.0
            self.taps.sweep(now)

    # -- status ---------------------------------------------------------------------------
    def status(self) -> dict:
        now = time.monotonic()
        return {
            "session_id": self.session_id,
            "session_dir": self.session_dir,
            "profile": self.profile.get("name"),
            "steps": self.watch.steps,
            "action_results": dict(self.watch.outcomes),
            "last_sequence": self.watch.last_sequence,
            "elapsed_s": round(now - self.progress.started, 1),
            "stopping": self.stop_reason,
            "actors": {
                n: {
                    "pid": c.pid,
                    "alive": c.alive(),
                    "starts": c.start_count,
                    "since_heard_s": round(now - c.last_heard, 2),
                    **(c.sample or c.take_sample()),  # an actor started since the last sampling
                    "status": c.status,
                }
                for n, c in self.children.items()
            },
        }

    # -- exits, restarts ------------------------------------------------------------------
    def _reap(self) -> None:
        for name in list(self.order):
            c = self.children[name]
            code = c.poll()
            if code is None or c.stopping or c.proc is None:
                continue
            self._record_exit(c, code)
            c.proc = None
            self._on_exit(c, code)

    def _record_exit(self, c: ch.Child, code: int | None, expected: bool = False) -> None:
        self.outbox.put(ActorExit(actor=c.name, pid=c.pid, **ch.describe_exit(code), expected=expected))

    def _on_exit(self, c: ch.Child, code: int | None) -> None:
        d = self.policy.on_exit(c.name, code, time.monotonic())
        if d.action == "give_up":
            self.outbox.put(ActorGiveUp(actor=c.name, reason=d.reason))
            self.request_stop("restart_intensity", d.reason)
        elif d.action == "leave":
            if c.name in REQUIRED:
                self.request_stop("actor_exited", f"{c.name}: {d.reason}")
        else:
            for other in d.stop_first:
                self._stop_child(self.children[other], "group restart")
            when = time.monotonic() + d.delay_s
            group = set(d.restart)  # a newer decision replaces older pending starts
            self.pending_starts = [(t, n) for t, n in self.pending_starts if n not in group]
            for name in d.restart:
                self.pending_starts.append((when, name))
                self.outbox.put(
                    ActorRestart(
                        actor=name, after_exit_of=c.name, strategy=self.policy.strategy, delay_s=round(d.delay_s, 3)
                    )
                )
                self.restarts += 1

    def _due_starts(self, now: float) -> None:
        due = [n for t, n in self.pending_starts if t <= now]
        self.pending_starts = [(t, n) for t, n in self.pending_starts if t > now]
        for name in sorted(set(due), key=self.order.index):
            if not self.children[name].alive():  # never a second copy of a running actor
                self._start(self.children[name])

    def _stop_child(self, c: ch.Child, reason: str) -> None:
        if not c.alive():
            return
        c.stopping = True
        self.control.tell(c.name, StopActor(reason=reason))
        deadline = time.monotonic() + float(self.profile["supervisor"]["stop_timeout_s"])
        while c.alive() and time.monotonic() < deadline:
            self._pump(0.05)
        if c.alive():
            c.signal(signal.SIGTERM)
            self._pump_while(c.alive, 2.0)  # keep heartbeats going: others must not think us gone
            if c.alive():
                c.kill()
        self._pump_while(c.alive, 5.0)
        code = c.poll()
        self._record_exit(c, code, expected=True)
        c.proc = None

    def _pump_while(self, condition, seconds: float) -> None:
        end = time.monotonic() + seconds
        while condition() and time.monotonic() < end:
            self._pump(0.05)

    # -- stopping -------------------------------------------------------------------------
    def _shutdown(self) -> int:
        reason = self.stop_reason or "stopped"
        code = EXIT_CODES.get(reason, 1)
        self.outbox.put(SessionStopping(reason=reason, detail=self.stop_detail))
        self.pending_starts.clear()
        for name in reversed(self.order):
            if name != "recorder":
                self._stop_child(self.children[name], f"session stopping: {reason}")
        # drawn once the actors flushed their last status: a budget the emulator just ran out of
        # shows, even when the policy's stop overtook the emulator's last heartbeat
        self.progress.update(self.watch, self.restarts, force=True, emulator=self._emulator_status())
        self.progress.finish()
        self.summary = self._finalize(reason, code)
        self._stop_child(self.children["recorder"], "session finalized")
        return code

    def _finalize(self, reason: str, code: int) -> dict | None:
        rec = self.children["recorder"]
        for attempt in range(2):
            if not rec.alive():
                rec.proc = None
                self._start(rec)  # finalization needs the capture's only writer
                deadline = time.monotonic() + 15
                while not rec.welcomed and rec.alive() and time.monotonic() < deadline:
                    self._pump(0.05)
            deadline = time.monotonic() + 10
            while not self.outbox.empty() and time.monotonic() < deadline and rec.alive():
                self._pump(0.05)
            summary = self._request_finalize(reason, code, 15.0)
            if summary is not None:
                return summary
            log.error("finalization failed (try %d)", attempt + 1)
            rec.kill()
            self._pump_while(rec.alive, 2.0)
        return None

    def _request_finalize(self, reason: str, code: int, seconds: float) -> dict | None:
        """Ask for finalization while the loop keeps pumping (heartbeats, rows, exits);
        re-sent on a fresh socket every 3 s (finalization is idempotent)."""
        end = time.monotonic() + seconds
        while time.monotonic() < end and self.children["recorder"].alive():
            pending = self.recorder.finalize_nowait(reason, code)
            resend = min(end, time.monotonic() + 3.0)
            try:
                while time.monotonic() < resend:
                    self._pump(0.05)
                    reply = pending.reply()
                    if reply is not None:
                        return getattr(reply, "summary", None)
            finally:
                pending.close()
        return None
