"""Attaching to one live session: several taps, detach, refusals, drops, a stalled tap,
Prometheus, plain lines. One session serves the whole module (it is slow to start)."""

from __future__ import annotations

import json
import signal

import httpx
import pytest
import zmq

import protocol
from actors.runtime.transport import Client, Counters, PeerRefused
from protocol.cli_to_supervisor import AttachRequest, DetachRequest, StatusRequest, StopRequest
from protocol.to_recorder import Follow, RecordEvent
from tests.attach.helpers import LONG, Attached, InProcess, Recording, steps_per_s
from tests.harness import DEMO, Session, wait_for

pytestmark = pytest.mark.timeout(90)


@pytest.fixture(scope="module")
def live(tmp_path_factory):
    s = Session(str(tmp_path_factory.mktemp("live")), DEMO, *LONG)
    wait_for(lambda: len(s.events("action_result")) >= 3, 60, "the session to act")
    yield s
    s.signal(signal.SIGTERM)
    s.wait(60)


def _control(s) -> Client:
    rec = s.record()
    return Client(zmq.Context.instance(), rec["control"], session=rec["session_id"], sender="t", counters=Counters())


def test_several_taps_attach_and_detach_while_the_session_runs(live):
    counter = Attached(live, "--module", "actors.taps.example_counter")
    a, b = InProcess(live, Recording()), InProcess(live, Recording())
    wait_for(lambda: counter.grep("attached at #"), 20, "the example tap's snapshot line")
    wait_for(lambda: counter.grep(" results"), 30, "the example tap to print a result")
    wait_for(lambda: len(a.tap.seqs) > 20 and len(b.tap.seqs) > 20, 30, "rows to both taps")
    counter.proc.send_signal(signal.SIGINT)  # Ctrl-C detaches
    assert counter.wait() == 0, counter.err
    assert a.stop() == "detached" and b.stop() == "detached"
    assert counter.grep("detached (detached)") and counter.grep("detached: detached", err=True)
    for t in (a.tap, b.tap):  # snapshot, then the stream from the next sequence on
        ((first, summary),) = t.snapshots
        assert summary["steps"] >= 3 and t.seqs[0] == first + 1
        assert t.seqs == list(range(first + 1, first + 1 + len(t.seqs)))
        assert t.statuses >= 1
    ids = {a.runner.tap_id, b.runner.tap_id}
    wait_for(lambda: ids <= {r["tap_id"] for r in live.events("tap_detached")}, 20, "detach rows")
    attached = {r["tap_id"]: r for r in live.events("tap_attached")}
    assert ids <= set(attached) and attached[a.runner.tap_id]["name"] == "recording"
    names = {r["name"]: r["reason"] for r in live.events("tap_detached")}
    assert names["example-counter"] == "detached" and names["recording"] == "detached"
    steps = len(live.events("observation"))
    wait_for(lambda: len(live.events("observation")) > steps + 5, 30, "the session to go on")


def test_an_attach_without_the_session_token_is_refused_and_recorded(live):
    client = _control(live)
    with pytest.raises(PeerRefused) as err:
        client.request(AttachRequest(token="0" * 32, name="intruder"), deadline_s=5)
    client.close()
    assert err.value.code == "unauthorized"
    wait_for(
        lambda: [
            r
            for r in live.events("control_refused")
            if r["request"] == "attach_request" and r.get("name") == "intruder"
        ],
        20,
        "the refusal row",
    )
    assert not [r for r in live.events("tap_attached") if r["name"] == "intruder"]


def test_a_tap_token_is_read_only_and_its_control_command_is_recorded(live):
    client = _control(live)
    reply = client.request(AttachRequest(token=live.record()["token"], name="overstepper"), deadline_s=5)
    assert client.request(StatusRequest(token=reply.tap_token), deadline_s=5).status["steps"] >= 1
    for body in (StopRequest(token=reply.tap_token), AttachRequest(token=reply.tap_token, name="again")):
        with pytest.raises(PeerRefused) as err:
            client.request(body, deadline_s=5)
        assert err.value.code in ("read_only", "unauthorized")
    client.request(DetachRequest(token=reply.tap_token), deadline_s=5)
    client.close()
    wait_for(
        lambda: [
            r
            for r in live.events("control_refused")
            if r.get("tap_id") == reply.tap_id and r["request"] == "stop_request"
        ],
        20,
        "the refusal row",
    )
    assert not live.events("stop_requested") and live.proc.poll() is None
    wait_for(lambda: [r for r in live.events("tap_detached") if r["tap_id"] == reply.tap_id], 20, "the detach row")
    assert reply.tap_token not in json.dumps(live.rows())  # tokens are never recorded
    # the stream endpoint a tap reads from refuses writes, and records them
    stream = Client(zmq.Context.instance(), reply.stream, session="x", sender="overstepper", counters=Counters())
    with pytest.raises(PeerRefused) as err:
        stream.request(RecordEvent(event="forged", fields={}), deadline_s=5)
    stream.close()
    assert err.value.code == "read_only"
    wait_for(
        lambda: [r for r in live.events("tap_write_refused") if r["sender"] == "overstepper"],
        20,
        "the write refusal row",
    )
    assert not live.events("forged")


