"""Fixtures for the recorder's module tests: a real ``Recorder`` on real files under the
test's tmp_path (no processes), and a real ``RecorderServer`` on loopback sockets."""

from __future__ import annotations

import os
import shutil
import tempfile
import threading
import time

import pytest
import zmq

import protocol
from actors.recorder.rules import Recorder
from actors.recorder.serve import RecorderServer
from actors.runtime.actor import ActorContext
from actors.runtime.transport import Counters, send_envelope
from protocol.journal import scan_file
from protocol.message import Message
from protocol.to_recorder import RecordProposal, StoreObservation

SESSION = "20261201T000000Z-recordertest"


def context(
    root: str, *, profile: dict | None = None, start_count: int = 1, endpoints: dict | None = None
) -> ActorContext:
    return ActorContext(
        name="recorder",
        session_id=SESSION,
        session_dir=os.path.join(root, "sessions", SESSION),
        capture_root=root,
        endpoints=endpoints or {},
        profile=profile or {},
        heartbeat_s=1.0,
        start_count=start_count,
        zctx=zmq.Context.instance(),
        stopping=threading.Event(),
        counters=Counters(),
    )


def rows(rec: Recorder) -> list[dict]:
    return scan_file(rec.journal_path).rows


def kinds(rec: Recorder) -> list[str]:
    return [r["event"] for r in rows(rec)]


def observe(rec: Recorder, read_id: str, state: dict | None = None):
    return rec.on_store_observation(StoreObservation(read_id=read_id, state=state or {"state_type": "map"}))


def proposal(pid: str, oid: str, wish: str = "execute", action: str | None = "end_turn", **kw) -> RecordProposal:
    return RecordProposal(
        proposal_id=pid,
        observation_id=oid,
        action=action,
        parameters={},
        reason="because",
        source="test",
        wish=wish,
        **kw,
    )


@pytest.fixture
def root(tmp_path) -> str:
    return str(tmp_path / "capture")


@pytest.fixture
def make_recorder(root):
    made: list[Recorder] = []

    def make(**kw) -> Recorder:
        rec = Recorder(context(root, **kw))
        made.append(rec)
        return rec

    yield make
    for rec in made:
        rec.writer.close()


class Served:
    """A ``RecorderServer`` serving in a thread, and a DEALER to ask it things."""

    def __init__(self, root: str, profile: dict | None = None):
        self.sockdir = tempfile.mkdtemp(prefix="rec-", dir="/tmp")  # unix socket paths are short
        ends = {"recorder": f"ipc://{self.sockdir}/r.sock", "stream": f"ipc://{self.sockdir}/s.sock"}
        self.ctx = context(root, profile=profile, endpoints=ends)
        self.recorder = Recorder(self.ctx)
        self.server = RecorderServer(self.recorder, self.ctx)
        self.thread = threading.Thread(target=self.server.serve, daemon=True)
        self.thread.start()
        self.socks = {}
        for name, end in ends.items():
            sock = self.ctx.zctx.socket(zmq.DEALER)
            sock.setsockopt(zmq.LINGER, 0)
            sock.connect(end)
            self.socks[name] = sock

    def send(self, body: Message, endpoint: str = "recorder") -> str:
        return send_envelope(self.socks[endpoint], body, session=SESSION, sender="test")

    def receive(self, endpoint: str = "recorder", wait_s: float = 10.0) -> protocol.Envelope:
        sock = self.socks[endpoint]
        assert sock.poll(int(wait_s * 1000)), f"no reply on {endpoint} within {wait_s} s"
        return protocol.decode(sock.recv())

    def ask(self, body: Message, endpoint: str = "recorder") -> Message:
        msg_id = self.send(body, endpoint)
        env = self.receive(endpoint)
        assert env.body.reply_to == msg_id
        return env.body

    def stop_requests(self) -> list:
        out = []
        while not self.ctx.outbox.empty():
            out.append(self.ctx.outbox.get_nowait())
        return out

    def close(self) -> None:
        self.ctx.stopping.set()
        self.thread.join(10)
        for sock in self.socks.values():
            sock.close(0)
        shutil.rmtree(self.sockdir, ignore_errors=True)


@pytest.fixture
def serve(root):
    made: list[Served] = []

    def make(profile: dict | None = None) -> Served:
        s = Served(root, profile)
        made.append(s)
        return s

    yield make
    for s in made:
        s.close()
        assert not s.thread.is_alive(), "the server did not stop"


def wait_until(check, what: str, wait_s: float = 10.0):
    end = time.monotonic() + wait_s
    while time.monotonic() < end:
        value = check()
        if value:
            return value
        time.sleep(0.01)
    raise AssertionError(f"timed out waiting for {what}")
