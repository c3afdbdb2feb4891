"""Restart policy, apart from process management: the supervisor reports exits, this
module decides (Erlang/OTP semantics).

* ``permanent`` — always restarted; ``transient`` — restarted only after an abnormal exit
  (a non-zero code or a signal); ``temporary`` — never restarted.
* Intensity: more than ``max_restarts`` restarts of one actor within ``period_s`` seconds
  makes the supervisor give up and stop the session with a recorded reason.
* Backoff: the first restart within the period is immediate (recovery from one crash is the
  step's latency); the n-th (n >= 2) waits ``min(BASE * 2**(n-2), CAP)`` seconds.
* Group strategy: ``one_for_one`` restarts the failed actor; ``rest_for_one`` also stops and
  restarts every actor started after it; ``one_for_all`` stops and restarts all of them.
"""

from __future__ import annotations

import collections
import dataclasses

BASE_BACKOFF_S = 0.1
CAP_BACKOFF_S = 5.0


@dataclasses.dataclass(frozen=True)
class Decision:
    action: str  # "restart" | "leave" | "give_up"
    restart: tuple[str, ...] = ()  # actors to (re)start, in start order
    stop_first: tuple[str, ...] = ()  # running actors to stop first, in stop (reverse) order
    delay_s: float = 0.0
    reason: str = ""


def abnormal(code: int | None) -> bool:
    return code != 0


class RestartPolicy:
    def __init__(self, order: list[str], specs: dict[str, dict], strategy: str):
        self.order = list(order)
        self.specs = specs
        self.strategy = strategy
        self.history: dict[str, collections.deque[float]] = {n: collections.deque() for n in order}

    def on_exit(self, name: str, code: int | None, now: float) -> Decision:
        spec = self.specs[name]
        mode = spec["restart"]
        if mode == "temporary" or (mode == "transient" and not abnormal(code)):
            return Decision("leave", reason=f"{name} is {mode}; exit {code} is not restarted")
        hist = self.history[name]
        while hist and now - hist[0] > spec["period_s"]:
            hist.popleft()
        if len(hist) >= spec["max_restarts"]:
            return Decision(
                "give_up",
                reason=(
                    f"{name} exceeded its restart intensity ({spec['max_restarts']} restarts "
                    f"within {spec['period_s']}s)"
                ),
            )
        hist.append(now)
        delay = 0.0 if len(hist) == 1 else min(BASE_BACKOFF_S * 2 ** (len(hist) - 2), CAP_BACKOFF_S)
        i = self.order.index(name)
        if self.strategy == "one_for_all":
            group = self.order
        elif self.strategy == "rest_for_one":
            group = self.order[i:]
        else:
            group = [name]
        others = tuple(reversed([n for n in group if n != name]))
        return Decision(
            "restart",
            restart=tuple(group),
            stop_first=others,
            delay_s=delay,
            reason=f"{name} exited with {code}; {self.strategy}",
        )
