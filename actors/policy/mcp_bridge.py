"""The policy's side of the MCP bridge: a policy whose decisions are an agent's requests,
handed over by ``supervisor mcp`` (docs/mcp.md).

An agent's request does not go to the game directly: it becomes the *policy's proposal*, so it
takes the pipeline's own path — the recorder records the proposal, the actuator asks for the
fsynced intent and only then acts once, and the recorder records the result.
:class:`BridgedPolicy` is what both MCP agent policies share (``mcp_pyboy``:
:class:`.mcp_pyboy.AgentPolicy`, ``mcp_sts2``: :class:`.mcp_sts2.Sts2AgentPolicy`; neither
imports the MCP SDK):

* ``decide(obs)`` sends :class:`protocol.mcp_bridge.Next` for this observation to the server's
  ROUTER socket (``policy.settings.bridge``) and waits for the agent's request
  (:class:`protocol.mcp_bridge.AgentRequest`); an answer for another observation is dropped.
  The request goes to ``propose``, each policy's own.
* While waiting it checks every :data:`POLL_S` seconds that the server process
  (``policy.settings.server_pid``) still lives; if it is gone, it proposes ``stop``
  (``mcp_server_gone``).

A restarted policy asks again for the newest observation without a proposal; the server keeps
a request pending until its proposal row is in the journal, so it is proposed once.
"""

from __future__ import annotations

import os

import zmq

from protocol.mcp_bridge import AgentRequest, Next

from .base import Policy, PolicyObservation, Proposal

POLL_S = 0.2


def pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


class BridgedPolicy(Policy):
    """A policy whose decisions come from the MCP server over the bridge: ``decide`` asks for
    the agent's next request on this observation and hands it to ``propose``."""

    SOURCE = "agent"

    def __init__(self, settings: dict, session: dict):
        super().__init__(settings, session)
        for key in ("bridge", "server_pid"):
            if key not in settings:
                raise ValueError(f"policy.settings.{key} is required by the agent policy (supervisor mcp)")
        self.endpoint, self.server_pid = str(settings["bridge"]), int(settings["server_pid"])
        self.socket: zmq.Socket | None = None

    def decide(self, obs: PolicyObservation) -> Proposal:
        request = self.ask(obs)
        if request is None:
            return Proposal.stop(
                "mcp_server_gone",
                source=self.SOURCE,
                extra={"detail": f"the MCP server (pid {self.server_pid}) exited"},
            )
        return self.propose(request, obs)

    def propose(self, request: dict, obs: PolicyObservation) -> Proposal:
        raise NotImplementedError

    def ask(self, obs: PolicyObservation) -> dict | None:
        """The agent's request for this observation; None once the server process is gone."""
        if self.socket is None:
            self.socket = zmq.Context.instance().socket(zmq.DEALER)
            self.socket.setsockopt(zmq.LINGER, 0)
            self.socket.connect(self.endpoint)
        self.socket.send(Next(obs.observation_id).encode())
        while True:
            if self.socket.poll(int(POLL_S * 1000)):
                reply = AgentRequest.decode(self.socket.recv())
                if reply is not None and reply.observation_id == obs.observation_id:
                    return reply.request
            elif not pid_alive(self.server_pid):
                return None
