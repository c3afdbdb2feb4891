"""The policy actor and the built-in policies.

    base.py       the policy interface users implement (Observation, Proposal, Policy)
    registry.py   finding the policy a profile names (``policy.module``)
    sts2.py       the built-in STS2MCP heuristic policy
    __main__.py   the actor: journal replay, decide, record proposals
"""
