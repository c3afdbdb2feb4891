"""``python -m actors.observer``: read the game's state whenever the newest step is resolved.

The observer is a ``JournalActor``: it follows the journal, and once caught up with every
step resolved (``StepTracker.read_due``) it reads the state once, stores it with the recorder
and follows the stream until its observation row arrives. After an action it reads at once
(the policy waits if the effect is not visible yet); after a wait or a preview it gives the
game ``game.poll_interval_s`` to move; a failed read backs off (doubling, up to 2 s). Once
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

from .source import make_source

log = logging.getLogger("observer")

ACTED = ("accepted", "rejected", "unknown")  # a step resolved by an action's result
OBSERVATION_ROW_S = 30.0  # how long to follow the stream for a stored observation's row


class Observer(JournalActor):
    PACE_S = 0.01  # while pipelined steps run, no read is due per row
    WAIT_S = 0.005  # a read is due: look for rows only briefly

    def __init__(self, ctx: ActorContext, source, recorder: RecorderClient, follower=None):
        super().__init__(follower, max_steps=ctx.setting("session.max_steps"), stopping=ctx.stopping)
        self.ctx, self.source, self.recorder = ctx, source, recorder
        self.identity = ctx.setting("game.identity", True)
        self.poll = float(ctx.setting("game.poll_interval_s", 0.05))
        self.next_read = 0.0
        self.resolved_seen: str | None = None

    def wait_s(self) -> float:
        waiting = not self.follower.caught_up or not self.track.read_due()
        return 0.2 if waiting else self.WAIT_S

    def on_caught_up(self) -> None:
        track = self.track
        if track.stopping or not track.read_due():
            return
        if track.last_obs != self.resolved_seen:  # a step just got resolved: pace the next read
            self.resolved_seen = track.last_obs
            acted = track.latest_resolution() in ACTED
            self.next_read = time.monotonic() + (0.0 if acted else self.poll)
        if track.max_steps_reached():
            self.ctx.wait(0.2)
            return
        delay = self.next_read - time.monotonic()
        if delay > 0 and self.ctx.wait(delay):
            return
        if self.read_once():
            self.wait_for_observation()
        else:
            self.next_read = time.monotonic() + min(2.0, self.poll * 2 ** track.read_errors)

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
        try:
            self.recorder.store_observation(read_id, state, phase=phase, read_ms=read_ms, identity=ident)
        except NotEncodable as exc:  # a state that cannot travel is a failed read, not a crash
            self.track.read_errors += 1
            self.recorder.report_observation_error(read_id, str(exc), "not_encodable")
            return False
        except RequestFailed as exc:
            log.error("observation not stored: %s", exc)
            return False
        return True

    def wait_for_observation(self) -> None:
        """Follow the stream until the stored observation's row arrives (it is ours)."""
        seen = self.track.steps
        deadline = time.monotonic() + OBSERVATION_ROW_S
        while self.track.steps == seen and time.monotonic() < deadline and not self.stop_event.is_set():
            self.follow(0.2)

    def close(self) -> None:
        self.source.close()
        self.recorder.close()
        super().close()


def main(ctx: ActorContext) -> int:
    follower = Follower(ctx.zctx, ctx.endpoints["recorder"], session=ctx.session_id,
                        sender=ctx.name, counters=ctx.counters)
    return Observer(ctx, make_source(ctx), ctx.recorder(), follower).run()


if __name__ == "__main__":
    run_actor("observer", main)
