"""The local socket between the MCP server and the session's policy actor.

An agent's request does not go to the emulator directly: it becomes the *policy's proposal*,
so it takes the pipeline's own path — the recorder records the proposal, the actuator asks
for the fsynced intent and only then sends exactly one request to the emulator actor, and
the recorder records the result. The policy that does this is :class:`AgentPolicy`
(``policy.module: supervisor.mcp.bridge:AgentPolicy``; it never imports the MCP SDK):

* ``decide(obs)`` sends ``{"bridge": 1, "op": "next", "observation_id"}`` to the server's
  ROUTER socket (``policy.settings.bridge``, an ``ipc://`` path in the server's private 0700
  directory) and waits for the agent's next request: ``{"bridge": 1, "observation_id",
  "request": {"id", "kind", "parameters"}}``. Replies for another observation are dropped.
* ``kind`` maps to one proposal: ``step`` → ``step {buttons, frames, samples}``,
  ``checkpoint`` → ``checkpoint {label}``, ``restore`` → ``restore {checkpoint_id}``,
  ``stop_recording`` → ``stop_recording {outcome, reason}``, ``clip`` → ``clip {request,
  workspace}`` (a GIF of the live recording, made by its emulator) (all executed), ``observe`` →
  a ``wait`` (the observer then reads again: a fresh observation; at once when the request says
  ``now``, its row then saying ``read_now``), ``end`` → a ``stop``
  (the session ends with reason ``stop_command``). Every proposal row carries
  ``agent_request`` (the request id) and ``agent_tool``, which is how the server finds the
  rows of its request in the journal.
* While waiting it checks every 0.2 s that the server process (``policy.settings.server_pid``)
  still lives; if it is gone, it proposes ``stop`` (``mcp_server_gone``).

A restarted policy asks again for the newest observation without a proposal; the server
keeps a request pending until its proposal row is in the journal, so it is proposed once.
:class:`Bridge` is the server's side: ``submit`` a request, ``pump`` the incoming asks, and
``delivered`` once the proposal row was seen.
"""
from __future__ import annotations

import json
import os
import time

import zmq

from actors.policy.base import Policy, PolicyObservation as Observation, Proposal

VERSION = 1
POLL_S = 0.2
KINDS = ("step", "checkpoint", "restore", "stop_recording", "clip", "observe", "end")


def pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def to_proposal(request: dict) -> Proposal:
    """The proposal that carries one agent request (see the module docstring)."""
    kind, params, rid = request["kind"], request.get("parameters") or {}, request["id"]
    extra = {"agent_request": rid, "agent_tool": request.get("tool", kind)}
    reason = f"agent request {rid} ({extra['agent_tool']})"
    if kind == "observe":
        if request.get("now"):
            extra["read_now"] = True
        return Proposal.wait(f"{reason}: read the emulator again", source="agent", extra=extra)
    if kind == "end":
        return Proposal.stop("stop_command", source="agent", extra=extra)
    if kind not in KINDS:
        return Proposal.wait(f"{reason}: unknown kind {kind!r}", source="agent", extra=extra)
    return Proposal(kind, dict(params), reason, source="agent", extra=extra)


class BridgedPolicy(Policy):
    """A policy whose decisions come from the MCP server over the bridge: ``decide`` asks for
    the agent's next request on this observation and hands it to ``propose``."""

    def __init__(self, settings: dict, session: dict):
        super().__init__(settings, session)
        for key in ("bridge", "server_pid"):
            if key not in settings:
                raise ValueError(f"policy.settings.{key} is required by the agent policy (supervisor mcp)")
        self.endpoint, self.server_pid = str(settings["bridge"]), int(settings["server_pid"])
        self.socket: zmq.Socket | None = None

    def decide(self, obs: Observation) -> Proposal:
        request = self.ask(obs)
        if request is None:
            return Proposal.stop("mcp_server_gone", source=self.SOURCE,
                                 extra={"detail": f"the MCP server (pid {self.server_pid}) exited"})
        return self.propose(request, obs)

    SOURCE = "agent"

    def propose(self, request: dict, obs: Observation) -> Proposal:
        raise NotImplementedError

    def ask(self, obs: Observation) -> dict | None:
        """The agent's request for this observation; None once the server process is gone."""
        if self.socket is None:
            self.socket = zmq.Context.instance().socket(zmq.DEALER)
            self.socket.setsockopt(zmq.LINGER, 0)
            self.socket.connect(self.endpoint)
        self.socket.send(json.dumps({"bridge": VERSION, "op": "next",
                                     "observation_id": obs.observation_id}).encode())
        while True:
            if self.socket.poll(int(POLL_S * 1000)):
                reply = _decode(self.socket.recv())
                if reply and reply.get("observation_id") == obs.observation_id and isinstance(
                        reply.get("request"), dict):
                    return reply["request"]
            elif not pid_alive(self.server_pid):
                return None


class AgentPolicy(BridgedPolicy):
    """Proposes exactly what the agent asked for, one request per observation."""

    def propose(self, request: dict, obs: Observation) -> Proposal:
        return to_proposal(request)


def _decode(data: bytes) -> dict | None:
    try:
        msg = json.loads(data)
    except ValueError:
        return None
    return msg if isinstance(msg, dict) and msg.get("bridge") == VERSION else None


class Bridge:
    """The server's side: a ROUTER bound at ``endpoint`` (an ipc:// path)."""

    def __init__(self, zctx: zmq.Context, endpoint: str):
        self.endpoint = endpoint
        self.socket = zctx.socket(zmq.ROUTER)
        self.socket.setsockopt(zmq.LINGER, 0)
        self.socket.bind(endpoint)
        self.pending: dict | None = None  # the request not yet seen as a proposal row
        self.served_for: str | None = None  # the observation it was first served for
        self.waiters: list[tuple[bytes, str]] = []  # (routing id, observation id) asking for one
        self.asked_at = 0.0  # when the policy last asked (it waits on an observation)

    def reset(self) -> None:
        """Forget the pending request and the asks: a session starting must never be handed a
        request made to an earlier one (a call that failed when that session ended, whose agent
        was told so)."""
        self.pending = self.served_for = None
        self.waiters = []

    def submit(self, request: dict) -> None:
        self.pending, self.served_for = request, None
        self._serve()

    def delivered(self, request_id: str) -> None:
        if self.pending is not None and self.pending["id"] == request_id:
            self.pending = self.served_for = None

    def pump(self) -> None:
        """Read every waiting ask; answer them when a request is pending."""
        while self.socket.poll(0):
            frames = self.socket.recv_multipart()
            msg = _decode(frames[-1])
            if msg and msg.get("op") == "next" and isinstance(msg.get("observation_id"), str):
                self.waiters.append((frames[0], msg["observation_id"]))
                self.asked_at = time.monotonic()
        self._serve()

    def _serve(self) -> None:
        """Answer the asks with the pending request. Once served for an observation, it is
        served again only for that same observation (a restarted policy asking again): an
        ask for a later one means the request was proposed, its row not yet read here."""
        if self.pending is None or not self.waiters:
            return
        keep = []
        for routing, observation_id in self.waiters:  # an ask of a dead policy is dropped by ZeroMQ
            if self.served_for not in (None, observation_id):
                keep.append((routing, observation_id))
                continue
            self.served_for = observation_id
            self.socket.send_multipart([routing, json.dumps({"bridge": VERSION, "observation_id": observation_id,
                                                             "request": self.pending}).encode()])
        self.waiters = keep

    def close(self) -> None:
        self.socket.close(0)
