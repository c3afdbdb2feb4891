"""The agent policy for Slay the Spire 2 (``policy.module: llm``): the model chooses every
action of a run.

It is the built-in policy (``sts2.Sts2Heuristic``) with its memory and guards as they are —
a duplicate on an unchanged screen is suppressed, an unknown outcome is never re-sent, popups
and tutorials are dismissed, a pending action is awaited — except that on every screen that
needs a decision the model chooses. Its question (``agent_action``) shows:

* the screen as compact JSON (``sts2_actions.screen_text``, from the observation the recorder
  stored),
* the run's last ``memory`` actions, their results and what changed (``agent.Memory``),
* the legal actions as the answer's schema: one alternative per action kind the screen
  allows, each argument limited to what the screen lists (``sts2_actions.legal_actions``),
* why earlier answers to this decision could not be used (``feedback``),

rendered through the prompt template (``policy.settings.prompt_template``, or
``prompts/sts2_agent.txt``). An answer that cannot be used — not JSON, not in the schema, an
index the screen does not list, a move the guards refuse here — is never sent: it is recorded,
and the model is asked again with the reason, ``invalid_retries`` times; then the fallback
applies (``heuristic``: the built-in policy's choice; ``wait``: nothing is sent).

No model call is made where there is nothing to decide: menus, popups and tutorials, the
game-over screen, the enemy's turn, a combat that ended, a chest still opening, a pending
action's wait, and a screen with exactly one legal action (``source: only_choice``).

Each decision's proposal row carries ``agent``: the template's name and sha256, how many legal
actions there were, the memory's size, and one record per call (``used``, ``not_usable`` with
the problem, or ``error`` with its kind and call id), and its ``outcome`` (``chosen``,
``only_choice`` or ``fallback``). ``source`` is ``model``, ``only_choice``, or
``heuristic_fallback`` / ``agent_wait`` with ``agent_fallback`` saying why.
"""

from __future__ import annotations

from .agent import AGENT_KEYS, AgentSettingError, Memory, ask, read_agent_settings
from .base import PolicyObservation, Proposal
from .context import digest, is_blocking_popup, refusal_text, situation_of
from .sts2 import Sts2Heuristic, screen_name
from .sts2_actions import changes, choices, legal_actions, only_choice, proposal_for, screen_text, summary
from .sts2_settings import read_settings

BUILTIN_TEMPLATE = "sts2_agent.txt"
KIND = "agent_action"
#: menus outside a run: the run's memory starts anew
OUT_OF_RUN = ("main", "singleplayer", "character_select", "profile_select")


def split_settings(settings: dict) -> tuple[dict, dict]:
    """(the built-in policy's settings, the agent's); ``AgentSettingError`` for a setting the
    agent cannot honour."""
    settings = dict(settings or {})
    if settings.get("consult_model", True) is not True:
        raise AgentSettingError(
            "policy.settings.consult_model: the llm policy always asks its model "
            "(use policy.module: sts2 to play without one)"
        )
    agent = {k: settings.pop(k) for k in list(settings) if k in AGENT_KEYS}
    return settings, agent


def check_settings(settings: dict) -> None:
    """What ``supervisor validate`` checks: every setting, the template read and rendered."""
    base, agent = split_settings(settings)
    read_settings(base)
    read_agent_settings(agent, BUILTIN_TEMPLATE)


class Sts2Agent(Sts2Heuristic):
    def __init__(self, settings: dict, session: dict):
        base, agent = split_settings(settings)
        super().__init__(base, session)
        self.agent = read_agent_settings(agent, BUILTIN_TEMPLATE)
        self.template = self.agent["template"]
        self.memory = Memory(self.agent["memory"], summary, changes)

    # -- memory ---------------------------------------------------------------------------
    def observe(self, obs: PolicyObservation) -> None:
        super().observe(obs)
        st = obs.state
        if st.get("state_type") == "menu" and st.get("menu_screen") in OUT_OF_RUN:
            self.memory.clear()
        elif not is_blocking_popup(st):
            self.memory.observe(st)

    def record_result(self, proposal: dict, result: dict) -> None:
        super().record_result(proposal, result)
        action = proposal.get("action")
        if not action or proposal.get("state_type") == "menu":
            return
        outcome = str(result.get("outcome"))
        self.memory.record_result(
            proposal.get("state_type"),
            action,
            dict(proposal.get("parameters") or {}),
            outcome,
            refusal_text(result) if outcome == "rejected" else "",
        )

    # -- deciding -------------------------------------------------------------------------
    def _candidates(self, rule, obs: PolicyObservation, allowed):
        st = obs.state
        legal = [] if is_blocking_popup(st) else legal_actions(self, st)
        if not legal:
            return self._rule(rule, obs)  # nothing to decide: no model call
        info = {"template": self.template.record(), "legal": len(legal), "choices": choices(legal)}
        single = only_choice(legal)
        if single is not None:
            p, _ = proposal_for(single, st)
            if p is not None:
                p.reason, p.source = "the only legal action", "only_choice"
                p.extra["agent"] = {**info, "outcome": "only_choice", "attempts": []}
                return [p]
        if self.advisor is None:
            return self._fallback(rule, obs, {**info, "attempts": []}, "no model configured", [])
        d = digest(st)
        lines = self.memory.lines()
        screen = screen_text(st)
        kind = screen_name(st)

        def build(feedback: list[str]) -> dict:
            return {
                "screen": screen,
                "screen_type": kind,
                "actions": legal,
                "memory": lines,
                "feedback": feedback,
                "template": self.template.question_field(),
            }

        def use(answer: dict):
            p, problem = proposal_for(answer, st)
            if p is None:
                return None, problem
            why = self.ctx.refusal(d, p.action, p.parameters, situation_of(p.action, p.parameters, st))
            if why is not None or not allowed(p):
                return None, f"{p.action} {p.parameters} cannot be sent on this screen now: {why or 'refused'}"
            return p, None

        decision = ask(self.advisor, KIND, build, use, self.agent["invalid_retries"], obs.observation_id)
        info.update(memory=len(lines), attempts=decision.attempts)
        if decision.chosen is None:
            return self._fallback(rule, obs, info, decision.why_not, decision.evidence)
        p = decision.chosen
        p.source, p.model_evidence = "model", decision.evidence
        p.reason = f"the model's choice: {p.reason}" if p.reason else "the model's choice"
        p.extra["agent"] = {**info, "outcome": "chosen"}
        return [p]

    def _rule(self, rule, obs: PolicyObservation):
        """The built-in rule's candidates, without its own model questions (the agent asks)."""
        advisor, self.advisor = self.advisor, None
        try:
            return super()._candidates(rule, obs, None)
        finally:
            self.advisor = advisor

    def _fallback(self, rule, obs: PolicyObservation, info: dict, why: str, evidence: list) -> list[Proposal]:
        info = {**info, "outcome": "fallback", "fallback": self.agent["fallback"]}
        if self.agent["fallback"] == "wait":
            out = [Proposal.wait(f"agent: no usable answer ({why}); nothing sent, reading again")]
            source = "agent_wait"
        else:
            got = self._rule(rule, obs)
            out, source = (got if isinstance(got, list) else [got]), "heuristic_fallback"
        for p in out:
            p.source = source
            p.model_evidence = list(evidence) or None
            p.extra.update(agent=dict(info), agent_fallback=why or "no usable answer")
        return out


__all__ = ["Sts2Agent", "check_settings", "split_settings", "BUILTIN_TEMPLATE"]
