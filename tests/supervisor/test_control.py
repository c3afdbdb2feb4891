"""``supervisor.control``: the control endpoint's handlers, in-process over real ZeroMQ
sockets (an inproc ROUTER, DEALER peers) with real child processes for the pids. The whole
session around them is tested in tests/spine/test_supervision.py and tests/attach."""

from __future__ import annotations

import dataclasses
import os
import time
import uuid

import pytest
import zmq

import protocol
from actors.runtime.transport import Counters, send_envelope
from protocol.actor_to_supervisor import Heartbeat, Hello, RequestStop
from protocol.cli_to_supervisor import AttachRequest, DetachRequest, StatusRequest, StopRequest
from protocol.events import ActorRefused, ControlRefused, Event, StopRequested, TapAttached, TapDetached
from protocol.supervisor_to_actor import Ping, Refused, SessionInfo, StopActor, Welcome
from protocol.supervisor_to_cli import AttachReply, ControlError, DetachReply, StatusReply, StopReply
from supervisor.children import Child
from supervisor.control import SILENT_BEATS, Control
from supervisor.taps import TapRegistry

TOKEN = "session-token"
HEARTBEAT_S = 0.5
STARTUP_S = 10.0


class Desk:
    """A ``Control`` with its collaborators: the journal rows it recorded, the stops it asked
    for, and a child process per actor name."""

    def __init__(self, tmp_path):
        self.zctx = zmq.Context()
        self.endpoint = f"inproc://control-{uuid.uuid4().hex}"
        self.session = SessionInfo(
            session_id="sess-1",
            session_dir=str(tmp_path / "s"),
            capture_root=str(tmp_path),
            endpoints={"control": self.endpoint, "stream": "ipc:///nowhere"},
            profile={"name": "unit"},
            heartbeat_s=HEARTBEAT_S,
        )
        self.rows: list[Event] = []
        self.stops: list[tuple[str, str]] = []
        self.children = {
            n: Child(name=n, module="tests.supervisor.idle", args=[], env={}, log_path=str(tmp_path / f"{n}.log"))
            for n in ("policy", "observer")
        }
        self.counters = Counters()
        self.taps = TapRegistry(
            session_token=TOKEN, streams={"ipc": "ipc:///stream"}, record=self.record, status=self.status
        )
        self.control = Control(
            self.zctx,
            self.session,
            token=TOKEN,
            startup_timeout_s=STARTUP_S,
            children=self.children,
            taps=self.taps,
            counters=self.counters,
            record=self.record,
            request_stop=lambda reason, detail: self.stops.append((reason, detail)),
            status=self.status,
        )
        self.peers: list[zmq.Socket] = []

    def record(self, event: Event) -> None:
        self.rows.append(event)

    def status(self) -> dict:
        return {"session_id": self.session.session_id, "steps": 7}

    def peer(self, name: bytes | None = None) -> zmq.Socket:
        sock = self.zctx.socket(zmq.DEALER)
        sock.setsockopt(zmq.LINGER, 0)
        if name:
            sock.setsockopt(zmq.ROUTING_ID, name)
        sock.connect(self.endpoint)
        self.peers.append(sock)
        return sock

    def serve_until(self, condition, seconds: float = 5.0) -> None:
        """Let the control answer what arrives until ``condition()`` holds (or fail)."""
        deadline = time.monotonic() + seconds
        while not condition():
            assert time.monotonic() < deadline, "the control did not get there in time"
            if self.control.socket.poll(20):
                self.control.handle_waiting()

    def ask(self, sock: zmq.Socket, body, sender: str = "cli"):
        """Send ``body`` and return the reply the control sends back."""
        send_envelope(sock, body, session=self.session.session_id, sender=sender)
        return self.answer(sock)

    def answer(self, sock: zmq.Socket):
        self.serve_until(lambda: sock.poll(0))
        return protocol.decode(sock.recv()).body

    def close(self) -> None:
        for c in self.children.values():
            c.kill()
            c.wait(5)
        for sock in self.peers:
            sock.close(0)
        self.control.close()
        self.zctx.term()


@pytest.fixture
def desk(tmp_path):
    d = Desk(tmp_path)
    yield d
    d.close()


def hello(actor: str, pid: int, major: int = protocol.PROTOCOL_MAJOR) -> Hello:
    return Hello(actor=actor, pid=pid, protocol_major=major, protocol_minor=protocol.PROTOCOL_MINOR)


def welcomed(desk: Desk, name: str = "policy") -> zmq.Socket:
    child = desk.children[name]
    child.start()
    sock = desk.peer(name.encode())
    assert isinstance(desk.ask(sock, hello(name, child.pid), sender=name), Welcome)
    return sock


def test_the_actor_the_supervisor_started_is_welcomed_with_the_session_facts(desk):
    child = desk.children["policy"]
    child.start()
    sock = desk.peer(b"policy")
    reply = desk.ask(sock, hello("policy", child.pid), sender="policy")
    assert isinstance(reply, Welcome)
    assert (reply.actor, reply.session_id, reply.heartbeat_s) == ("policy", "sess-1", HEARTBEAT_S)
    assert reply.endpoints == desk.session.endpoints and reply.profile == {"name": "unit"}
    assert SessionInfo(**reply.session_fields()) == desk.session  # every fact, none dropped
    assert child.welcomed and desk.rows == []


