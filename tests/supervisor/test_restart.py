"""``supervisor.restart``: restart policy decisions (Erlang/OTP semantics), without processes."""

from __future__ import annotations

import pytest

from supervisor.restart import CAP_BACKOFF_S, RestartPolicy

ORDER = ["recorder", "game", "policy", "actuator", "observer"]


def make(strategy="one_for_one", **spec):
    base = {"restart": "permanent", "max_restarts": 3, "period_s": 10}
    base.update(spec)
    return RestartPolicy(ORDER, {n: dict(base) for n in ORDER}, strategy)


@pytest.mark.parametrize(
    "mode, code, action",
    [
        ("permanent", 0, "restart"),
        ("permanent", 1, "restart"),
        ("permanent", -9, "restart"),
        ("transient", 0, "leave"),
        ("transient", 3, "restart"),
        ("transient", -15, "restart"),
        ("temporary", 1, "leave"),
        ("temporary", -9, "leave"),
    ],
)
def test_restart_modes(mode, code, action):
    assert make(restart=mode).on_exit("policy", code, 0.0).action == action


def test_intensity_gives_up_after_max_restarts_within_the_period():
    p = make(max_restarts=2, period_s=10)
    assert p.on_exit("policy", 1, 0.0).action == "restart"
    assert p.on_exit("policy", 1, 1.0).action == "restart"
    d = p.on_exit("policy", 1, 2.0)
    assert d.action == "give_up" and "2 restarts within 10" in d.reason


def test_restarts_outside_the_period_do_not_count():
    p = make(max_restarts=1, period_s=5)
    assert p.on_exit("policy", 1, 0.0).action == "restart"
    assert p.on_exit("policy", 1, 6.0).action == "restart"
    assert p.on_exit("policy", 1, 7.0).action == "give_up"


def test_backoff_grows_exponentially_and_is_capped():
    p = make(max_restarts=100, period_s=1000)
    delays = [p.on_exit("policy", 1, float(i)).delay_s for i in range(10)]
    assert delays[:4] == [0.0, 0.1, 0.2, 0.4]  # the first restart within the period is immediate
    assert delays[-1] == CAP_BACKOFF_S and all(a <= b for a, b in zip(delays, delays[1:]))


@pytest.mark.parametrize(
    "strategy, restart, stop_first",
    [
        ("one_for_one", ("policy",), ()),
        ("rest_for_one", ("policy", "actuator", "observer"), ("observer", "actuator")),
        ("one_for_all", tuple(ORDER), ("observer", "actuator", "game", "recorder")),
    ],
)
def test_group_strategies(strategy, restart, stop_first):
    d = make(strategy).on_exit("policy", 1, 0.0)
    assert d.restart == restart and d.stop_first == stop_first
