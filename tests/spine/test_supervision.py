"""Supervision in whole-process sessions: crashes, restarts, recorder loss, bad input."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys

import httpx
import pytest
import zmq

import protocol
from actors.game.http import start_server
from actors.runtime.transport import Client, Counters, PeerRefused
from protocol.actor_to_supervisor import Hello
from protocol.cli_to_supervisor import StatusRequest
from protocol.from_recorder import Recorded
from protocol.supervisor_to_actor import Refused
from protocol.to_recorder import Follow, RecordEvent, RecordResult, StoreObservation
from supervisor.commands.registry import REGISTRY
from tests.fuzz.hostile_http import HostileGame
from tests.harness import REPO, kill, wait_for

pytestmark = pytest.mark.timeout(120)
LONG = ("session.max_steps=100000", "session.stop_on_run_end=false")


def test_killing_a_permanent_actor_restarts_it_and_records_it(session_factory):
    s = session_factory(*LONG, args=("--max-steps", "150"))
    wait_for(lambda: len(s.events("action_result")) >= 5, 60, "five results")
    old = s.actor_pid("policy")
    kill(old)
    assert s.wait() == 0, s.stderr
    exits = [r for r in s.events("actor_exit") if r["actor"] == "policy" and not r["expected"]]
    assert exits and exits[0]["pid"] == old and exits[0]["signal"] == "SIGKILL"
    assert [r["actor"] for r in s.events("actor_restart")] == ["policy"]
    starts = [r for r in s.events("actor_start") if r["actor"] == "policy"]
    assert [r["start_count"] for r in starts] == [1, 2] and starts[1]["pid"] != old
    assert s.summary()["actor_restarts"] == {"policy": 1}
    # the restarted policy caught up from the journal: one proposal per observation
    props = [r["observation_id"] for r in s.events("proposal")]
    assert len(props) == len(set(props)) == len(s.events("observation"))


def test_killing_the_recorder_blocks_every_further_post(session_factory):
    s = session_factory(*LONG, "actors.recorder.restart=temporary")
    wait_for(lambda: len(s.events("action_result")) >= 5, 60, "five results")
    base = s.base_url()
    kill(s.actor_pid("recorder"))
    kill_time_attempts = len(s.events("action_attempt"))
    seen = []

    def game_posts():  # poll the game until the session has stopped it
        try:
            seen.append(httpx.get(base + "/__gamerig/stats", timeout=1).json()["posts"])
        except httpx.HTTPError:
            return True
        return False

    wait_for(game_posts, 60, "the session to stop the game", every=0.05)
    assert s.wait() == 1
    stats = s.game_stats()
    # an attempt whose ack left before the kill may still be sent; nothing after it
    assert stats["posts"] <= kill_time_attempts
    assert stats["intent_violations"] == [] and stats["posts_with_intent"] == stats["posts"]
    summary = s.summary()  # the supervisor restarted the recorder once, only to finalize
    assert summary["reason"] == "actor_exited"
    assert s.rows()[-1]["event"] == "session_end"


def test_a_bad_profile_is_refused_with_the_key_named(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("game:\n  backend: http\nactors:\n  recorder: {restart: sometimes}\n")
    p = subprocess.run(
        [sys.executable, "-m", "supervisor", "start", str(bad)], cwd=REPO, capture_output=True, text=True, timeout=60
    )
    assert p.returncode == 2
    assert "actors.recorder.restart" in p.stderr and "sometimes" in p.stderr
    p = subprocess.run(
        [sys.executable, "-m", "supervisor", "validate", str(bad)], cwd=REPO, capture_output=True, text=True, timeout=60
    )
    assert p.returncode == 2 and "permanent, transient, temporary" in p.stderr


def test_garbage_on_actor_sockets_is_counted_and_the_session_goes_on(session_factory):
    s = session_factory(*LONG)
    wait_for(lambda: len(s.events("action_result")) >= 3, 60, "three results")
    ctx = zmq.Context.instance()
    garbage = [
        b"",
        b"\xc1",
        b"not msgpack at all",
        b"\x93\x01\x02\x03",
        protocol.encode(
            protocol.wrap(Hello(actor="x", pid=1, protocol_major=1, protocol_minor=0), session="s", sender="t")
        )[:-3],
        b"\x9a" + b"\xa7gamerig\x01\x00\xa4nope\x01" + b"\xc0" * 5,
    ]
    for name in ("recorder", "control", "model"):
        sock = ctx.socket(zmq.DEALER)
        sock.setsockopt(zmq.LINGER, 2000)  # deliver everything before closing
        sock.connect(s.endpoint(name))
        for frame in garbage:
            sock.send(frame)
        sock.close()
    wait_for(lambda: _bad_frames(s).get("recorder", 0) >= len(garbage) - 1, 30, "the recorder to count the bad frames")
    steps = len(s.events("observation"))
    wait_for(lambda: len(s.events("observation")) >= steps + 10, 60, "ten more steps")
    s.signal(signal.SIGTERM)
    assert s.wait() == 143, s.stderr
    assert not [r for r in s.events("actor_exit") if not r["expected"]]


def _bad_frames(s) -> dict:
    p = subprocess.run(
        [sys.executable, "-m", "supervisor", "status", "--json", "--runtime-dir", s.runtime],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=30,
    )
    if p.returncode != 0 or not p.stdout.strip():
        return {}
    sessions = json.loads(p.stdout)["sessions"]
    if not sessions or "actors" not in sessions[0]:
        return {}
    return {n: sum((a.get("status") or {}).get("bad_frames", {}).values()) for n, a in sessions[0]["actors"].items()}


def test_a_foreign_protocol_version_is_refused_at_the_handshake(session_factory):
    s = session_factory(*LONG, args=("--max-steps", "300"))  # still running when the hello comes
    wait_for(s.has_session_dir, 60, "the session to start")
    ctx = zmq.Context.instance()
    sock = ctx.socket(zmq.DEALER)
    sock.setsockopt(zmq.LINGER, 0)
    sock.connect(s.record()["control"])
    sock.send(
        protocol.encode(
            protocol.wrap(
                Hello(actor="observer", pid=os.getpid(), protocol_major=2, protocol_minor=0),
                session="x",
                sender="observer",
            )
        )
    )
    assert sock.poll(10000), "no answer to a hello"
    reply = protocol.decode(sock.recv()).body
    assert isinstance(reply, Refused) and "protocol version 2.0 is not accepted" in reply.reason
    sock.close()
    assert s.wait() == 0


def test_status_and_stop_commands_drive_a_running_session(session_factory):
    s = session_factory(*LONG)
    wait_for(lambda: len(s.events("action_result")) >= 3, 60, "three results")

    def run(*a):
        return subprocess.run(
            [sys.executable, "-m", "supervisor", *a, "--runtime-dir", s.runtime],
            cwd=REPO,
            capture_output=True,
            text=True,
            timeout=30,
        )

    def status() -> dict:
        st = run("status", "--json")
        assert st.returncode == 0, st.stderr
        return json.loads(st.stdout)["sessions"][0]

    # the supervisor follows the journal at its own pace: its count catches up with the file's
    info = wait_for(lambda: (lambda i: i if i["steps"] >= 3 else None)(status()), 20, "status to count three steps")
    assert set(info["actors"]) >= {"recorder", "policy", "observer", "actuator"}
    assert all(a["alive"] and a["rss_bytes"] > 0 for a in info["actors"].values())
    human = run("status")
    assert info["session_id"] in human.stdout and "recorder" in human.stdout
    stop = run("stop")
    assert stop.returncode == 0 and "stopping" in stop.stdout
    assert s.wait() == 0
    assert s.summary()["reason"] == "stop_command"


def test_a_control_request_with_a_wrong_token_is_refused_and_recorded(session_factory):
    s = session_factory(*LONG, args=("--max-steps", "60"))
    wait_for(s.has_session_dir, 60, "the session to start")
    client = Client(zmq.Context.instance(), s.record()["control"], session="x", sender="t", counters=Counters())
    with pytest.raises(PeerRefused) as err:
        client.request(StatusRequest(token="wrong"), deadline_s=5)
    assert err.value.code == "unauthorized"
    client.close()
    assert s.wait() == 0
    assert s.events("control_refused")


def test_help_explains_every_command():
    p = subprocess.run(
        [sys.executable, "-m", "supervisor", "--help"], cwd=REPO, capture_output=True, text=True, timeout=30
    )
    assert p.returncode == 0
    for cls in REGISTRY:
        assert cls.name in p.stdout
        sub = subprocess.run(
            [sys.executable, "-m", "supervisor", cls.name, "--help"],
            cwd=REPO,
            capture_output=True,
            text=True,
            timeout=30,
        )
        assert sub.returncode == 0 and "Example" in sub.stdout, cls.name


def test_the_recorder_refuses_bad_requests_and_keeps_running(session_factory):
    """Well-formed frames with values the journal cannot hold, reserved events, bad cursors.

    A result carrying ``inf``: refused (``bad_request``) while its attempt awaits a result —
    the attempt stays open and the actuator's own result lands afterwards — and, for an
    attempt already resolved, answered with the recorded row's sequence (a repeat adds
    nothing). The game sits behind a server that holds the 4th POST's answer, so attempt
    a-000004 awaits its result long enough to be asked about."""
    game = start_server("127.0.0.1", 0, 1)
    held = HostileGame(game.url, {("POST", 4): "slow"}, slow_s=3)
    s = session_factory(*LONG, "game.builtin=false", f"game.base_url={held.url}", "game.timeout_s=20")
    wait_for(lambda: any(r["attempt_id"] == "a-000004" for r in s.events("action_attempt")), 60, "the held attempt")
    client = Client(zmq.Context.instance(), s.endpoint("recorder"), session="x", sender="t", counters=Counters())
    infinite = {"x": float("inf")}
    with pytest.raises(PeerRefused) as info:
        client.request(RecordResult(attempt_id="a-000004", outcome="accepted", response=infinite), deadline_s=5)
    assert info.value.code == "bad_request" and "a-000004" not in {
        r["attempt_id"] for r in s.events("action_result")
    }, "refused while a-000004 was open"
    [first] = [r for r in s.events("action_result") if r["attempt_id"] == "a-000001"]
    repeat = client.request(RecordResult(attempt_id="a-000001", outcome="accepted", response=infinite), deadline_s=5)
    assert isinstance(repeat, Recorded) and repeat.sequence == first["sequence"]
    bad = [
        (StoreObservation(read_id="r-nan", state={"state_type": "menu", "hp": float("nan")}), "bad_request"),
        (RecordEvent(event="run_identity_changed", fields={}), "reserved_event"),
        (RecordEvent(event="note", fields={"x": float("nan")}), "bad_request"),
        (Follow(after=-100), "bad_cursor"),
    ]
    for msg, code in bad:
        with pytest.raises(PeerRefused) as info:
            client.request(msg, deadline_s=5)
        assert info.value.code == code, (msg.TYPE, info.value.code)
    client.close()
    wait_for(
        lambda: any(r["attempt_id"] == "a-000004" for r in s.events("action_result")),
        30,
        "the actuator's own result for the held attempt",
    )
    steps = len(s.events("observation"))
    wait_for(lambda: len(s.events("observation")) >= steps + 10, 60, "ten more steps")
    s.signal(signal.SIGTERM)
    assert s.wait() == 143
    results = [r for r in s.events("action_result") if r["attempt_id"] in ("a-000001", "a-000004")]
    assert [(r["attempt_id"], r["outcome"]) for r in results] == [("a-000001", "accepted"), ("a-000004", "accepted")], (
        "one result each, the real ones"
    )
    assert not s.events("note")
    assert not [r for r in s.events("actor_exit") if r["actor"] == "recorder" and not r["expected"]]
    assert s.summary()["reason"] == "sigterm"
    held.shutdown()
    game.shutdown()


def test_a_slow_stop_during_a_group_restart_keeps_everyone_else_alive(session_factory):
    """rest_for_one: the actuator dies while the observer (after it) is frozen, so stopping the
    observer takes SIGTERM, then SIGKILL. Meanwhile the supervisor keeps heartbeats going: no
    other actor may decide it is gone, and no actor runs twice."""
    s = session_factory(*LONG, "supervisor.strategy=rest_for_one")
    wait_for(lambda: len(s.events("action_result")) >= 3, 60, "three results")
    observer = s.actor_pid("observer")
    os.kill(observer, signal.SIGSTOP)
    kill(s.actor_pid("actuator"))
    wait_for(
        lambda: len([r for r in s.events("actor_start") if r["actor"] == "observer"]) >= 2, 60, "the observer's restart"
    )
    steps = len(s.events("observation"))
    wait_for(lambda: len(s.events("observation")) >= steps + 5, 60, "five more steps")
    s.signal(signal.SIGTERM)
    assert s.wait() == 143, s.stderr
    exits = [r for r in s.events("actor_exit") if not r["expected"]]
    assert [r["actor"] for r in exits] == ["actuator"], exits
    starts = {}
    for r in s.events("actor_start"):
        starts[r["actor"]] = starts.get(r["actor"], 0) + 1
    assert starts == {"recorder": 1, "game": 1, "model_client": 1, "policy": 1, "actuator": 2, "observer": 2}
    assert "supervisor silent" not in s.log("recorder") + s.log("policy") + s.log("game")
