"""The built-in STS2MCP policy: a plain heuristic over every screen, with the session's
memory kept by ``PolicyContext`` (guards, refusals, futile situations), ``RunContext`` (run
identity, card evidence, joining a run in progress) and ``StallWatch`` (no silent stall).

Each screen rule returns candidate proposals in preference order; the first one the memory
does not refuse (rejected too often, or accepted before without effect) is proposed. While an
accepted action awaits its evidence, a read identical to the one it acted on gets a
``suppressed`` duplicate of that action (dry-run previews execute nothing, so they never feed
it); any other read gets a ``wait`` — until the action is overdue, when it is released as
``released_no_effect`` and not proposed again in that situation. A tutorial or popup is
dismissed at once, whatever is pending: the run's pending action and guards wait for it.

Every proposal row carries ``state_digest``, ``state_type``, ``run_id``, ``run_seed`` and
``deck_provenance``; executable ones ``guard_snapshot`` and ``situation``; and, when they
happen, ``released_no_effect``, ``stall``/``escape``, ``session_join``, ``run_outcome``,
a run's seed mark (``seeded`` with ``seed_applied`` or ``unseeded``, ``run_state.RunSeed``).
"""

from __future__ import annotations

import functools

from . import sts2_screens as screens
from .base import Policy, PolicyObservation, Proposal
from .context import PolicyContext, digest, flow_of, is_blocking_popup, situation_of, snapshot_for
from .run_state import RunContext
from .stall import StallWatch
from .sts2_settings import read_settings


