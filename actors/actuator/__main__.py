"""``python -m actors.actuator``."""
from __future__ import annotations

import logging
import uuid

from actors.bounded import BoundedDict
from actors.follow import Follower
from actors.runtime import ActorContext, run_actor
from actors.steps import StepTracker
from actors.transport import NotEncodable, PeerRefused, RequestFailed
from protocol.to_recorder import RecordEvent, RecordIntent, RecordResult

from .sink import make_sink

log = logging.getLogger("actuator")

ORPHAN_ERROR = ("the actuator holding this attempt exited before recording a result; "
                "the request may or may not have been sent, and it is not sent again")


class Actuator:
    def __init__(self, ctx: ActorContext):
        self.ctx = ctx
        self.requester = f"actuator-{uuid.uuid4().hex[:12]}"
        self.sink = make_sink(ctx)
        self.recorder = ctx.client("recorder")
        self.track = StepTracker()
        self.queue: list[str] = []  # executed proposal ids not yet attempted by anyone
        self.handled: BoundedDict = BoundedDict()  # ids this instance acted on (recent)

    def feed(self, row: dict) -> None:
        self.track.feed(row)
        ev = row["event"]
        if ev == "proposal_status" and row["status"] == "execute":
            self.queue.append(row["proposal_id"])
        elif ev == "action_attempt" and row["proposal_id"] in self.queue:
            self.queue.remove(row["proposal_id"])
        elif ev == "observation":
            self.queue.clear()  # a newer read supersedes any proposal not yet attempted

    def recover_orphans(self) -> None:
        for att_id, att in list(self.track.unresolved.items()):
            if att.get("requester") == self.requester or att_id in self.handled:
                continue
            self.handled[att_id] = None
            self._record_result(RecordResult(attempt_id=att_id, outcome="unknown", error=ORPHAN_ERROR))

    def act_on_queue(self) -> None:
        while self.queue and not self.ctx.stopping.is_set():
            pid = self.queue.pop(0)
            if pid in self.handled:
                continue
            self.handled[pid] = None
            self._act(pid)

    def _act(self, proposal_id: str) -> None:
        try:
            ack = self.recorder.request(RecordIntent(proposal_id=proposal_id, requester=self.requester),
                                        deadline_s=3600, should_stop=self.ctx.stopping.is_set)
        except PeerRefused as exc:
            if exc.code in ("journal_failed", "storage_failed"):
                log.error("intent not recorded, request not sent: %s", exc)
                self.ctx.request_stop("intent_not_recorded", str(exc))
            else:
                log.warning("intent refused, request not sent: %s", exc)
            return
        except RequestFailed as exc:
            log.error("no acknowledgement, request not sent: %s", exc)
            return
        outcome = self.sink.send(ack.action, ack.parameters, ack.attempt_id)
        self._record_result(RecordResult(attempt_id=ack.attempt_id, outcome=outcome.outcome,
                                         http_status=outcome.http_status, response=outcome.response,
                                         error=outcome.error, request_ms=outcome.request_ms))

    def _record_result(self, msg: RecordResult) -> None:
        try:
            try:
                self.recorder.request(msg, deadline_s=30, should_stop=self.ctx.stopping.is_set)
            except NotEncodable as exc:  # keep the outcome; the game's answer cannot travel
                self.recorder.request(RecordResult(
                    attempt_id=msg.attempt_id, outcome=msg.outcome, http_status=msg.http_status,
                    response=None, error=f"{msg.error or ''} response not recordable: {exc}".strip(),
                    request_ms=msg.request_ms), deadline_s=30, should_stop=self.ctx.stopping.is_set)
        except RequestFailed as exc:
            log.error("result of %s not recorded: %s", msg.attempt_id, exc)
            try:
                self.recorder.request(RecordEvent(event="action_error", fields={
                    "attempt_id": msg.attempt_id, "error": f"result not recorded: {exc}"}), deadline_s=2)
            except RequestFailed:
                pass
            self.ctx.request_stop("result_not_recorded", str(exc))

    def close(self) -> None:
        self.sink.close()
        self.recorder.close()


def main(ctx: ActorContext) -> int:
    act = Actuator(ctx)
    follower = Follower(ctx.zctx, ctx.endpoints["recorder"], session=ctx.session_id,
                        sender=ctx.name, counters=ctx.counters)
    try:
        while not ctx.stopping.is_set():
            for row in follower.next_rows(0.2):
                act.feed(row)
            if follower.caught_up:
                act.recover_orphans()
                act.act_on_queue()
    finally:
        act.close()
        follower.close()
    return 0


if __name__ == "__main__":
    run_actor("actuator", main)
