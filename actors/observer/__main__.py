"""``python -m actors.observer``."""
from __future__ import annotations

import logging
import time
import uuid

from actors.runtime.follow import Follower
from actors.runtime.actor import ActorContext, run_actor
from actors.runtime.steps import StepTracker
from actors.runtime.transport import NotEncodable, RequestFailed

from .source import make_source

log = logging.getLogger("observer")

PIPELINED_PACE_S = 0.01  # while pipelined steps run, no read is due per row (actors.runtime.follow)


def main(ctx: ActorContext) -> int:
    source = make_source(ctx)
    recorder = ctx.recorder()
    follower = Follower(ctx.zctx, ctx.endpoints["recorder"], session=ctx.session_id,
                        sender=ctx.name, counters=ctx.counters)
    track = StepTracker()
    max_steps = ctx.setting("session.max_steps")
    poll = float(ctx.setting("game.poll_interval_s", 0.05))
    next_read = 0.0
    resolved_seen: str | None = None
    try:
        while not ctx.stopping.is_set():
            follower.pace_s = PIPELINED_PACE_S if track.in_flight else 0.0
            waiting = not follower.caught_up or not track.read_due()
            for row in follower.next_rows(0.2 if waiting else 0.005):
                track.feed(row)
            if not follower.caught_up or track.stopping or not track.read_due():
                continue
            if track.last_obs != resolved_seen:  # a step just got resolved: pace the next read
                resolved_seen = track.last_obs
                # after an action, read at once (the policy waits if the effect is not
                # visible yet); after a wait or a preview, give the game time to move
                acted = track.latest_resolution() in ("accepted", "rejected", "unknown")
                next_read = time.monotonic() + (0.0 if acted else poll)
            if max_steps and track.steps_taken >= max_steps:
                ctx.wait(0.2)
                continue
            delay = next_read - time.monotonic()
            if delay > 0 and ctx.wait(delay):
                break
            if _read_once(ctx, source, recorder, track):
                _wait_for_observation(ctx, follower, track)
            else:
                next_read = time.monotonic() + min(2.0, poll * 2 ** track.read_errors)
    finally:
        source.close()
        recorder.close()
        follower.close()
    return 0


def _read_once(ctx: ActorContext, source, recorder, track: StepTracker) -> bool:
    """Read the state once and hand it to the recorder; True if an observation was stored."""
    read_id = uuid.uuid4().hex
    phase = "preflight" if track.last_obs is None else "run"
    start = time.monotonic()
    try:
        state = source.read()
    except source.ReadFailed as exc:
        track.read_errors += 1
        recorder.report_observation_error(read_id, str(exc), exc.kind)
        return False
    read_ms = round((time.monotonic() - start) * 1000, 3)
    ident = source.read_identity(state) if ctx.setting("game.identity", True) else None
    try:
        recorder.store_observation(read_id, state, phase=phase, read_ms=read_ms, identity=ident)
    except NotEncodable as exc:  # a state that cannot travel is a failed read, not a crash
        track.read_errors += 1
        recorder.report_observation_error(read_id, str(exc), "not_encodable")
        return False
    except RequestFailed as exc:
        log.error("observation not stored: %s", exc)
        return False
    return True


def _wait_for_observation(ctx: ActorContext, follower: Follower, track: StepTracker) -> None:
    """Follow the stream until the stored observation's row arrives (it is ours)."""
    seen = track.steps
    deadline = time.monotonic() + 30
    while track.steps == seen and time.monotonic() < deadline and not ctx.stopping.is_set():
        for row in follower.next_rows(0.2):
            track.feed(row)


if __name__ == "__main__":
    run_actor("observer", main)
