"""The MCP bridge's two messages: their bytes pinned, each round-tripped, and what a reader drops.

A failure of a golden-bytes check means the bridge's wire changed: an MCP server and a policy
actor of different versions would no longer understand each other (raise ``VERSION``)."""

from __future__ import annotations

import pytest

from protocol.mcp_bridge import VERSION, AgentRequest, Next

REQUEST = {
    "id": "ab12cd34-000001",
    "kind": "step",
    "tool": "emulator_step",
    "parameters": {"buttons": ["a"], "frames": 8, "samples": 0},
}


def test_the_bytes_are_pinned():
    assert Next("o-000001").encode() == b'{"bridge": 1, "op": "next", "observation_id": "o-000001"}'
    assert (
        AgentRequest("o-000001", {"id": "r-1", "kind": "observe"}).encode()
        == b'{"bridge": 1, "observation_id": "o-000001", "request": {"id": "r-1", "kind": "observe"}}'
    )


def test_each_message_round_trips():
    assert Next.decode(Next("o-000001").encode()) == Next("o-000001")
    assert AgentRequest.decode(AgentRequest("o-000002", REQUEST).encode()) == AgentRequest("o-000002", REQUEST)


@pytest.mark.parametrize(
    "data",
    [
        b"not json",
        b"[1]",
        b'{"op": "next", "observation_id": "o-1"}',
        b'{"bridge": 2, "op": "next", "observation_id": "o-1"}',
        b'{"bridge": 1, "op": "other", "observation_id": "o-1"}',
        b'{"bridge": 1, "op": "next", "observation_id": 7}',
    ],
)
def test_an_ask_of_another_shape_or_version_is_dropped(data):
    assert VERSION == 1 and Next.decode(data) is None


@pytest.mark.parametrize(
    "data",
    [
        b"\xff",
        b'{"bridge": 2, "observation_id": "o-1", "request": {}}',
        b'{"bridge": 1, "observation_id": "o-1", "request": []}',
        b'{"bridge": 1, "request": {"id": "r-1"}}',
    ],
)
def test_a_request_of_another_shape_or_version_is_dropped(data):
    assert AgentRequest.decode(data) is None