def test_a_process_the_supervisor_did_not_start_is_refused(desk):
    desk.children["policy"].start()
    sock = desk.peer(b"policy")
    reply = desk.ask(sock, hello("policy", os.getpid()), sender="policy")
    assert isinstance(reply, Refused) and "was not started by this supervisor" in reply.reason
    reply = desk.ask(desk.peer(b"stranger"), hello("stranger", os.getpid()), sender="stranger")
    assert isinstance(reply, Refused) and "'stranger'" in reply.reason
    assert not desk.children["policy"].welcomed and desk.rows == []


def test_another_protocol_major_in_a_hello_is_refused_and_recorded(desk):
    child = desk.children["policy"]
    child.start()
    reply = desk.ask(desk.peer(b"policy"), hello("policy", child.pid, major=protocol.PROTOCOL_MAJOR + 1))
    assert isinstance(reply, Refused) and "is not accepted" in reply.reason
    assert desk.rows == [ActorRefused(actor="policy", reason=reply.reason)]
    assert not child.welcomed


def test_an_envelope_of_another_version_is_refused_and_garbage_is_counted(desk):
    sock = desk.peer()
    env = protocol.wrap(StatusRequest(token=TOKEN), session="sess-1", sender="cli")
    sock.send(protocol.encode(dataclasses.replace(env, major=protocol.PROTOCOL_MAJOR + 1)))
    reply = desk.answer(sock)
    assert isinstance(reply, Refused) and str(protocol.PROTOCOL_MAJOR + 1) in reply.reason
    sock.send(b"not msgpack at all")
    desk.serve_until(lambda: sum(desk.counters.bad_frames.values()) == 2)
    assert not sock.poll(100), "garbage gets no answer"


def test_a_heartbeat_is_the_actors_status(desk):
    sock = welcomed(desk)
    child = desk.children["policy"]
    child.last_heard = 0.0
    send_envelope(sock, Heartbeat(actor="policy", counters={"proposals": 3}), session="sess-1", sender="policy")
    desk.serve_until(lambda: child.status == {"proposals": 3})
    assert time.monotonic() - child.last_heard < 5


def test_an_actors_request_stop_is_recorded_and_stops_the_session(desk):
    sock = welcomed(desk)
    send_envelope(
        sock, RequestStop(actor="policy", reason="run_changed", detail="new run"), session="sess-1", sender="policy"
    )
    desk.serve_until(lambda: desk.stops)
    assert desk.stops == [("run_changed", "asked by policy: new run")]
    assert desk.rows == [StopRequested(actor="policy", reason="run_changed", detail="new run")]


def test_status_and_stop_need_the_session_token(desk):
    cli = desk.peer()
    refused = desk.ask(cli, StatusRequest(token="wrong"))
    assert isinstance(refused, ControlError) and refused.code == "unauthorized"
    assert desk.rows == [ControlRefused(request="status_request", reason="bad token")]
    status = desk.ask(cli, StatusRequest(token=TOKEN))
    assert isinstance(status, StatusReply) and status.status == desk.status()
    assert desk.stops == []
    stop = desk.ask(cli, StopRequest(token=TOKEN))
    assert isinstance(stop, StopReply) and stop.accepted and "sess-1" in stop.detail
    assert desk.stops == [("stop_command", "")]


def test_a_tap_attaches_reads_status_cannot_write_and_detaches(desk):
    tap = desk.peer()
    assert isinstance(desk.ask(tap, AttachRequest(token="wrong", name="t")), ControlError)
    attached = desk.ask(tap, AttachRequest(token=TOKEN, name="t", pid=42))
    assert isinstance(attached, AttachReply) and attached.stream == "ipc:///stream"
    assert isinstance(desk.ask(tap, StatusRequest(token=attached.tap_token)), StatusReply)
    write = desk.ask(tap, StopRequest(token=attached.tap_token))
    assert isinstance(write, ControlError) and write.code == "read_only" and desk.stops == []
    assert isinstance(desk.ask(tap, DetachRequest(token=attached.tap_token)), DetachReply)
    assert desk.rows == [
        ControlRefused(request="attach_request", reason="bad token", name="t"),
        TapAttached(tap_id=attached.tap_id, name="t", pid=42, transport="ipc"),
        ControlRefused(request="stop_request", reason="read-only tap token", tap_id=attached.tap_id),
        TapDetached(tap_id=attached.tap_id, name="t", reason="detach"),
    ]


def test_pings_go_to_welcomed_actors_and_silence_is_named(desk):
    sock = welcomed(desk)
    desk.children["observer"].start()  # started, never said hello
    now = time.monotonic()
    assert desk.control.ping_all(now) == []
    assert sock.poll(2000) and isinstance(protocol.decode(sock.recv()).body, Ping)
    later = now + SILENT_BEATS * HEARTBEAT_S + 1
    assert [c.name for c in desk.control.ping_all(later)] == ["policy"]  # observer: start-up grace
    assert [c.name for c in desk.control.ping_all(later + STARTUP_S)] == ["policy", "observer"]
    desk.children["policy"].stopping = True  # being stopped: neither pinged nor judged
    while sock.poll(0):
        sock.recv()
    assert [c.name for c in desk.control.ping_all(later + STARTUP_S)] == ["observer"]
    assert not sock.poll(200)


def test_tell_reaches_one_actor(desk):
    sock = welcomed(desk)
    desk.control.tell("policy", StopActor(reason="session stopping"))
    assert sock.poll(2000)
    body = protocol.decode(sock.recv()).body
    assert isinstance(body, StopActor) and body.reason == "session stopping"
