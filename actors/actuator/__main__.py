"""``python -m actors.actuator``.

An ordinary step's intent comes by the standing request (``await_intent``): while nothing
else waits, the actuator keeps one parked at the recorder, which records the intent as soon
as the policy's proposal is marked ``execute`` and answers with its acknowledgement after
the fsync — the status row need not travel to the actuator and back first. Executed
proposals seen in the journal that no standing request took (after a restart, a refusal, a
recorder restart) are acted on from the queue with ``record_intent``; a proposal
is acted on once whichever way its acknowledgement came (``handled``)."""

from __future__ import annotations

import logging
import time
import uuid
from collections.abc import Callable

from actors.runtime.actor import ActorContext, run_actor
from actors.runtime.bounded import BoundedDict
from actors.runtime.follow import Follower
from actors.runtime.journal_actor import JournalActor
from actors.runtime.steps import pipelined
from actors.runtime.transport import PeerRefused, RequestFailed
from protocol import events as ev
from protocol.from_recorder import IntentAck, Recorded, RecorderError
from protocol.to_recorder import RecordResult

from .sink import make_sink

log = logging.getLogger("actuator")

MAX_BATCH = 64
STEP_BATCH = 4  # pipelined steps per emulator_step_batch
RESULT_BATCH = 4  # pipelined results are recorded this many at a time ...
RESULT_WAIT_S = 0.01  # ... or after this long, or when nothing else is in flight
STANDING_MS = 500  # a standing intent's wait_ms; asked again after a no_intent
STANDING_LOST_S = 2.0  # no reply this long after its wait_ms: the recorder restarted, ask anew
PIPELINED = f"{ev.Proposal.KIND}.pipeline_depth"  # a wake entry: a proposal decided ahead
ORPHAN_ERROR = (
    "the actuator holding this attempt exited before recording a result; "
    "the request may or may not have been sent, and it is not sent again"
)


