"""``python -m actors.policy``: the policy actor.

It follows the journal with observation states attached, replays every row through the
policy's hooks (so a restarted policy rebuilds its memory before deciding again), and
proposes for the newest observation that has no proposal yet, once it has caught up.
Proposal ids are derived from observation ids, so a proposal is recorded at most once.
"""
from __future__ import annotations

import logging
import time

from actors.bounded import BoundedDict
from actors.follow import Follower
from actors.recorder.files import read_observation
from actors.runtime import ActorContext, run_actor
from actors.transport import PeerRefused, RequestFailed
from protocol.to_recorder import RecordProposal

from .advice import Advisor
from .base import Observation, Policy, Proposal
from .registry import load_policy_class

log = logging.getLogger("policy")


class PolicyDriver:
    def __init__(self, ctx: ActorContext, policy: Policy):
        self.ctx, self.policy = ctx, policy
        self.proposals: dict[str, dict] = BoundedDict()  # by proposal id and by attempt id
        self.proposed_for: BoundedDict = BoundedDict()  # observation ids with a proposal
        self.latest: Observation | None = None
        self.stopping = False

    def feed(self, row: dict, follower: Follower) -> None:
        ev = row["event"]
        if ev == "observation":
            state = follower.take_state(row["observation_id"])
            if state is None:
                state = read_observation(self.ctx.capture_root, row["path"])
            obs = Observation(row["observation_id"], row.get("step", 0), row.get("phase", "run"),
                              state, row)
            self.policy.observe(obs)
            self.latest = obs
        elif ev == "proposal":
            self.proposals[row["proposal_id"]] = row
            self.proposed_for[row["observation_id"]] = None
        elif ev == "action_attempt":
            prop = self.proposals.get(row["proposal_id"])
            if prop is not None:
                prop["_attempt_id"] = row["attempt_id"]
                self.proposals[row["attempt_id"]] = prop
        elif ev == "action_result":
            prop = self.proposals.get(row["attempt_id"])
            if prop is not None:
                self.policy.record_result(prop, row)
        elif ev == "session_stopping":
            self.stopping = True

    def pending(self) -> Observation | None:
        if self.stopping or self.latest is None or self.latest.observation_id in self.proposed_for:
            return None
        return self.latest

    def propose(self, obs: Observation, recorder) -> None:
        start = time.monotonic()
        try:
            p = self.policy.decide(obs)
        except Exception as exc:  # a policy bug must not take the session down silently
            log.exception("decide failed on %s", obs.observation_id)
            p = Proposal.wait(f"policy error: {type(exc).__name__}: {exc}", source="policy_error")
        extra = dict(p.extra)
        if p.then_stop:
            extra["then_stop"] = p.then_stop
        msg = RecordProposal(proposal_id="p-" + obs.observation_id.split("-", 1)[-1],
                             observation_id=obs.observation_id, action=p.action,
                             parameters=dict(p.parameters), reason=p.reason, source=p.source,
                             wish=p.wish, model_evidence=p.model_evidence, extra=extra,
                             decide_ms=round((time.monotonic() - start) * 1000, 3))
        try:
            recorder.request(msg, deadline_s=60, should_stop=self.ctx.stopping.is_set)
        except PeerRefused as exc:
            log.error("proposal refused: %s", exc)
        except RequestFailed as exc:
            log.error("proposal not recorded: %s", exc)
            return
        self.proposed_for[obs.observation_id] = None


def main(ctx: ActorContext) -> int:
    cls = load_policy_class(ctx.setting("policy.module", "sts2"))
    policy = cls(dict(ctx.setting("policy.settings") or {}), dict(ctx.setting("session") or {}))
    policy.advisor = Advisor.from_context(ctx, policy.settings)  # None without a model
    driver = PolicyDriver(ctx, policy)
    recorder = ctx.client("recorder")
    follower = Follower(ctx.zctx, ctx.endpoints["recorder"], session=ctx.session_id,
                        sender=ctx.name, counters=ctx.counters, with_states=True)
    try:
        while not ctx.stopping.is_set():
            for row in follower.next_rows(0.2):
                driver.feed(row, follower)
            obs = driver.pending() if follower.caught_up else None
            if obs is not None:
                driver.propose(obs, recorder)
    finally:
        if policy.advisor is not None:
            policy.advisor.close()
        recorder.close()
        follower.close()
    return 0


if __name__ == "__main__":
    run_actor("policy", main)
