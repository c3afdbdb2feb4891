"""The server's side of the MCP bridge: the ROUTER socket the session's policy asks on
(the messages: :mod:`protocol.mcp_bridge`; the policy's side: :mod:`actors.policy.mcp_bridge`).

:class:`Bridge` keeps at most one agent request pending: ``submit`` a request, ``pump`` the
policy's asks (each a :class:`~protocol.mcp_bridge.Next` for an observation), and mark it
``delivered`` once its proposal row is in the journal. Until then it is handed out again to a
restarted policy asking for the same observation, so it is proposed once.
"""

from __future__ import annotations

import time

import zmq

from protocol.mcp_bridge import AgentRequest, Next


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
            ask = Next.decode(frames[-1])
            if ask is not None:
                self.waiters.append((frames[0], ask.observation_id))
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
            self.socket.send_multipart([routing, AgentRequest(observation_id, self.pending).encode()])
        self.waiters = keep

    def close(self) -> None:
        self.socket.close(0)