class Sts2Heuristic(Policy):
    advisor = None  # an ``advice.Advisor``, set by the policy actor when a model is configured

    def __init__(self, settings: dict, session: dict):
        settings = read_settings(settings)
        super().__init__(settings, session)
        self.stuck = float(session.get("stuck_seconds") or 20)
        self.ctx = PolicyContext(settings["no_effect_reads"], float(settings["no_effect_seconds"]))
        self.run = RunContext(self.ctx, bool(session.get("stop_on_run_end", True)), settings["run_seed"])
        self.stall = StallWatch(
            self.stuck,
            settings["stall_reads"],
            settings["stall_after_seconds"],
            enabled=not session.get("dry_run") and bool(session.get("stuck_seconds", 20)),
        )
        self.deciding: PolicyObservation | None = None
        self.checked: tuple | None = None  # (proposal, state, situation) of the last ``allowed`` check

    # -- memory ---------------------------------------------------------------------
    def observe(self, obs: PolicyObservation) -> None:
        self.run.observe(obs.state, obs.row)
        self.ctx.reconcile(obs.state)
        self.stall.observe(self.ctx.here, is_blocking_popup(obs.state))  # digest: from reconcile

    def record_result(self, proposal: dict, result: dict) -> None:
        self.ctx.record_result(proposal, result)
        self.run.record_result(proposal, result)
        self.stall.record_result(proposal, result)

    def record_proposal(self, proposal: dict) -> None:
        """Replayed decisions that changed memory: a no-effect release, a reported join, a
        run's seed mark."""
        if proposal.get("released_no_effect"):
            self.ctx.apply_release(proposal["released_no_effect"])
        if proposal.get("session_join"):
            self.run.join_reported = True
        self.run.seed.record_proposal(proposal)

    # -- deciding ---------------------------------------------------------------------
    def decide(self, obs: PolicyObservation) -> Proposal:
        st = obs.state
        d = digest(st)
        self.deciding = obs  # read by advice.consult (the model_error row's observation_id)
        self.checked = None
        released = None
        popup = is_blocking_popup(st)
        if self.ctx.overdue(popup):
            released = self.ctx.release_no_effect(popup)
        p = self._decide(obs, d)
        p.extra.update(state_digest=d, state_type=st.get("state_type"), **self.run.decision_fields())
        if released is not None:
            p.extra["released_no_effect"] = released
        join = self.run.join_record(st, p)
        if join is not None:
            p.extra["session_join"] = join
        p.extra.update(self.run.seed.take_mark())
        if p.wish == "execute" and p.action:
            p.extra.setdefault("guard_snapshot", snapshot_for(p.action, p.parameters, st))
            if "situation" not in p.extra:
                p.extra["situation"] = self._situation(p, st)
        return p

    def _situation(self, p: Proposal, st: dict) -> str:
        """``situation_of`` the proposal, taken from its ``allowed`` check when that was the
        last one made (the proposal it let through, on this state): computed once per step."""
        checked = self.checked
        if checked is not None and checked[0] is p and checked[1] is st:
            return checked[2]
        return situation_of(p.action, p.parameters, st)

    def _decide(self, obs: PolicyObservation, d: str) -> Proposal:
        if self.run.stop_reason:
            return Proposal.stop(self.run.stop_reason, source="stop_on_run_end")
        st = obs.state
        kind = st.get("state_type")
        screen = screen_name(st)
        escapes = functools.partial(self._escapes, st)  # (wanted only on a stall)
        escape_ok = self._allowed(st, d, escape=True)
        waiting = self._waiting(st, d)
        if waiting is not None:  # no way out is tried while an accepted action awaits evidence
            return self.stall.check(waiting, screen, list, escape_ok)
        rule = screens.RULES.get(kind)
        if not is_blocking_popup(st) and self.ctx.grid_is_stale():

            def rule(*_):
                return [Proposal.wait("the grid changed while accepted toggles are in use")]

        if rule is None:
            return self.stall.check(
                Proposal.wait(f"no rule for screen {kind!r}: read again"), screen, escapes, escape_ok
            )
        allowed = self._allowed(st, d)
        candidates = self._candidates(rule, obs, allowed)
        refused = []
        for p in candidates if isinstance(candidates, list) else [candidates]:
            if p.wish != "execute" or allowed(p):
                return self.stall.check(p, screen, escapes, escape_ok)
            refused.append(p.action)
        wait = Proposal.wait(
            f"every candidate on this {screen} screen is refused ({', '.join(refused)}); waiting for a change"
        )
        return self.stall.check(wait, screen, escapes, escape_ok)

    def _candidates(self, rule, obs: PolicyObservation, allowed) -> list[Proposal] | Proposal:
        """The screen rule's candidates, in preference order (an agent policy asks its model
        here; ``allowed`` is the memory's check of one proposal on this state)."""
        return rule(self, obs.state, screens.block_of(obs.state))

    def _waiting(self, st: dict, d: str) -> Proposal | None:
        """A suppressed duplicate or a wait while a pending action blocks (never on a popup)."""
        pending = self.ctx.popup_pending if is_blocking_popup(st) else self.ctx.pending
        if pending is None:
            return None
        if pending.acted_digest == d:  # the very state it acted on: a duplicate, suppressed
            return Proposal(
                pending.action,
                dict(pending.parameters),
                wish="suppressed",
                reason=f"duplicate of the accepted {pending.action} on an unchanged state",
            )
        return Proposal.wait(f"awaiting evidence for the accepted {pending.action} ({pending.kind})")

    def _allowed(self, st: dict, d: str, escape: bool = False):
        def allowed(p: Proposal) -> bool:
            situation = situation_of(p.action, p.parameters, st)
            self.checked = (p, st, situation)
            return self.ctx.refusal(d, p.action, p.parameters, situation, escape) is None

        return allowed

    def _escapes(self, st: dict) -> list[Proposal]:
        fn = screens.ESCAPES.get(st.get("state_type"))
        return fn(self, st, screens.block_of(st)) if fn else []


def screen_name(st: dict) -> str:
    """The screen with its variant, as people and the journal name it (``card_select:upgrade``)."""
    flow = flow_of(st)
    return st.get("state_type") or "?" if flow == "combat" or flow == "rewards" else flow
