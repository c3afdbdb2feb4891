"""The journal writer's row times (``actors.recorder.writer.Stamps``): ``recorded_at`` is the
UTC instant as ``datetime`` writes it (``...T12:34:56.123456Z``, microseconds floored) and
``ts`` the same instant's local time to the second, across second boundaries too."""

from __future__ import annotations

import datetime as dt
import re
import time

from actors.recorder.writer import Stamps, utc_now

UTC_TEXT = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z")


def parsed(recorded_at: str) -> dt.datetime:
    return dt.datetime.fromisoformat(recorded_at.replace("Z", "+00:00"))


def test_recorded_at_is_the_instant_as_utc_now_writes_it_and_ts_its_local_time():
    stamps = Stamps()
    seconds = set()
    deadline = time.monotonic() + 5
    while len(seconds) < 3 and time.monotonic() < deadline:  # at least two second boundaries
        before = parsed(utc_now())
        recorded_at, ts = stamps.now()
        after = parsed(utc_now())
        assert UTC_TEXT.fullmatch(recorded_at), recorded_at
        assert before <= parsed(recorded_at) <= after
        assert ts == parsed(recorded_at).astimezone().strftime("%Y-%m-%d %H:%M:%S")
        seconds.add(recorded_at[:19])
        time.sleep(0.01)
    assert len(seconds) == 3, "the clock did not pass two second boundaries in 5 s"
