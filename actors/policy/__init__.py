"""The policy actor and the built-in policies.

base.py               the policy interface users implement (PolicyObservation, Proposal, Policy)
registry.py           finding the policy a profile names (``policy.module``)
__main__.py           the actor: journal replay, decide, record proposals
driving.py            one decision as the actor records it; the proposal rows it keeps
advice.py             asking the model-client actor, turning advice into candidates
sts2.py               the built-in STS2MCP heuristic policy (``sts2``)
sts2_menus.py         its rules for menus, tutorials, popups and game over
sts2_combat.py        its rules for combat, hand selection and potions
sts2_screens.py       its rules for every other screen, and each screen's ways out
sts2_settings.py      its ``policy.settings``, checked when it is built
context.py            its memory: guards, refusals, futile situations (PolicyContext)
run_state.py          run identity, card evidence, joining a run (RunContext)
stall.py              no silent stall: stall record, ways out, ``stuck`` (StallWatch)
llm.py                the Slay the Spire 2 agent (``llm``): the model chooses every decision
agent.py              what every agent policy shares: settings, prompt template, memory, asking again
sts2_actions.py       what an agent is shown of a screen and which actions it may answer with
pyboy_llm.py          the Game Boy agent (``pyboy_llm``): the model presses the buttons
example_first_choice.py  the documented user policy (docs/policy.md)
pyboy.py              the Game Boy demo and exploration policies and their inputs
mcp_bridge.py         the policy's side of the MCP bridge (BridgedPolicy): decisions are an
                      agent's requests, handed over by ``supervisor mcp``
mcp_pyboy.py          the Game Boy agent's policy (``mcp_pyboy``)
mcp_sts2.py           the Slay the Spire 2 agent's policy (``mcp_sts2``)
"""
