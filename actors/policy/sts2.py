"""The built-in STS2MCP policy: a plain heuristic over every screen, with the session's
memory kept by ``PolicyContext`` (guards) and ``RunContext`` (run identity, card evidence).

Each screen rule returns candidate proposals in preference order; the first one not
rejected on this very state is proposed. While an accepted action awaits its evidence, a read
identical to the one it acted on gets a ``suppressed`` duplicate of that action (execution-based
duplicate suppression: dry-run previews execute nothing, so they never feed it); any other read
gets a ``wait``. Every proposal row carries ``state_digest``,
``state_type``, ``run_id``, ``run_seed`` and ``deck_provenance``.
"""
from __future__ import annotations

import time

from .base import Observation, Policy, Proposal
from .context import PolicyContext, digest, snapshot_for
from .run_state import RunContext
from . import sts2_screens as screens


class Sts2Heuristic(Policy):
    advisor = None  # an ``advice.Advisor``, set by the policy actor when a model is configured

    def __init__(self, settings: dict, session: dict):
        super().__init__(settings, session)
        self.stuck = float(session.get("stuck_seconds") or 60)
        self.ctx = PolicyContext(self.stuck)
        self.run = RunContext(self.ctx, bool(session.get("stop_on_run_end", True)))
        self.idle_since: float | None = None

    # -- memory ---------------------------------------------------------------------
    def observe(self, obs: Observation) -> None:
        self.run.observe(obs.state, obs.row)
        self.ctx.reconcile(obs.state)

    def record_result(self, proposal: dict, result: dict) -> None:
        self.ctx.record_result(proposal, result)
        self.run.record_result(proposal, result)

    # -- deciding ---------------------------------------------------------------------
    def decide(self, obs: Observation) -> Proposal:
        st = obs.state
        d = digest(st)
        self.deciding = obs  # read by advice.consult (the model_error row's observation_id)
        p = self._decide(obs, d)
        p.extra.update(state_digest=d, state_type=st.get("state_type"), **self.run.decision_fields())
        if p.wish == "execute" and p.action:
            p.extra.setdefault("guard_snapshot", snapshot_for(p.action, p.parameters, st))
        return self._bounded_waiting(p)

    def _decide(self, obs: Observation, d: str) -> Proposal:
        if self.run.stop_reason:
            return Proposal.stop(self.run.stop_reason, source="stop_on_run_end")
        block = self.ctx.blocking()
        if block is not None:
            wish, reason = block
            if wish == "stop":
                return Proposal.stop(reason)
            pending = self.ctx.pending
            if pending.acted_digest == d:  # the very state it acted on: a duplicate, suppressed
                return Proposal(pending.action, dict(pending.parameters), wish="suppressed",
                                reason=f"duplicate of the accepted {pending.action} on an unchanged state")
            return Proposal.wait(reason)
        if self.ctx.grid_is_stale():
            return Proposal.wait("the grid changed while accepted toggles are in use")
        st = obs.state
        kind = st.get("state_type")
        rule = screens.RULES.get(kind)
        if rule is None:
            return Proposal.wait(f"no rule for screen {kind!r}")
        candidates = rule(self, st, screens.block_of(st))
        for p in candidates if isinstance(candidates, list) else [candidates]:
            if p.wish != "execute" or not self.ctx.was_rejected_here(d, p.action, p.parameters):
                return p
        return Proposal.wait(f"every candidate on this {kind} screen was rejected; waiting for a change")

    def _bounded_waiting(self, p: Proposal) -> Proposal:
        """Waiting is progress only for ``session.stuck_seconds``; then the policy stops."""
        if p.wish != "wait":
            self.idle_since = None
            return p
        now = time.monotonic()
        self.idle_since = self.idle_since or now
        if now - self.idle_since > self.stuck:
            return Proposal.stop("stuck", extra={**p.extra, "last_wait": p.reason})
        return p
