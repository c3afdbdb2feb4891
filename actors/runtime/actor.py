"""The small runtime every actor process uses.

    run_actor(name, main)   handshake with the supervisor, start the heartbeat thread,
                            call ``main(ctx)``, exit with its code.

Lifecycle and failure behaviour:

* **Handshake** — the actor sends ``hello`` (name, pid, protocol version) to the supervisor's
  control endpoint and waits for ``welcome`` or ``refused``. A refusal, or no answer within
  ``GAMERIG_HANDSHAKE_S`` seconds, exits with code 78 and the reason on stderr.
* **Heartbeats** — a thread sends ``heartbeat`` every interval and listens for ``ping`` and
  ``stop_actor``. Three intervals without hearing the supervisor mean it is gone: the stop
  event is set and, if ``main`` has not returned two intervals later, the process exits
  with code 70 (no orphans).
* **Stop** — ``stop_actor`` or SIGTERM set ``ctx.stopping``; ``main`` should return soon.
  SIGINT is ignored: the supervisor owns Ctrl-C and stops actors in order.
* **main raises** — the traceback goes to stderr and the process exits with code 1; the
  supervisor's restart policy decides what happens next.

Environment (set by the supervisor): ``GAMERIG_CONTROL`` (endpoint), ``GAMERIG_SESSION``,
``GAMERIG_START_COUNT`` (1 for the first start of this actor in the session). For bench/
work only: ``GAMERIG_PROFILE_DIR`` (cProfile of ``main``) and ``GAMERIG_HOPLOG`` (every
frame timed, ``hoplog.py``).
"""

from __future__ import annotations

import dataclasses
import logging
import os
import queue
import signal
import sys
import threading
import time
import traceback
from collections.abc import Callable

import zmq

import protocol
from protocol.actor_to_supervisor import Heartbeat, Hello, RequestStop
from protocol.supervisor_to_actor import Ping, Refused, SessionInfo, StopActor, Welcome

from . import hoplog
from .recorder_client import RecorderClient
from .transport import Client, Counters, decode_or_count, send_envelope

EXIT_REFUSED = 78
EXIT_ORPHANED = 70


@dataclasses.dataclass(frozen=True)
class ActorContext(SessionInfo):
    """What ``main`` gets: the session's facts from the welcome (``SessionInfo``), this
    actor's name and start count, and the runtime's sockets, stop event and counters."""

    name: str
    start_count: int
    zctx: zmq.Context
    stopping: threading.Event
    counters: Counters
    status: dict = dataclasses.field(default_factory=dict)  # reported in heartbeats
    outbox: queue.Queue = dataclasses.field(default_factory=queue.Queue)

    def request_stop(self, reason: str, detail: str = "") -> None:
        """Ask the supervisor to end the session (sent by the heartbeat thread)."""
        self.outbox.put(RequestStop(actor=self.name, reason=reason, detail=detail))

    def client(self, endpoint_name: str) -> Client:
        return Client(
            self.zctx, self.endpoints[endpoint_name], session=self.session_id, sender=self.name, counters=self.counters
        )

    def recorder(self) -> RecorderClient:
        """A client for the recorder whose requests give up once this actor is stopping."""
        return RecorderClient(
            self.zctx,
            self.endpoints["recorder"],
            session=self.session_id,
            sender=self.name,
            counters=self.counters,
            should_stop=self.stopping.is_set,
        )

    def setting(self, dotted: str, default=None):
        node = self.profile
        for part in dotted.split("."):
            if not isinstance(node, dict) or part not in node:
                return default
            node = node[part]
        return node

    def wait(self, seconds: float) -> bool:
        """Sleep up to ``seconds`` unless stopping; True if asked to stop."""
        return self.stopping.wait(seconds)


def _handshake(
    zctx: zmq.Context, name: str, endpoint: str, session: str, counters: Counters
) -> tuple[zmq.Socket, Welcome]:
    sock = zctx.socket(zmq.DEALER)
    sock.setsockopt(zmq.LINGER, 0)
    sock.setsockopt(zmq.ROUTING_ID, name.encode())
    sock.connect(endpoint)
    send_envelope(
        sock,
        Hello(
            actor=name, pid=os.getpid(), protocol_major=protocol.PROTOCOL_MAJOR, protocol_minor=protocol.PROTOCOL_MINOR
        ),
        session=session,
        sender=name,
    )
    deadline = time.monotonic() + float(os.environ.get("GAMERIG_HANDSHAKE_S", "15"))
    while time.monotonic() < deadline:
        if not sock.poll(200):
            continue
        env = decode_or_count(sock.recv(), counters, "control")
        if env is None:
            continue
        if isinstance(env.body, Refused):
            sys.stderr.write(f"{name}: refused by the supervisor: {env.body.reason}\n")
            sys.exit(EXIT_REFUSED)
        if isinstance(env.body, Welcome):
            return sock, env.body
    sys.stderr.write(f"{name}: no welcome from the supervisor at {endpoint}\n")
    sys.exit(EXIT_REFUSED)


