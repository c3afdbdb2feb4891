"""The MCP bridge: the two messages between an MCP server (``supervisor mcp``) and the policy
actor of the session it runs for an agent (``actors.policy.mcp_bridge``).

The bridge is a local ZeroMQ socket pair: the server binds a ROUTER at an ``ipc://`` path in
its private 0700 directory (``policy.settings.bridge``), the policy connects a DEALER. Its
messages are small JSON objects with their own version (``"bridge": 1``), outside the msgpack
envelope of the actors' sockets; a message of another version, or that is not JSON, is
dropped by the reader (``decode`` returns None).

    policy → server  :class:`Next`          ``{"bridge": 1, "op": "next", "observation_id"}``:
                                            the policy waits for the agent's next request on
                                            this observation
    server → policy  :class:`AgentRequest`  ``{"bridge": 1, "observation_id", "request"}``:
                                            the agent's request, answering that ask

A request is ``{"id", "kind", "tool", "parameters", ...}``: ``id`` is what the proposal row
carries as ``agent_request``, ``tool`` the MCP tool that made it (``agent_tool``). The kinds
the Game Boy server sends are :data:`GAMEBOY_KINDS`; the Slay the Spire 2 server sends
``act``, ``observe`` and ``end`` (an ``act`` request adds ``action``, ``indexed``, ``arguments`` and
``reason``). Both policies read ``observe`` as a ``wait`` (``now``: the observer reads at once)
and ``end`` as a ``stop``.
"""

from __future__ import annotations

import dataclasses
import json
from typing import Any

VERSION = 1
GAMEBOY_KINDS = ("step", "checkpoint", "restore", "stop_recording", "clip", "observe", "end")


def _load(data: bytes) -> dict[str, Any] | None:
    try:
        msg = json.loads(data)
    except ValueError:
        return None
    return msg if isinstance(msg, dict) and msg.get("bridge") == VERSION else None


@dataclasses.dataclass(frozen=True)
class Next:
    """The policy's ask: the agent's next request on ``observation_id``."""

    observation_id: str

    def encode(self) -> bytes:
        return json.dumps({"bridge": VERSION, "op": "next", "observation_id": self.observation_id}).encode()

    @classmethod
    def decode(cls, data: bytes) -> Next | None:
        msg = _load(data)
        if msg is None or msg.get("op") != "next" or not isinstance(msg.get("observation_id"), str):
            return None
        return cls(msg["observation_id"])


@dataclasses.dataclass(frozen=True)
class AgentRequest:
    """The server's answer to an ask: the agent's request, for that ask's observation."""

    observation_id: str
    request: dict[str, Any]

    def encode(self) -> bytes:
        return json.dumps({"bridge": VERSION, "observation_id": self.observation_id, "request": self.request}).encode()

    @classmethod
    def decode(cls, data: bytes) -> AgentRequest | None:
        msg = _load(data)
        if msg is None or not isinstance(msg.get("observation_id"), str) or not isinstance(msg.get("request"), dict):
            return None
        return cls(msg["observation_id"], msg["request"])
