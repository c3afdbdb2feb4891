"""The metrics tap's numbers and its dashboard, from synthetic rows (no session needed)."""

from __future__ import annotations

import io

from rich.console import Console

from actors.taps.metrics import Metrics, MetricsTap
from actors.taps.metrics_view import Dashboard, PlainLines, format_line


def _at(ms: float) -> str:
    return f"2026-11-30T00:00:{ms / 1000:09.6f}Z"


ROWS = [
    {"sequence": 11, "event": "observation", "step": 6, "read_ms": 4.0, "recorded_at": _at(0)},
    {
        "sequence": 12,
        "event": "proposal",
        "proposal_id": "p1",
        "decide_ms": 2.0,
        "recorded_at": _at(10),
        "model_evidence": [
            {"usage": {"latency_ms": 300.0, "prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}}
        ],
    },
    {"sequence": 13, "event": "proposal_status", "proposal_id": "p1", "status": "execute", "recorded_at": _at(20)},
    {"sequence": 14, "event": "action_attempt", "proposal_id": "p1", "attempt_id": "a1", "recorded_at": _at(25)},
    {
        "sequence": 15,
        "event": "action_result",
        "attempt_id": "a1",
        "outcome": "rejected",
        "request_ms": 7.0,
        "recorded_at": _at(40),
    },
    {"sequence": 16, "event": "model_error", "recorded_at": _at(50)},
    {"sequence": 17, "event": "actor_restart", "actor": "policy", "recorded_at": _at(60)},
]


def test_every_stage_and_counter_is_derived_from_rows():
    m = Metrics()
    m.snapshot(
        10,
        {
            "session": "s",
            "steps": 5,
            "action_results": {"accepted": 4, "rejected": 0, "unknown": 1},
            "model_usage": {"total_tokens": 100, "errors": 1},
            "actor_restarts": {},
        },
    )
    for row in ROWS:
        m.row(row)
    m.status({"actors": {"policy": {"pid": 9, "alive": True, "starts": 1, "rss_bytes": 2 << 20, "cpu_percent": 3.0}}})
    m.drop(3)
    s = m.sample()
    assert (s["sequence"], s["steps"], s["dropped"]) == (17, 6, 3)
    assert s["actions"] == {"accepted": 4, "rejected": 1, "unknown": 1}
    lat = {k: v["p50"] for k, v in s["latency_ms"].items()}
    assert lat == {"read": 4.0, "decide": 2.0, "model": 300.0, "intent_ack": 5.0, "request": 7.0, "result": 15.0}
    assert s["model"] == {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 115, "errors": 2}
    assert s["actors"]["policy"]["restarts"] == 1 and s["actors"]["policy"]["rss_bytes"] == 2 << 20
    assert "rejected 1" in format_line(s) and "policy=2M/3%/r1" in format_line(s)


def test_the_dashboard_draws_and_plain_lines_do_not_redraw():
    buf = io.StringIO()
    dash = Dashboard(Console(file=buf, force_terminal=True, width=140), every_s=0)
    plain = io.StringIO()
    tap = MetricsTap(outputs=[dash, PlainLines(plain, every_s=0)])
    tap.on_attach({"tap_id": "tap-1", "session_id": "s"})
    tap.on_snapshot(10, {"steps": 5})
    for row in ROWS:
        tap.on_row(row)
    tap.on_tick()
    tap.on_detach("detached")
    drawn = buf.getvalue()
    assert "latency (ms)" in drawn and "intent_ack" in drawn and "\x1b[" in drawn
    lines = plain.getvalue().splitlines()
    assert len(lines) == 2 and "\x1b" not in plain.getvalue()
    assert lines[-1].endswith("detached: detached")


def _recent(ms: float) -> str:
    import datetime as dt
    import time

    return dt.datetime.fromtimestamp(time.time() - 2 + ms / 1000, dt.UTC).isoformat().replace("+00:00", "Z")


def test_pipelined_steps_are_counted_as_decisions():
    """A pipelining policy makes many decisions per observation: steps and steps/s follow them."""
    m = Metrics(window_s=10)
    m.snapshot(3, {"session": "s", "steps": 2, "dispositions": {"execute": 40}})
    assert m.sample()["steps"] == 40
    rows = [{"sequence": 4, "event": "observation", "step": 3, "recorded_at": _recent(0)}]
    rows += [
        {"sequence": 5 + i, "event": "proposal", "proposal_id": f"p-3-{i}", "recorded_at": _recent(100 * i)}
        for i in range(8)
    ]
    for row in rows:
        m.row(row)
    s = m.sample()
    assert s["steps"] == 48
    plain = Metrics(window_s=10)  # one decision per observation: observations count
    for i in range(4):
        plain.row({"sequence": 2 * i + 1, "event": "observation", "step": i + 1, "recorded_at": _recent(100 * i)})
        plain.row({"sequence": 2 * i + 2, "event": "proposal", "proposal_id": f"p{i}", "recorded_at": _recent(100 * i)})
    assert plain.sample()["steps"] == 4
    assert s["steps_per_s"] > plain.sample()["steps_per_s"], "the rate follows the decisions"
