"""``python -m actors.policy``: the policy actor.

It follows the journal with observation states attached, replays every row through the
policy's hooks (so a restarted policy rebuilds its memory before deciding again), and
proposes for the newest observation that has no proposal yet, once it has caught up.
Proposal ids are derived from observation ids, so a proposal is recorded at most once.

A policy whose ``pipeline_depth`` is above 1 is asked again on the same observation until
that many of its executable proposals await a result (ids ``p-NNNNNN-K`` for the K-th
proposal on observation ``o-NNNNNN``), up to ``session.max_steps`` decisions. It refills the
pipeline once half of it has results, recording the new decisions in one ``record_batch``.
"""

from __future__ import annotations

import logging

from actors.runtime.actor import ActorContext, run_actor
from actors.runtime.bounded import BoundedDict
from actors.runtime.follow import Follower
from actors.runtime.journal_actor import JournalActor
from actors.runtime.recorder_client import RecorderClient, read_observation
from actors.runtime.transport import RequestFailed
from protocol import events as ev
from protocol.from_recorder import ProposalRecorded, RecorderError
from protocol.to_recorder import RecordProposal

from .advice import Advisor
from .base import Policy, PolicyObservation
from .driving import ProposalBook, decide
from .registry import load_policy_class

log = logging.getLogger("policy")