def _heartbeat_loop(ctx: ActorContext, sock: zmq.Socket, main_done: threading.Event) -> None:
    interval = ctx.heartbeat_s
    last_heard = time.monotonic()
    next_beat = 0.0
    while not main_done.is_set():
        now = time.monotonic()
        if now >= next_beat:
            counters = dict(ctx.status)
            if ctx.counters.bad_frames:
                counters["bad_frames"] = dict(ctx.counters.bad_frames)
            send_envelope(sock, Heartbeat(actor=ctx.name, counters=counters), session=ctx.session_id, sender=ctx.name)
            next_beat = now + interval
        while not ctx.outbox.empty():
            send_envelope(sock, ctx.outbox.get_nowait(), session=ctx.session_id, sender=ctx.name)
        if sock.poll(int(interval * 250) + 1):
            env = decode_or_count(sock.recv(), ctx.counters, "control")
            if env is not None:
                last_heard = time.monotonic()
                if isinstance(env.body, StopActor):
                    logging.getLogger(ctx.name).info("stop requested: %s", env.body.reason)
                    ctx.stopping.set()
                elif not isinstance(env.body, Ping):
                    logging.getLogger(ctx.name).debug("ignored %s", env.type)
        if time.monotonic() - last_heard > 3 * interval:
            sys.stderr.write(f"{ctx.name}: supervisor silent for {3 * interval:.1f}s; exiting\n")
            ctx.status["orphaned"] = True
            ctx.stopping.set()
            if not main_done.wait(2 * interval + 1.0):
                os._exit(EXIT_ORPHANED)
            return
    sock.close(0)


def _start_profiler():
    """``GAMERIG_PROFILE_DIR=DIR``: profile ``main`` with cProfile (for bench/ work only)."""
    if not os.environ.get("GAMERIG_PROFILE_DIR"):
        return None
    import cProfile

    profiler = cProfile.Profile()
    profiler.enable()
    return profiler


def _dump_profile(profiler, name: str) -> None:
    if profiler is not None:
        profiler.disable()
        profiler.dump_stats(os.path.join(os.environ["GAMERIG_PROFILE_DIR"], f"{name}-{os.getpid()}.prof"))


def run_actor(name: str, main: Callable[[ActorContext], int | None]) -> None:
    level = os.environ.get("GAMERIG_LOG", "INFO")
    logging.basicConfig(level=level, format=f"%(asctime)s {name} %(levelname)s %(message)s", stream=sys.stderr)
    if level.upper() != "DEBUG":  # httpx logs every request at INFO: a line per model call
        for chatty in ("httpx", "httpcore"):  # in a session of days (GAMERIG_LOG=DEBUG shows them)
            logging.getLogger(chatty).setLevel(logging.WARNING)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    endpoint = os.environ["GAMERIG_CONTROL"]
    session = os.environ.get("GAMERIG_SESSION", "")
    zctx = zmq.Context()
    counters = Counters()
    hoplog.install(name)
    sock, welcome = _handshake(zctx, name, endpoint, session, counters)
    ctx = ActorContext(
        **{**welcome.session_fields(), "endpoints": dict(welcome.endpoints)},
        name=name,
        start_count=int(os.environ.get("GAMERIG_START_COUNT", "1")),
        zctx=zctx,
        stopping=threading.Event(),
        counters=counters,
    )
    signal.signal(signal.SIGTERM, lambda *_: ctx.stopping.set())
    main_done = threading.Event()
    beat = threading.Thread(target=_heartbeat_loop, args=(ctx, sock, main_done), name="heartbeat", daemon=True)
    beat.start()
    code = 0
    profiler = _start_profiler()
    try:
        code = main(ctx) or 0
    except Exception:  # noqa: BLE001 - the restart policy decides; the traceback is the evidence
        traceback.print_exc()
        code = 1
    finally:
        _dump_profile(profiler, name)
        flush_until = time.monotonic() + 2 * ctx.heartbeat_s
        while not ctx.outbox.empty() and beat.is_alive() and time.monotonic() < flush_until:
            time.sleep(0.01)  # let the heartbeat thread deliver a final stop request
        main_done.set()
        beat.join(timeout=2 * ctx.heartbeat_s + 1)
        hoplog.close()  # (after the heartbeat thread's last frames)
    if ctx.status.get("orphaned") and code == 0:
        code = EXIT_ORPHANED  # an abnormal exit: transient actors are restarted
    sys.stderr.flush()
    os._exit(code)
