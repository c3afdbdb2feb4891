"""How the policy actor drives a policy, for the actor and for anything that must do the same
work in another process (``bench/pipeline_baseline.py`` runs the session's policy in one).

    decide(policy, obs, made)   one decision as the actor records it: the policy's proposal (a
                                policy error becomes a wait), its extra fields, the pipeline
                                depth it was made with, and ``decide_ms``
    ProposalBook                the proposal rows awaiting their result, by proposal id and by
                                attempt id, handed back to ``record_result`` with the result
"""

from __future__ import annotations

import logging
import time
from collections.abc import MutableMapping

from .base import Policy, PolicyObservation, Proposal

log = logging.getLogger("policy")


def decide(policy: Policy, obs: PolicyObservation, made: int) -> tuple[Proposal, dict, int, float]:
    """``policy.decide(obs)`` as the actor records it, ``made`` being how many proposals were
    made on ``obs`` before: ``(proposal, extra, depth, decide_ms)``."""
    start = time.monotonic()
    try:
        p = policy.decide(obs)
    except Exception as exc:  # a policy bug must not take the session down silently
        log.exception("decide failed on %s", obs.observation_id)
        p = Proposal.wait(f"policy error: {type(exc).__name__}: {exc}", source="policy_error")
    extra = dict(p.extra)
    if p.then_stop:
        extra["then_stop"] = p.then_stop
    depth = policy.pipeline_depth(obs) if p.wish == "execute" else 1
    if depth > 1:
        extra.update(pipeline_depth=depth, decided_ahead=made)
    return p, extra, depth, round((time.monotonic() - start) * 1000, 3)


class ProposalBook:
    """A policy's proposal rows from their ``proposal`` row to their result: kept by proposal
    id, and by attempt id once attempted; forgotten when no attempt follows (a disposition
    other than ``execute``) or once the result came (returned to go to ``record_result``)."""

    def __init__(self, rows: MutableMapping[str, dict]):
        self.rows = rows  # (a bounded map in the actor: it forgets its oldest entries)

    def proposed(self, row: dict) -> None:
        self.rows[row["proposal_id"]] = row

    def disposed(self, proposal_id: str, status: str) -> None:
        if status != "execute":  # no attempt follows: the row is not needed again
            self.rows.pop(proposal_id, None)

    def attempted(self, row: dict) -> None:
        prop = self.rows.get(row["proposal_id"])
        if prop is not None:
            prop["_attempt_id"] = row["attempt_id"]
            self.rows[row["attempt_id"]] = prop

    def resulted(self, row: dict) -> dict | None:
        """The proposal row the result is for (then forgotten), or None if not one of ours."""
        prop = self.rows.pop(row["attempt_id"], None)  # one result per attempt: done
        if prop is not None:
            self.rows.pop(prop["proposal_id"], None)
        return prop
