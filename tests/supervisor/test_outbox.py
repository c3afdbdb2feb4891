"""``supervisor.outbox``: lifecycle events owed to the recorder, sent without blocking and
recorded exactly once, against a real ``Recorder`` serving on ipc sockets in a thread."""

from __future__ import annotations

import os
import shutil
import tempfile
import threading
import time

import pytest
import zmq

from actors.recorder.rules import Recorder
from actors.recorder.serve import RecorderServer
from actors.runtime.actor import ActorContext
from actors.runtime.recorder_client import RecorderClient
from actors.runtime.transport import Counters
from protocol.events import ActorExit, ActorStart, SessionStopping
from protocol.journal import scan_file
from supervisor.outbox import Outbox

pytestmark = pytest.mark.timeout(60)
SESSION = "20261201T000000Z-outboxtest"


class Served:
    """A recorder serving in a thread, and an outbox that owes it events."""

    def __init__(self, root: str):
        self.sockdir = tempfile.mkdtemp(prefix="outbox-", dir="/tmp")  # unix socket paths are short
        endpoint = f"ipc://{self.sockdir}/r.sock"
        self.ctx = ActorContext(
            name="recorder",
            session_id=SESSION,
            session_dir=os.path.join(root, "sessions", SESSION),
            capture_root=root,
            endpoints={"recorder": endpoint},
            profile={},
            heartbeat_s=1.0,
            start_count=1,
            zctx=zmq.Context.instance(),
            stopping=threading.Event(),
            counters=Counters(),
        )
        self.recorder = Recorder(self.ctx)
        self.thread = threading.Thread(target=RecorderServer(self.recorder, self.ctx).serve, daemon=True)
        self.thread.start()
        self.client = RecorderClient(self.ctx.zctx, endpoint, session=SESSION, sender="supervisor", counters=Counters())
        self.outbox = Outbox(self.client)

    def rows(self, kind: str) -> list[dict]:
        return [r for r in scan_file(self.recorder.journal_path).rows if r["event"] == kind]

    def pump_until(self, condition, seconds: float = 10.0) -> None:
        deadline = time.monotonic() + seconds
        while not condition():
            assert time.monotonic() < deadline, "the outbox did not get there in time"
            self.outbox.pump()
            sock = self.outbox.socket
            if sock is not None:
                sock.poll(20)

    def close(self) -> None:
        self.outbox.close()
        self.client.close()
        self.ctx.stopping.set()
        self.thread.join(10)
        shutil.rmtree(self.sockdir, ignore_errors=True)


@pytest.fixture
def served(tmp_path):
    s = Served(str(tmp_path / "capture"))
    yield s
    s.close()


def test_events_are_recorded_in_order_with_their_keys(served):
    events = [
        ActorStart(actor="policy", pid=41, start_count=1, module="actors.policy"),
        ActorExit(actor="policy", pid=41, code=None, signal="SIGKILL", expected=False),
        SessionStopping(reason="max_steps", detail=""),
    ]
    for e in events:
        served.outbox.put(e)
    assert served.outbox.socket is None  # nothing is sent until the loop pumps
    served.pump_until(served.outbox.empty)
    rows = [r for r in scan_file(served.recorder.journal_path).rows if r["event"] != "session_start"]
    assert [r["event_key"] for r in rows] == ["supervisor:1", "supervisor:2", "supervisor:3"]
    own = [{k: v for k, v in r.items() if k in e.to_row()} for r, e in zip(rows, events)]
    assert own == [e.to_row() for e in events]
    assert "cpus" not in rows[0]  # an optional field left out when None
    assert served.outbox.socket is None  # nothing in flight once everything is recorded


def test_an_event_sent_again_after_a_lost_reply_is_recorded_once(served):
    served.outbox.put(SessionStopping(reason="sigterm", detail=""))
    served.outbox.pump()
    first = served.outbox.pending
    deadline = time.monotonic() + 10
    while not served.rows("session_stopping"):
        assert time.monotonic() < deadline, "the recorder did not record the event"
        time.sleep(0.02)
    first.close()  # the reply is lost with its socket (as when the recorder restarts)
    served.outbox.RESEND_S = 60.0
    served.outbox.pump()
    assert served.outbox.pending is first and not served.outbox.empty()  # waits RESEND_S
    served.outbox.RESEND_S = 0.0
    served.outbox.pump()  # sent again, same key, on a fresh socket
    assert served.outbox.pending is not first and served.outbox.socket is not None
    served.pump_until(served.outbox.empty)
    assert len(served.rows("session_stopping")) == 1
