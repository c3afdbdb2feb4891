"""``supervisor.taps``: the book of attached taps, without sockets (the control endpoint's
dispatch to it is tested in test_control.py)."""

from __future__ import annotations

import time

from protocol.cli_to_supervisor import AttachRequest, DetachRequest, StatusRequest
from protocol.events import TapDetached
from protocol.supervisor_to_cli import AttachReply, ControlError
from supervisor.taps import LOST_AFTER, TapRegistry


def registry(rows: list) -> TapRegistry:
    return TapRegistry(
        session_token="tok",
        streams={"ipc": "ipc:///s"},
        keepalive_s=1.0,
        record=rows.append,
        status=lambda: {"steps": 1},
    )


def test_a_tap_not_heard_for_its_keepalives_is_dropped_as_lost_and_its_token_refused():
    rows: list = []
    taps = registry(rows)
    reply = taps.handle("m1", AttachRequest(token="tok", name="metrics", pid=7))
    assert isinstance(reply, AttachReply) and reply.tap_id == "tap-1" and reply.keepalive_s == 1.0
    assert taps.listing() == [{"tap_id": "tap-1", "name": "metrics", "pid": 7, "transport": "ipc"}]
    now = time.monotonic()
    taps.sweep(now + LOST_AFTER * 1.0 - 0.5)
    assert taps.listing() and len(rows) == 1  # still within its keep-alives
    taps.sweep(now + LOST_AFTER * 1.0 + 1)
    assert taps.listing() == []
    lost = rows[-1]
    assert isinstance(lost, TapDetached) and lost.reason == "lost" and lost.silent_s >= LOST_AFTER
    assert lost.to_row() == {
        "event": "tap_detached",
        "tap_id": "tap-1",
        "name": "metrics",
        "reason": "lost",
        "silent_s": lost.silent_s,
    }
    assert taps.wants(StatusRequest(token=reply.tap_token)) is False  # now the session's token check refuses it
    gone = taps.handle("m2", DetachRequest(token=reply.tap_token))
    assert isinstance(gone, ControlError) and gone.code == "unknown_tap"


def test_an_attach_over_a_transport_the_session_lacks_is_refused_by_name():
    rows: list = []
    reply = registry(rows).handle("m1", AttachRequest(token="tok", name="t", transport="tcp"))
    assert isinstance(reply, ControlError) and reply.code == "no_transport" and "'tcp'" in reply.message
    assert "ipc" in reply.message and rows == []