class PolicyDriver(JournalActor):
    """The policy actor's loop: replay each row through the policy's hooks (``on_row``);
    once caught up, decide on the ``pending`` observation and record it (``propose``)."""

    PACE_S = 0.004  # while decisions are ahead of their results, take rows in batches
    #: what it decides on (the other rows come along with it; waking for results too, to take
    #: them in during the next read, measured slower: bench/step_ab.py, CPU beside the read)
    WAKE = (ev.Observation.KIND,)

    def __init__(self, ctx: ActorContext, policy: Policy, follower=None, recorder: RecorderClient | None = None):
        super().__init__(follower, max_steps=ctx.setting("session.max_steps"), stopping=ctx.stopping)
        self.ctx, self.policy, self.recorder = ctx, policy, recorder
        self.book = ProposalBook(BoundedDict())  # proposal rows awaiting their result
        self.proposed_for: BoundedDict = BoundedDict()  # observation id -> proposals made on it
        self.decided: BoundedDict = BoundedDict()  # proposal ids made (recorded or replied)
        self.replied: BoundedDict = BoundedDict()  # proposal ids whose disposition came by reply
        self.decisions = 0  # this instance's, also those whose rows are still on their way
        self.last_disposition: str | None = None
        self.latest: PolicyObservation | None = None
        self.stopping = False
        self.takes = {
            ev.Observation.KIND: self._observation,
            ev.Proposal.KIND: self._proposal,
            ev.ProposalStatus.KIND: self._status,
            ev.ActionAttempt.KIND: self._attempt,
            ev.ActionResult.KIND: self._result,
            ev.SessionStopping.KIND: self._stopping,
        }

    def _decided(self, proposal_id: str, observation_id: str) -> None:
        if proposal_id not in self.decided:
            self.decided[proposal_id] = None
            self.decisions += 1
            self.proposed_for[observation_id] = self.proposed_for.get(observation_id, 0) + 1

    def on_caught_up(self) -> None:
        obs = self.pending()
        if obs is not None:
            self.propose(obs)

    def close(self) -> None:
        advisor = getattr(self.policy, "advisor", None)
        if advisor is not None:
            advisor.close()
        if self.recorder is not None:
            self.recorder.close()
        super().close()

    def on_row(self, row: dict) -> None:
        take = self.takes.get(row["event"])  # (a table: every row of a step passes here)
        if take is not None:
            take(row)

    def _observation(self, row: dict) -> None:
        state = self.follower.take_state(row["observation_id"])
        if state is None:
            state = read_observation(self.ctx.capture_root, row["path"])
        obs = PolicyObservation(row["observation_id"], row.get("step", 0), row.get("phase", "run"), state, row)
        self.policy.observe(obs)
        self.latest = obs

    def _proposal(self, row: dict) -> None:
        self.book.proposed(row)
        self._decided(row["proposal_id"], row["observation_id"])
        self.policy.record_proposal(row)

    def _status(self, row: dict) -> None:
        if row["proposal_id"] not in self.replied:  # (a reply told this instance already)
            self.last_disposition = row["status"]
        self.book.disposed(row["proposal_id"], row["status"])

    def _attempt(self, row: dict) -> None:
        self.book.attempted(row)

    def _result(self, row: dict) -> None:
        prop = self.book.resulted(row)
        if prop is not None:
            self.policy.record_result(prop, row)

    def _stopping(self, row: dict) -> None:
        self.stopping = True

    def pending(self) -> PolicyObservation | None:
        """The observation to decide on now, if any (see the module docstring)."""
        obs = self.latest
        if self.stopping or obs is None:
            return None
        if self.track.max_steps_reached(self.decisions):
            return None
        in_flight = self.track.in_flight
        if in_flight and len(in_flight) > self.policy.pipeline_depth(obs) // 2:
            return None  # refill a pipeline once half of it is done: decisions go in batches
        if obs.observation_id not in self.proposed_for:
            return obs
        if self.last_disposition != "execute":
            return None
        return obs if self.policy.pipeline_depth(obs) > 1 else None

    def propose(self, obs: PolicyObservation) -> None:
        """Decide on ``obs`` and record it; a pipelining policy fills its window at once
        (several decisions, one ``record_batch``)."""
        made = self.proposed_for.get(obs.observation_id, 0)
        batch = [self._decide(obs, made)]
        while batch[-1][1] > 1 and batch[-1][0].wish == "execute":
            depth = batch[-1][1]
            if len(self.track.in_flight) + len(batch) >= depth or self.track.max_steps_reached(
                self.decisions + len(batch)
            ):
                break
            batch.append(self._decide(obs, made + len(batch)))
        try:
            # one ordinary decision: the next follow goes out right after it (the recorder takes
            # both in one turn); pipelined ones wait for their replies (their follow's pace and
            # waking kinds depend on what is in flight then)
            early = self.socket if len(batch) == 1 and batch[0][1] <= 1 else None
            replies = self.recorder.record_proposals([msg for msg, _ in batch], after_send=early)
        except RequestFailed as exc:
            log.error("proposal not recorded: %s", exc)
            return
        for (msg, depth), reply in zip(batch, replies):
            if isinstance(reply, ProposalRecorded):
                # the rows follow on the stream; count the decision now so the window holds
                self.last_disposition = reply.disposition
                self.replied[msg.proposal_id] = None
                if reply.disposition == "execute" and depth > 1:
                    self.track.in_flight[msg.proposal_id] = depth
            else:
                if isinstance(reply, RecorderError):
                    log.error("proposal refused: %s: %s", reply.code, reply.message)
                self.last_disposition = "refused"  # no further decisions ahead on this observation
            self._decided(msg.proposal_id, obs.observation_id)

    def _decide(self, obs: PolicyObservation, made: int) -> tuple[RecordProposal, int]:
        """One decision as a proposal request, and the pipeline depth it was made with."""
        p, extra, depth, decide_ms = decide(self.policy, obs, made)
        proposal_id = "p-" + obs.observation_id.split("-", 1)[-1] + (f"-{made + 1}" if made else "")
        return RecordProposal(
            proposal_id=proposal_id,
            observation_id=obs.observation_id,
            action=p.action,
            parameters=dict(p.parameters),
            reason=p.reason,
            source=p.source,
            wish=p.wish,
            model_evidence=p.model_evidence,
            extra=extra,
            decide_ms=decide_ms,
        ), depth


def main(ctx: ActorContext) -> int:
    cls = load_policy_class(ctx.setting("policy.module", "sts2"))
    policy = cls(dict(ctx.setting("policy.settings") or {}), dict(ctx.setting("session") or {}))
    policy.advisor = Advisor.from_context(ctx, policy.settings)  # None without a model
    follower = Follower(
        ctx.zctx,
        ctx.endpoints["recorder"],
        session=ctx.session_id,
        sender=ctx.name,
        counters=ctx.counters,
        with_states=True,
    )
    return PolicyDriver(ctx, policy, follower, ctx.recorder()).run()


if __name__ == "__main__":
    run_actor("policy", main)
