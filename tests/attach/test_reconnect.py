"""No gap and no duplicate across reconnects: the recorder restarts under a tap, and a tap
that was stopped long enough to be declared lost attaches again and resumes its cursor."""

from __future__ import annotations

import signal

import pytest

from tests.attach.helpers import LONG, Attached
from tests.harness import kill, wait_for

pytestmark = pytest.mark.timeout(90)


def _lines(path) -> list[str]:
    try:
        return path.read_text().splitlines()
    except FileNotFoundError:
        return []


def _rows(path) -> list[int]:
    return [int(ln.split()[1]) for ln in _lines(path) if ln.startswith("row ")]


def test_a_tap_resumes_from_its_cursor_after_reconnects(session_factory, tmp_path):
    s = session_factory(*LONG)
    wait_for(lambda: len(s.events("action_result")) >= 3, 60, "the session to act")
    seq_file = tmp_path / "seqs.txt"
    tap = Attached(s, "--module", "tests.attach.seq_tap", env={"SEQ_TAP_FILE": str(seq_file)})
    wait_for(lambda: len(_rows(seq_file)) > 20, 30, "rows to the tap")
    kill(s.actor_pid("recorder"))  # the stream endpoint goes away and comes back
    resumed = wait_for(lambda: s.events("recorder_resumed"), 30, "the recorder to resume")[0]
    wait_for(lambda: max(_rows(seq_file)) > resumed["sequence"] + 20, 30, "rows after the restart")
    tap.proc.send_signal(signal.SIGSTOP)  # silent: the supervisor declares it lost
    wait_for(lambda: [r for r in s.events("tap_detached") if r["reason"] == "lost"], 20, "tap lost")
    seen = max(_rows(seq_file))
    tap.proc.send_signal(signal.SIGCONT)
    wait_for(
        lambda: len([ln for ln in _lines(seq_file) if ln.startswith("attach ")]) == 2, 20, "the tap to attach again"
    )
    wait_for(lambda: max(_rows(seq_file)) > seen + 20, 30, "rows after attaching again")
    s.signal(signal.SIGTERM)
    assert s.wait() == 143, s.stderr
    assert tap.wait() == 0, tap.err
    lines = _lines(seq_file)
    assert lines[-1] == "detach session_ended"
    (snap,) = [int(ln.split()[1]) for ln in lines if ln.startswith("snapshot ")]
    rows = _rows(seq_file)
    journal = [r["sequence"] for r in s.rows()]
    assert rows == journal[snap:], "the tap saw exactly the rows after its snapshot, in order"
    attached = [r["tap_id"] for r in s.events("tap_attached") if r["name"] == "seq-tap"]
    assert len(attached) == 2 and attached[0] != attached[1]
