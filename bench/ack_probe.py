"""The intent-acknowledgement probe of ``bench/pipeline.py``: ``AckProbe`` starts a real
recorder process (``python -m actors.recorder``) for the bench behind a minimal stand-in for
the supervisor's control endpoint (hello → welcome, pings), and is the recorder's client over
the real wire (ZeroMQ DEALER, msgpack envelopes), timing each request from send to the
decoded reply, and a standing ``AwaitIntent``'s ``IntentAck`` as the pipeline's steps get it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import threading
import time
import uuid

import zmq

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if REPO not in sys.path:
    sys.path.insert(0, REPO)

import protocol  # noqa: E402
from protocol.actor_to_supervisor import Hello  # noqa: E402
from protocol.from_recorder import IntentAck, ObservationStored, ProposalRecorded, Recorded  # noqa: E402
from protocol.supervisor_to_actor import Ping, StopActor, Welcome  # noqa: E402
from protocol.to_recorder import AwaitIntent, RecordIntent, RecordProposal, RecordResult, StoreObservation  # noqa: E402


class AckProbe:
    """A real recorder process, with this object standing in for the supervisor's control
    endpoint (welcome, pings), and a request client over the recorder's real endpoint."""

    def __init__(self, workdir: str, profile: dict, heartbeat_s: float = 0.5):
        self.sock_dir = tempfile.mkdtemp(prefix="gr-ack-")  # short: unix socket paths are limited
        self.root = os.path.join(workdir, "capture")
        self.sid = "ackprobe-" + uuid.uuid4().hex[:12]
        self.endpoints = {n: f"ipc://{self.sock_dir}/{n}.sock" for n in ("control", "recorder")}
        self.profile = json.loads(json.dumps(profile))
        self.profile.setdefault("capture", {})["root"] = self.root
        self.hb = heartbeat_s
        self.zctx = zmq.Context()
        self.welcomed = threading.Event()
        self.done = threading.Event()
        self.log = open(os.path.join(workdir, "recorder.log"), "w", encoding="utf-8")
        env = dict(
            os.environ,
            GAMERIG_CONTROL=self.endpoints["control"],
            GAMERIG_SESSION=self.sid,
            GAMERIG_ACTOR="recorder",
            GAMERIG_START_COUNT="1",
        )
        env.pop("GAMERIG_PROFILE_DIR", None)
        self.thread = threading.Thread(target=self._control, daemon=True)
        self.thread.start()
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "actors.recorder"], cwd=REPO, env=env, stdout=self.log, stderr=self.log
        )
        if not self.welcomed.wait(20):
            self.close()
            raise RuntimeError(f"the recorder sent no hello (see {self.log.name})")
        self.client = self.zctx.socket(zmq.DEALER)
        self.client.setsockopt(zmq.LINGER, 0)
        self.client.connect(self.endpoints["recorder"])
        self.standing = self.zctx.socket(zmq.DEALER)  # the actuator's standing intent
        self.standing.setsockopt(zmq.LINGER, 0)
        self.standing.connect(self.endpoints["recorder"])

    def _control(self) -> None:
        sock = self.zctx.socket(zmq.ROUTER)
        sock.setsockopt(zmq.LINGER, 0)
        sock.bind(self.endpoints["control"])
        routing = None
        next_ping = 0.0
        while not self.done.is_set():
            if sock.poll(50):
                frames = sock.recv_multipart()
                env = protocol.decode(frames[-1])
                if isinstance(env.body, Hello):
                    routing = frames[:-1]
                    self._send(
                        sock,
                        routing,
                        Welcome(
                            actor="recorder",
                            session_id=self.sid,
                            session_dir=os.path.join(self.root, "sessions", self.sid),
                            capture_root=self.root,
                            endpoints=self.endpoints,
                            profile=self.profile,
                            heartbeat_s=self.hb,
                        ),
                    )
                    self.welcomed.set()
            if routing is not None and time.monotonic() >= next_ping:
                self._send(sock, routing, Ping())
                next_ping = time.monotonic() + self.hb
        if routing is not None:
            self._send(sock, routing, StopActor(reason="bench done"))
        sock.close(0)

    def _send(self, sock: zmq.Socket, routing: list[bytes], body) -> None:
        sock.send_multipart([*routing, protocol.encode(protocol.wrap(body, session=self.sid, sender="bench"))])

    def request(self, body, expect: type, wait_s: float = 30.0):
        env = protocol.wrap(body, session=self.sid, sender="bench-probe")
        self.client.send(protocol.encode(env))
        end = time.monotonic() + wait_s
        while time.monotonic() < end:
            if self.client.poll(int((end - time.monotonic()) * 1000) + 1):
                reply = protocol.decode(self.client.recv()).body
                if getattr(reply, "reply_to", None) == env.id:
                    if not isinstance(reply, expect):
                        raise RuntimeError(f"{body.TYPE}: the recorder answered {reply!r}")
                    return reply
        raise RuntimeError(f"{body.TYPE}: no reply from the recorder within {wait_s:g}s")

    def probe(self, states: list[dict], count: int) -> dict[str, list[float]]:
        """``count`` steps, each a fresh observation, an executable proposal, its intent and
        its result; every round trip (send → reply decoded) timed, in ms, by request type."""
        out: dict[str, list[float]] = {
            n: [] for n in ("store_observation", "record_proposal", "record_intent", "record_result", "await_intent")
        }
        for i in range(count):
            self._standing_step(out, states[i % len(states)])
            stored = self._timed(
                out,
                StoreObservation(read_id=uuid.uuid4().hex, state=states[i % len(states)], read_ms=0.0),
                ObservationStored,
            )
            pid = uuid.uuid4().hex
            self._timed(
                out,
                RecordProposal(
                    proposal_id=pid,
                    observation_id=stored.observation_id,
                    action="end_turn",
                    parameters={},
                    reason="ack probe",
                    source="bench",
                    wish="execute",
                ),
                ProposalRecorded,
            )
            ack = self._timed(out, RecordIntent(proposal_id=pid, requester="bench-probe"), IntentAck)
            self._timed(
                out,
                RecordResult(
                    attempt_id=ack.attempt_id,
                    outcome="accepted",
                    http_status=200,
                    response={"status": "ok"},
                    request_ms=0.0,
                ),
                Recorded,
            )
        return out

    def _standing_step(self, out: dict, state: dict) -> None:
        """One step as the pipeline takes it: a standing intent parked (``await_intent``, on
        a socket of its own, as the actuator's), then the proposal; timed from sending the
        proposal to the decoded ``intent_ack`` on the standing socket (the proposal's rows,
        the attempt row, their one fsync, the ack)."""
        stored = self.request(StoreObservation(read_id=uuid.uuid4().hex, state=state, read_ms=0.0), ObservationStored)
        env = protocol.wrap(
            AwaitIntent(requester="bench-standing", wait_ms=30_000), session=self.sid, sender="bench-actuator"
        )
        self.standing.send(protocol.encode(env))
        start = time.perf_counter()
        self.request(
            RecordProposal(
                proposal_id=uuid.uuid4().hex,
                observation_id=stored.observation_id,
                action="end_turn",
                parameters={},
                reason="ack probe",
                source="bench",
                wish="execute",
            ),
            ProposalRecorded,
        )
        if not self.standing.poll(30_000):
            raise RuntimeError("await_intent: no intent_ack within 30 s")
        ack = protocol.decode(self.standing.recv()).body
        if not isinstance(ack, IntentAck) or ack.reply_to != env.id:
            raise RuntimeError(f"await_intent: the recorder answered {ack!r}")
        out["await_intent"].append((time.perf_counter() - start) * 1000)
        self.request(
            RecordResult(
                attempt_id=ack.attempt_id,
                outcome="accepted",
                http_status=200,
                response={"status": "ok"},
                request_ms=0.0,
            ),
            Recorded,
        )

    def _timed(self, out: dict, body, expect: type):
        start = time.perf_counter()
        reply = self.request(body, expect)
        out[body.TYPE].append((time.perf_counter() - start) * 1000)
        return reply

    def close(self) -> None:
        self.done.set()
        self.thread.join(5)
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(5)
        if hasattr(self, "client"):
            self.client.close(0)
            self.standing.close(0)
        self.zctx.term()
        self.log.close()
        for name in os.listdir(self.sock_dir):
            os.unlink(os.path.join(self.sock_dir, name))
        os.rmdir(self.sock_dir)
