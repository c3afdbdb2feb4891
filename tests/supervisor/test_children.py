"""``supervisor.children``: real child processes started, sampled, signalled and reaped."""

from __future__ import annotations

import signal
import time

import pytest

from supervisor.children import Child, describe_exit


def child(tmp_path, *args: str) -> Child:
    return Child(
        name="policy",
        module="tests.supervisor.idle",
        args=list(args),
        env={"GAMERIG_ACTOR": "policy"},
        log_path=str(tmp_path / "policy.log"),
    )


def wait_exit(c: Child, seconds: float = 10.0) -> int:
    deadline = time.monotonic() + seconds
    while (code := c.poll()) is None:
        assert time.monotonic() < deadline, "the child did not exit"
        time.sleep(0.02)
    return code


@pytest.mark.parametrize(
    "code, described",
    [
        (None, {"code": None, "signal": None}),
        (0, {"code": 0, "signal": None}),
        (3, {"code": 3, "signal": None}),
        (-9, {"code": None, "signal": "SIGKILL"}),
        (-15, {"code": None, "signal": "SIGTERM"}),
        (-200, {"code": None, "signal": "200"}),
    ],
)
def test_an_exit_is_described_by_its_code_or_its_signal(code, described):
    assert describe_exit(code) == described


def test_a_child_runs_with_its_environment_and_its_exit_code_is_reported(tmp_path):
    c = child(tmp_path, "3")
    assert c.pid is None and not c.alive() and c.poll() is None
    c.start()
    assert c.start_count == 1 and c.pid is not None and not c.welcomed
    assert wait_exit(c) == 3 and not c.alive()
    c.start()  # a restart counts on
    assert wait_exit(c) == 3
    assert (tmp_path / "policy.log").read_text().splitlines() == ["start 1 policy", "start 2 policy"]


def test_a_signalled_child_reports_the_negative_signal(tmp_path):
    c = child(tmp_path)
    c.start()
    assert c.alive() and c.wait(0.1) is None
    sample = c.take_sample()
    assert sample["rss_bytes"] > 0 and "cpu_percent" in sample
    c.signal(signal.SIGTERM)
    assert wait_exit(c) == -signal.SIGTERM
    assert c.take_sample() == {}  # nothing to sample once it is gone
    c.kill()  # a no-op on an exited child, never an error
    c.start()
    c.kill()
    assert c.wait(10) == -signal.SIGKILL and describe_exit(c.poll())["signal"] == "SIGKILL"