class Actuator(JournalActor):
    """The actuator's loop: queue each executed proposal (``on_row``); once caught up,
    recover orphaned attempts and act on the queue (``on_caught_up``); while pipelined steps
    are in flight, wait on the journal and the emulator at once and record their results."""

    PACE_S = 0.004  # pipelined steps queue ahead: rows can come in batches
    WAKE = (ev.ProposalStatus.KIND, ev.ActorExit.KIND)  # an execute to act on; an emulator gone

    def __init__(self, ctx: ActorContext, sink=None, recorder=None, follower=None):
        super().__init__(follower, stopping=ctx.stopping)
        self.ctx = ctx
        self.requester = f"actuator-{uuid.uuid4().hex[:12]}"
        self.sink = make_sink(ctx) if sink is None else sink
        self.recorder = ctx.recorder() if recorder is None else recorder
        self.queue: list[str] = []  # executed proposal ids not yet attempted by anyone
        self.handled: BoundedDict = BoundedDict()  # ids this instance acted on (recent)
        self.done: list = []  # (attempt id, outcome) of pipelined steps, results not yet recorded
        self._done_since = 0.0
        self.emulator_exits = 0  # actor_exit rows of the emulator seen so far
        self.standing = None  # the recorder_client.StandingIntent, once first parked
        self.journal_failed = False  # an intent was refused because the journal failed: act no more
        self.closing = False  # close() began: no standing intent is parked any more
        if hasattr(self.sink, "watch"):
            self.sink.watch = self.watch_emulator

    def on_row(self, row: dict) -> None:
        kind = row["event"]
        if kind == ev.ProposalStatus.KIND and row["status"] == "execute":
            self.queue.append(row["proposal_id"])
        elif kind == ev.ActionAttempt.KIND and row["proposal_id"] in self.queue:
            self.queue.remove(row["proposal_id"])
        elif kind == ev.ActorExit.KIND and row.get("actor") == "emulator":
            self.emulator_exits += 1  # its steps in flight can get no reply: resolve them now
            if hasattr(self.sink, "abandon"):
                self.done.extend(self.sink.abandon())
        elif kind == ev.Observation.KIND:  # a newer read supersedes any proposal not yet attempted,
            # except those its policy decided ahead of their results (pipelined)
            self.queue = [pid for pid in self.queue if pipelined(self.track.proposals.get(pid))]

    def watch_emulator(self) -> int:
        """For a step sent alone: read the journal rows waiting (without blocking) and
        return how many times the emulator has exited so far."""
        if self.follower is not None:
            self.pump()
        return self.emulator_exits

    # -- the loop ---------------------------------------------------------------------------
    def wait_s(self) -> float:
        if not self.in_flight():
            return self.WAIT_S
        return min(self.WAIT_S, self.sink.next_deadline_s(), RESULT_WAIT_S if self.done else self.WAIT_S)

    def wake_sockets(self) -> list | None:
        """While pipelined steps are in flight: wait on the journal and the emulator at once;
        while a standing intent is parked: on the journal and its reply."""
        if not self.in_flight():
            return [self.standing.socket] if self.standing_parked else None
        return [self.sink.socket] if self.sink.socket is not None else []

    def wake_kinds(self) -> tuple[str, ...] | None:
        """While a standing intent is parked, an ordinary execute needs no wake-up (the
        standing request's reply brings its intent) but a pipelined proposal does: the
        recorder never hands those to a standing intent (its status row comes with it)."""
        kinds = super().wake_kinds()
        if kinds is not None and self.standing_parked:
            kinds = tuple(k for k in kinds if k != ev.ProposalStatus.KIND) + (PIPELINED,)
        return kinds

    def on_wake(self) -> None:
        self.take_standing()
        if self.in_flight():
            self.collect()

    def on_caught_up(self) -> None:
        if self.journal_failed:  # the session is stopping: never ask again for an intent whose
            return  # fsync failed (its row is in the file, never acknowledged)
        self.recover_orphans()
        self.act_on_queue()
        self.park_standing()

    # -- the standing intent ----------------------------------------------------------------
    @property
    def standing_parked(self) -> bool:
        return self.standing is not None and self.standing.parked

    def park_standing(self) -> None:
        """Park an ``await_intent`` when nothing else is to be done and none is parked."""
        if self.closing or self.queue or self.in_flight() or self.ctx.stopping.is_set() or self.track.stopping:
            return
        if self.standing is None:
            self.standing = self.recorder.standing_intent(self.requester, STANDING_MS)
        if not self.standing.parked or self.standing.overdue(STANDING_LOST_S):
            self.standing.park()  # (an overdue one is lost with a restarted recorder: ask anew)

    def take_standing(self) -> None:
        """Act on what the standing intent's socket brought."""
        if self.standing is not None:
            for reply in self.standing.replies():
                self.act_on_standing(reply)

    def act_on_standing(self, reply) -> None:
        """An acknowledged request is sent once (unless this proposal was acted on already);
        a refusal is logged as any refused intent; a ``no_intent`` needs nothing."""
        if isinstance(reply, RecorderError):
            self._refused(reply.code, f"{reply.code}: {reply.message}")
        elif isinstance(reply, IntentAck) and reply.proposal_id not in self.handled:
            self.handled[reply.proposal_id] = None
            if reply.proposal_id in self.queue:
                self.queue.remove(reply.proposal_id)
            self._send(reply, then=self.park_next)

    def park_next(self) -> None:
        """The next standing intent, parked right after a result is sent (the recorder takes
        both in one turn) rather than once its reply has come."""
        if not self.journal_failed:
            self.park_standing()

    def withdraw_standing(self) -> None:
        """Take the parked standing intent back (acting on an intent it got before)."""
        if self.standing_parked:
            for reply in self.standing.withdraw():
                self.act_on_standing(reply)

    def on_stop(self) -> None:
        self.drain(float(self.ctx.setting("emulator.step_timeout_s", 5)))

    def close(self) -> None:
        self.closing = True  # (an intent taken while withdrawing is sent, and parks no other)
        if self.standing is not None:  # no intent may be recorded for an actuator gone
            self.withdraw_standing()
            self.standing.close()
        self.sink.close()
        self.recorder.close()
        super().close()

    # -- acting ---------------------------------------------------------------------------
    def recover_orphans(self) -> None:
        """Attempts without a result that nobody will finish: another actuator's (it exited)
        are recorded ``unknown``, never sent; one recorded for this actuator whose
        acknowledgement never came (a standing intent answered by a recorder that then died)
        is asked for again — the same attempt's ``intent_ack`` — and sent once."""
        for att_id, att in list(self.track.unresolved.items()):
            if att_id in self.handled:
                continue
            if att.get("requester") == self.requester:
                if att["proposal_id"] not in self.handled:
                    self.handled[att["proposal_id"]] = None
                    self._act(att["proposal_id"])
                continue
            self.handled[att_id] = None
            self._record_result(RecordResult(attempt_id=att_id, outcome="unknown", error=ORPHAN_ERROR))

    def act_on_queue(self) -> None:
        submit = getattr(self.sink, "submit", None)
        while self.queue and not self.ctx.stopping.is_set():
            pid = self.queue[0]
            if pid in self.handled:
                self.queue.pop(0)
                continue
            if submit is None or not pipelined(self.track.proposals.get(pid)):
                if self.in_flight():
                    return  # an ordinary step waits until the pipelined ones before it are done
                self.queue.pop(0)
                self.handled[pid] = None
                self._act(pid)
                continue
            self.withdraw_standing()  # no ordinary step may go while pipelined ones are in flight
            run = []  # consecutive pipelined proposals: one batch of intents
            while self.queue and len(run) < MAX_BATCH:
                pid = self.queue[0]
                if pid not in self.handled and not pipelined(self.track.proposals.get(pid)):
                    break
                self.queue.pop(0)
                if pid not in self.handled:
                    self.handled[pid] = None
                    run.append(pid)
            self._act_pipelined(run)
            self.collect()

    def in_flight(self) -> int:
        return len(getattr(self.sink, "in_flight", ())) + len(self.done)

    def collect(self) -> None:
        """Record the results of pipelined steps whose replies came (or that timed out),
        in one batch."""
        if not self.done:
            self._done_since = time.monotonic()
        self.done.extend(self.sink.collect())
        if not self.done or (
            len(self.done) < RESULT_BATCH
            and self.sink.in_flight
            and time.monotonic() - self._done_since < RESULT_WAIT_S
        ):
            return  # results go in batches: a few steps' worth, or when the pipeline is empty
        msgs = [_result_message(attempt_id, outcome) for attempt_id, outcome in self.done]
        self.done = []
        replies = self.recorder.record_results(msgs)  # None each if the batch failed
        for msg, reply in zip(msgs, replies):
            if not isinstance(reply, Recorded):
                self._record_result(msg)

    def _act_pipelined(self, proposal_ids: list[str]) -> None:
        """Intents for several pipelined proposals in one batch (one fsync); the acknowledged
        steps then go out together (each had its own acknowledgement first)."""
        if not proposal_ids:
            return
        try:
            acks = self.recorder.record_intents(proposal_ids, self.requester)
        except PeerRefused as exc:
            self._refused(exc.code, str(exc))
            return
        except RequestFailed as exc:
            log.error("no acknowledgement, %d request(s) not sent: %s", len(proposal_ids), exc)
            return
        steps = []
        for ack in acks:
            if isinstance(ack, RecorderError):
                self._refused(ack.code, f"{ack.code}: {ack.message}")
                continue
            steps.append((ack.action, ack.parameters, ack.attempt_id))
        for first in range(0, len(steps), STEP_BATCH):  # replies come a few steps at a time
            for attempt_id, outcome in self.sink.submit(steps[first : first + STEP_BATCH]):
                self._record(attempt_id, outcome)  # refused before sending

    def _refused(self, code: str, message: str) -> None:
        if code in ("journal_failed", "storage_failed"):
            log.error("intent not recorded, request not sent: %s", message)
            self.journal_failed = True
            self.ctx.request_stop("intent_not_recorded", message)
        else:
            log.warning("intent refused, request not sent: %s", message)

    def drain(self, seconds: float) -> None:
        """On stop: wait a while for the replies to pipelined steps already sent."""
        end = time.monotonic() + seconds
        while self.in_flight() and time.monotonic() < end:
            if self.sink.socket is not None:
                self.sink.socket.poll(50)
            self.collect()

    def _act(self, proposal_id: str) -> None:
        try:
            ack = self.recorder.record_intent(proposal_id, self.requester)
        except PeerRefused as exc:
            self._refused(exc.code, str(exc))
            return
        except RequestFailed as exc:
            log.error("no acknowledgement, request not sent: %s", exc)
            return
        self._send(ack)

    def _send(self, ack: IntentAck, then: Callable[[], object] | None = None) -> None:
        """The acknowledged request, sent once; then its result recorded (``then`` called
        once the result is sent, before its reply)."""
        outcome = self.sink.send(ack.action, ack.parameters, ack.attempt_id)
        self._record_result(_result_message(ack.attempt_id, outcome), then)

    def _record(self, attempt_id: str, outcome) -> None:
        self._record_result(_result_message(attempt_id, outcome))

    def _record_result(self, msg: RecordResult, then: Callable[[], object] | None = None) -> None:
        try:
            self.recorder.record_result(msg, after_send=then)  # (a response that cannot travel: kept without it)
        except RequestFailed as exc:
            log.error("result of %s not recorded: %s", msg.attempt_id, exc)
            try:
                self.recorder.record(
                    ev.ActionError(attempt_id=msg.attempt_id, error=f"result not recorded: {exc}"), deadline_s=2
                )
            except RequestFailed:
                pass
            self.ctx.request_stop("result_not_recorded", str(exc))


def main(ctx: ActorContext) -> int:
    follower = Follower(
        ctx.zctx, ctx.endpoints["recorder"], session=ctx.session_id, sender=ctx.name, counters=ctx.counters
    )
    return Actuator(ctx, follower=follower).run()


def _result_message(attempt_id: str, outcome) -> RecordResult:
    return RecordResult(
        attempt_id=attempt_id,
        outcome=outcome.outcome,
        http_status=outcome.http_status,
        response=outcome.response,
        error=outcome.error,
        request_ms=outcome.request_ms,
    )


if __name__ == "__main__":
    run_actor("actuator", main)
