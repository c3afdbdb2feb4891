"""``mcp_pyboy``: the policy of an agent playtesting a Game Boy ROM through ``supervisor mcp``
(:class:`AgentPolicy`; the server writes it into the session profile it builds).

It proposes exactly what the agent asked for, one request per observation
(:class:`.mcp_bridge.BridgedPolicy`). A request's ``kind`` maps to one proposal:

* ``step`` → ``step {buttons, frames, samples}``, ``checkpoint`` → ``checkpoint {label}``,
  ``restore`` → ``restore {checkpoint_id}``, ``stop_recording`` → ``stop_recording {outcome,
  reason}``, ``clip`` → ``clip {request, workspace}`` (a GIF of the live recording, made by its
  emulator) — all executed;
* ``observe`` → a ``wait`` (the observer then reads again: a fresh observation; at once when the
  request says ``now``, its row then saying ``read_now``);
* ``end`` → a ``stop`` (the session ends with reason ``stop_command``).

Every proposal row carries ``agent_request`` (the request id) and ``agent_tool``, which is how
the server finds the rows of its request in the journal.
"""

from __future__ import annotations

from protocol.mcp_bridge import GAMEBOY_KINDS

from .base import PolicyObservation, Proposal
from .mcp_bridge import BridgedPolicy


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
    if kind not in GAMEBOY_KINDS:
        return Proposal.wait(f"{reason}: unknown kind {kind!r}", source="agent", extra=extra)
    return Proposal(kind, dict(params), reason, source="agent", extra=extra)


class AgentPolicy(BridgedPolicy):
    """Proposes exactly what the agent asked for, one request per observation."""

    def propose(self, request: dict, obs: PolicyObservation) -> Proposal:
        return to_proposal(request)