def test_a_tap_that_falls_behind_is_told_how_many_rows_it_dropped(live):
    slow = InProcess(live, Recording(max_lag=5, row_delay_s=0.05))
    wait_for(lambda: slow.tap.drops, 30, "a drop")
    assert slow.stop() == "detached"
    t = slow.tap
    assert sum(t.drops) == slow.runner.dropped > 0 and len(t.snapshots) == len(t.drops) + 1
    # rows stay in order; after each drop the stream resumes right after the new snapshot
    assert t.seqs == sorted(set(t.seqs))
    for last, _summary in t.snapshots[1:]:
        later = [q for q in t.seqs if q > last]
        assert not later or later[0] == last + 1


def test_a_stalled_tap_does_not_slow_the_pipeline(live):
    base = steps_per_s(live, 4.0)
    tap = Attached(live, "metrics-tap", "--interval", "0.2")
    wait_for(lambda: tap.grep("steps"), 20, "the metrics tap's first line")
    tap.proc.send_signal(signal.SIGSTOP)  # it stops reading: its requests stay unanswered
    raw = zmq.Context.instance().socket(zmq.DEALER)  # and one that asks but never reads
    raw.setsockopt(zmq.LINGER, 0)
    raw.connect(live.endpoint("stream"))
    for _ in range(50):
        raw.send(
            protocol.encode(protocol.wrap(Follow(after=0, max_rows=256, wait_ms=0), session="x", sender="stalled"))
        )
    try:
        stalled = steps_per_s(live, 4.0)
    finally:
        raw.close()
        tap.proc.kill()
        tap.proc.wait(10)
    assert base > 1 and stalled >= 0.6 * base, (base, stalled)
    # the killed tap is declared lost after four silent keep-alives
    wait_for(
        lambda: [r for r in live.events("tap_detached") if r["name"] == "metrics-tap" and r["reason"] == "lost"],
        20,
        "tap lost",
    )


def test_prometheus_scrape_and_plain_lines_without_a_terminal(live, tmp_path):
    jsonl = tmp_path / "m.jsonl"
    tap = Attached(live, "metrics-tap", "--prometheus", "127.0.0.1:0", "--jsonl", str(jsonl), "--interval", "0.3")
    url = wait_for(lambda: [ln.split()[1] for ln in tap.grep("prometheus: ", err=True)], 20, "the /metrics address")[0]
    wait_for(lambda: len(tap.grep("steps")) >= 2, 20, "two plain lines")

    def scraped():
        r = httpx.get(url, timeout=5)
        return r.status_code == 200 and "gamerig_stage_latency_ms{" in r.text and r.text

    text = wait_for(scraped, 20, "latency samples in a scrape", every=0.3)
    for name in (
        "gamerig_journal_sequence",
        "gamerig_steps_total",
        "gamerig_steps_per_second",
        'gamerig_action_results_total{outcome="accepted"}',
        "gamerig_model_tokens_total",
        "gamerig_model_errors_total",
        'gamerig_actor_rss_bytes{actor="recorder"}',
        "gamerig_actor_cpu_percent",
        "gamerig_actor_restarts_total",
        "gamerig_tap_dropped_rows_total",
    ):
        assert name in text, name
    tap.proc.send_signal(signal.SIGINT)
    assert tap.wait() == 0
    lines = tap.grep("steps")
    assert all("\x1b" not in ln and ln.startswith("seq ") for ln in lines)  # no redrawing
    assert "detached: detached" in lines[-1]
    samples = [json.loads(ln) for ln in jsonl.read_text().splitlines()]
    assert samples and samples[-1]["final"] == "detached" and samples[-1]["steps"] >= 1
    assert set(samples[-1]["latency_ms"]) == {"read", "decide", "model", "intent_ack", "request", "result"}


def test_the_docs_example_is_the_tested_file():
    import os

    from tests.harness import REPO

    doc = open(os.path.join(REPO, "docs", "attach.md"), encoding="utf-8").read()
    example = open(os.path.join(REPO, "actors", "taps", "example_counter.py"), encoding="utf-8").read()
    assert f"```python\n{example}```" in doc and len(example.splitlines()) < 40
