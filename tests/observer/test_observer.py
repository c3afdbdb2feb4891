"""The observer as a JournalActor: when it reads (the newest step resolved, the session not
stopping, fewer than session.max_steps steps), what it stores, and how a failed read is
recorded — against the real built-in game and a real recorder, or the in-memory follower."""

from __future__ import annotations

import socket
import threading
import time

import pytest
import zmq

from actors.observer.__main__ import Observer
from actors.observer.source import make_source
from actors.runtime.actor import ActorContext
from actors.runtime.memory import MemoryFollower
from actors.runtime.recorder_client import RecorderClient
from actors.runtime.transport import Counters
from protocol.to_recorder import RecordProposal
from tests.harness import wait_for
from tests.runtime.live import LiveRecorder

pytestmark = pytest.mark.timeout(120)


@pytest.fixture(scope="module")
def live(tmp_path_factory):
    rec = LiveRecorder(tmp_path_factory.mktemp("observer"))
    yield rec
    rec.close()


def closed_port_url() -> str:
    """A loopback URL nothing listens on (the port was free a moment ago)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{s.getsockname()[1]}"


def observer_on(live: LiveRecorder, **session) -> Observer:
    ctx = live.context("observer", session=session)
    return Observer(ctx, make_source(ctx), live.recorder("observer"), live.follower("observer"))


def wait_proposal(oid: str, **extra) -> RecordProposal:
    return RecordProposal(
        proposal_id="p-" + oid.split("-", 1)[1],
        observation_id=oid,
        action=None,
        parameters={},
        reason="test waits",
        source="test",
        wish="wait",
        extra=extra or None,
    )


@pytest.fixture
def fresh(tmp_path):
    rec = LiveRecorder(tmp_path)  # a journal without observations
    yield rec
    rec.close()


def test_it_reads_once_per_resolved_step_and_stores_the_games_state(fresh):
    live = fresh
    obs = observer_on(live)
    try:
        wait_for(lambda: obs.step() or obs.track.steps == 1, 20, "the first observation")
        first = obs.track.last_obs_row
        assert first["phase"] == "preflight" and first["state_type"]
        for _ in range(3):  # unresolved: no further read
            obs.step()
        assert obs.track.steps == 1 and len(live.rows("observation")) == 1
        live.recorder().record_proposals([wait_proposal(first["observation_id"])])
        wait_for(lambda: obs.step() or obs.track.steps == 2, 20, "a read after the wait resolved the step")
        assert obs.track.last_obs_row["phase"] == "run"
    finally:
        obs.close()


def test_a_wait_asking_for_a_read_now_is_read_at_once_and_a_plain_wait_after_the_poll_interval(fresh):
    """``read_now`` on a wait's proposal row (an agent waiting for this read, ``supervisor mcp``)
    makes the next read come at once, although ``game.poll_interval_s`` is ten minutes; a plain
    wait puts the next read that far off."""
    live = fresh
    ctx = live.context("observer", game={"poll_interval_s": 600})
    obs = Observer(ctx, make_source(ctx), live.recorder("observer"), live.follower("observer"))
    loop = threading.Thread(target=obs.run, daemon=True)
    loop.start()
    try:
        first = wait_for(lambda: live.rows("observation"), 20, "the first observation")[-1]
        live.recorder().record_proposals([wait_proposal(first["observation_id"], read_now=True)])
        second = wait_for(lambda: live.rows("observation")[1:], 20, "a read at once after a read_now wait")[-1]
        assert second["phase"] == "run"
        live.recorder().record_proposals([wait_proposal(second["observation_id"])])
        wait_for(
            lambda: obs.track.latest_resolved() and obs.next_read > time.monotonic() + 500,
            20,
            "the next read paced by the poll interval after a plain wait",
        )
        assert len(live.rows("observation")) == 2
    finally:
        ctx.stopping.set()
        loop.join(20)
    assert not loop.is_alive()


def test_no_read_once_max_steps_are_taken(live):
    rec = live.recorder()
    if not live.rows("observation"):
        rec.store_observation("read-max-steps", {"state_type": "map"})
    latest = wait_for(lambda: live.rows("observation"), 10, "an observation")[-1]["observation_id"]
    rec.record_proposals([wait_proposal(latest)])  # resolved: without the limit a read is due
    before = len(live.rows("observation"))
    obs = observer_on(live, max_steps=before)
    try:
        wait_for(lambda: obs.step() or obs.caught_up, 20, "caught up")
        for _ in range(3):
            obs.step()
        assert obs.track.read_due() and obs.track.max_steps_reached()
        assert len(live.rows("observation")) == before
    finally:
        obs.close()


def test_a_failed_read_is_recorded_as_an_observation_error_and_backs_off(live):
    ctx = live.context("observer", game={"base_url": closed_port_url(), "timeout_s": 1})
    obs = Observer(ctx, make_source(ctx), live.recorder("observer"), MemoryFollower())
    try:
        assert obs.read_once() is False and obs.track.read_errors == 1
        errors = wait_for(lambda: live.rows("observation_error"), 10, "the observation_error row")
        assert errors[-1]["error_type"] == "transport"
    finally:
        obs.close()


def offline_observer(follower: MemoryFollower) -> Observer:
    """An observer whose game and recorder are unreachable: any read would be a failed read."""
    ctx = ActorContext(
        name="observer",
        session_id="s",
        session_dir="/nonexistent",
        capture_root="/nonexistent",
        endpoints={"recorder": "ipc://gamerig-test-no-recorder.sock"},
        profile={"game": {"backend": "http", "base_url": closed_port_url(), "timeout_s": 1}},
        heartbeat_s=1.0,
        start_count=1,
        zctx=zmq.Context.instance(),
        stopping=threading.Event(),
        counters=Counters(),
    )
    recorder = RecorderClient(
        ctx.zctx,
        ctx.endpoints["recorder"],
        session="s",
        sender="observer",
        counters=ctx.counters,
        should_stop=lambda: True,
    )
    return Observer(ctx, make_source(ctx), recorder, follower)


@pytest.mark.parametrize(
    "rows",
    [
        [{"event": "observation", "observation_id": "o-000001", "step": 1}],  # its step unresolved
        [{"event": "session_stopping", "reason": "stop_command"}],  # the session ends
    ],
    ids=["unresolved", "stopping"],
)
def test_no_read_while_the_newest_step_is_unresolved_or_the_session_stops(rows):
    obs = offline_observer(MemoryFollower(rows))
    try:
        obs.step()
        obs.step()
        assert obs.caught_up and obs.track.read_errors == 0, "it tried to read"
    finally:
        obs.close()
