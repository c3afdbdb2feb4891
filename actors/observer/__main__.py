"""``python -m actors.observer``: read the game's state whenever the newest step is resolved.

The observer is a ``JournalActor``: it follows the journal, and once caught up with every
step resolved (``StepTracker.read_due``) it reads the state once, stores it with the recorder
and reads no more until that observation's row has come (with the row resolving its step:
the observer wakes only for results and dispositions other than execute, ``WAKE``). Its next
follow request goes out right after the store, before the store's reply, so that the recorder
takes both in one turn rather than being woken for the follow while the policy's proposal is
on its way. After an
action it reads at once
(the policy waits if the effect is not visible yet), and so after a wait whose proposal row
says ``read_now: true`` (someone is waiting for this read: an agent's ``get_game_state``
through ``supervisor mcp``); after any other wait or a preview it gives the game
``game.poll_interval_s`` to move; a failed read backs off (doubling, up to 2 s). Once
``session.max_steps`` steps are taken it reads no more.
"""

from __future__ import annotations

import logging
import time
import uuid

from actors.runtime.actor import ActorContext, run_actor
from actors.runtime.follow import Follower
from actors.runtime.journal_actor import JournalActor
from actors.runtime.recorder_client import RecorderClient
from actors.runtime.transport import NotEncodable, RequestFailed
from protocol import events as ev

from .source import make_source

log = logging.getLogger("observer")

ACTED = ("accepted", "rejected", "unknown")  # a step resolved by an action's result
OBSERVATION_ROW_S = 30.0  # how long to wait for a stored observation's row before reading again


class Observer(JournalActor):
    PACE_S = 0.01  # while pipelined steps run, no read is due per row
    WAIT_S = 0.005  # a read is due: look for rows only briefly
    #: a step resolved: a result, or a disposition other than execute (an execute's result follows)
    WAKE = (
        ev.ActionResult.KIND,
        *(f"{ev.ProposalStatus.KIND}.status={s}" for s in ev.ProposalStatus.STATUSES if s != "execute"),
    )

    def __init__(self, ctx: ActorContext, source, recorder: RecorderClient, follower=None):
        super().__init__(follower, max_steps=ctx.setting("session.max_steps"), stopping=ctx.stopping)
        self.ctx, self.source, self.recorder = ctx, source, recorder
        self.identity = ctx.setting("game.identity", True)
        self.poll = float(ctx.setting("game.poll_interval_s", 0.05))
        self.next_read = 0.0
        self.resolved_seen: str | None = None
        self.stored: tuple[int, float] | None = None  # our latest observation's row: sequence, deadline
        self.read_now_for: str | None = None  # the observation whose proposal asked for a read at once

    def on_row(self, row: dict) -> None:
        if row["event"] == ev.Proposal.KIND and row.get("read_now") is True:
            self.read_now_for = row["observation_id"]

    def row_pending(self) -> bool:
        """Whether the row of the observation just stored has yet to come (no read until it
        has: the newest step is the one it opens). It comes with the row that resolves its
        step; given up after ``OBSERVATION_ROW_S``."""
        if self.stored is not None and (self.follower.cursor >= self.stored[0] or time.monotonic() > self.stored[1]):
            self.stored = None
        return self.stored is not None

    def wait_s(self) -> float:
        waiting = not self.follower.caught_up or self.row_pending() or not self.track.read_due()
        return 0.2 if waiting else self.WAIT_S

    def on_caught_up(self) -> None:
        track = self.track
        if track.stopping or self.row_pending() or not track.read_due():
            return
        if track.last_obs != self.resolved_seen:  # a step just got resolved: pace the next read
            self.resolved_seen = track.last_obs
            at_once = track.latest_resolution() in ACTED or self.read_now_for == track.last_obs
            self.next_read = time.monotonic() + (0.0 if at_once else self.poll)
        if track.max_steps_reached():
            self.ctx.wait(0.2)
            return
        delay = self.next_read - time.monotonic()
        if delay > 0 and self.ctx.wait(delay):
            return
        if not self.read_once():
            self.next_read = time.monotonic() + min(2.0, self.poll * 2**track.read_errors)

    def read_once(self) -> bool:
        """Read the state once and hand it to the recorder; True if an observation was stored."""
        read_id = uuid.uuid4().hex
        phase = "preflight" if self.track.last_obs is None else "run"
        start = time.monotonic()
        try:
            state = self.source.read()
        except self.source.ReadFailed as exc:
            self.track.read_errors += 1
            self.recorder.report_observation_error(read_id, str(exc), exc.kind)
            return False
        read_ms = round((time.monotonic() - start) * 1000, 3)
        ident = self.source.read_identity(state) if self.identity else None
        try:  # (the next follow goes out right after the store: the recorder takes both in one turn)
            stored = self.recorder.store_observation(
                read_id, state, phase=phase, read_ms=read_ms, identity=ident, after_send=self.socket
            )
        except NotEncodable as exc:  # a state that cannot travel is a failed read, not a crash
            self.track.read_errors += 1
            self.recorder.report_observation_error(read_id, str(exc), "not_encodable")
            return False
        except RequestFailed as exc:
            log.error("observation not stored: %s", exc)
            return False
        self.stored = (stored.sequence, time.monotonic() + OBSERVATION_ROW_S)
        return True

    def close(self) -> None:
        self.source.close()
        self.recorder.close()
        super().close()


def main(ctx: ActorContext) -> int:
    follower = Follower(
        ctx.zctx, ctx.endpoints["recorder"], session=ctx.session_id, sender=ctx.name, counters=ctx.counters
    )
    return Observer(ctx, make_source(ctx), ctx.recorder(), follower).run()


if __name__ == "__main__":
    run_actor("observer", main)
