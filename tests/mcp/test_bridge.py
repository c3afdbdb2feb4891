"""The bridge between the MCP server and the session's policy, on real ZeroMQ sockets: the
policy's side is a DEALER asking as ``BridgedPolicy.ask`` does."""

from __future__ import annotations

import json

import pytest
import zmq

from protocol.mcp_bridge import VERSION
from supervisor.mcp.shared.bridge import Bridge
from supervisor.mcp.shared.errors import SessionGone
from supervisor.mcp.shared.session import Playtest

pytestmark = pytest.mark.timeout(60)


def test_a_request_left_pending_by_an_ended_session_is_never_handed_to_the_next_sessions_policy(tmp_path):
    """A call whose session ended before its policy took it was answered with an error; a
    session started next (here one its supervisor refuses at once) must not hand that request
    to its policy, which would act on it unasked."""
    ctx = zmq.Context()
    bridge = Bridge(ctx, f"ipc://{tmp_path / 'agent.sock'}")
    policy = ctx.socket(zmq.DEALER)
    policy.setsockopt(zmq.LINGER, 0)
    policy.connect(bridge.endpoint)
    try:
        bridge.submit({"id": "old-000001", "kind": "act", "action": "combat_end_turn"})  # its session ended
        profile = {
            "name": "refused",
            "game": {"backend": "no-such-backend"},
            "supervisor": {"runtime_dir": str(tmp_path / "runtime")},
        }
        with pytest.raises(SessionGone):
            Playtest(tmp_path, tmp_path / "capture", profile, bridge, ctx).start()
        policy.send(json.dumps({"bridge": VERSION, "op": "next", "observation_id": "o-000001"}).encode())
        assert bridge.socket.poll(5000), "the ask did not reach the bridge"
        bridge.pump()
        bridge.submit({"id": "new-000001", "kind": "observe"})
        assert policy.poll(5000)
        reply = json.loads(policy.recv())
        assert (reply["observation_id"], reply["request"]["id"]) == ("o-000001", "new-000001"), reply
    finally:
        policy.close(0)
        bridge.close()
        ctx.term()
