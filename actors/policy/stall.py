"""``StallWatch``: no silent stall (docs/policy.md, "No silent stall").

Progress is a read that differs from the one before it (tutorials and popups over a screen
neither make nor break progress: the screen under them must change). A *stall* is ``stall_reads``
observations in a row without progress and without an accepted action, lasting at least
``stall_after_s``. Then, in this order:

1. the proposal on that observation (a wait) carries ``stall`` — the screen, how long and how
   many reads, the last attempts and the game's last refusals — so the journal says what the
   policy was doing;
2. each of the screen's documented ways out (``escapes`` from the screen rules, taken from the
   mod's actions for that screen) is proposed once per round, marked ``escape: true``,
   skipping any the policy memory refuses (rejected too often, or accepted without effect);
   once a round is spent, a new one begins ``stall_after_s`` after the last began (a way out
   refused for a passing reason — "the game is busy" — gets another chance; the policy
   memory's limit on identical refusals ends the retries of one the game keeps refusing);
3. once none is left and ``stuck_seconds`` passed since the last progress, the policy stops the
   session with reason ``stuck`` and the same ``stall`` record.

A state that keeps changing while nothing is accepted (a field that moves on every read, a
screen that never settles) is no progress either: once ``2 × stuck_seconds`` passed since the
last accepted action (ways out aside), the stall is counted from that action instead.

Dry runs execute nothing, so a static state is expected there: the watch is off.
"""

from __future__ import annotations

import collections
import time
from collections.abc import Callable

from .base import Proposal
from .context import action_key, refusal_text


class StallWatch:
    def __init__(self, stuck_s: float, stall_reads: int = 10, stall_after_s: float | None = None, enabled: bool = True):
        self.stuck_s = stuck_s
        self.stall_reads = stall_reads
        self.stall_after_s = min(5.0, stuck_s / 4) if stall_after_s is None else stall_after_s
        self.enabled = enabled
        self.last_digest: str | None = None
        self.last_change = self.last_accept = time.monotonic()
        self.since = self.last_change  # when the current stall (if any) began
        self.reads = 0
        self.reported = False
        self.tried: set[str] = set()
        self.round_began = self.since  # when this round of ways out began
        self.history: collections.deque = collections.deque(maxlen=8)

    def observe(self, state_digest: str, popup: bool = False) -> None:
        """One read. A tutorial or popup over the screen is no progress in either direction:
        its reads count, but the screen under it is what must change (popups that come and go
        every few seconds would otherwise hide a screen that never moves)."""
        if popup:
            self.reads += 1
        elif state_digest != self.last_digest:
            self.last_digest = state_digest
            self.last_change = time.monotonic()
            self.reads = 0
        else:
            self.reads += 1

    def record_result(self, proposal: dict, result: dict) -> None:
        entry = {
            "action": proposal.get("action"),
            "parameters": proposal.get("parameters") or {},
            "outcome": result.get("outcome"),
        }
        if result.get("outcome") == "rejected":
            entry["error"] = refusal_text(result)[:200]
        elif not proposal.get("escape") and not proposal.get("popup_screen"):
            self.reads = 0  # an accepted action is activity (its effect may still come);
            self.last_accept = time.monotonic()  # dismissing a popup is not, nor a way out
        self.history.append(entry)

    def _episode(self, now: float) -> None:
        """Where the current stall starts: the last change, or for a state that keeps
        changing with nothing accepted, the last accepted action. A new start is a new stall."""
        churning = now - self.last_accept >= 2 * self.stuck_s and self.last_change > self.last_accept
        start = self.last_accept if churning else self.last_change
        if start != self.since:
            self.since = start
            self.reported = False
            self.tried = set()

    def record(self, screen: str) -> dict:
        """What the journal says about a stall on ``screen``."""
        return {
            "screen": screen,
            "reads": self.reads,
            "seconds": round(time.monotonic() - self.since, 3),
            "tried": list(self.history)[-5:],
            "refusals": [h for h in self.history if h["outcome"] == "rejected"][-3:],
            "escapes_tried": sorted(self.tried),
        }

    def check(
        self, p: Proposal, screen: str, escapes: Callable[[], list[Proposal]], allowed: Callable[[Proposal], bool]
    ) -> Proposal:
        """``p`` itself, or a way out, or the stop (see the module docstring). ``escapes``
        gives the screen's ways out; it is called only once they are due (seldom)."""
        if not self.enabled or p.wish not in ("wait", "suppressed"):
            return p
        now = time.monotonic()
        self._episode(now)
        idle = now - self.since
        stalled = (self.reads >= self.stall_reads and idle >= self.stall_after_s) or idle >= self.stuck_s
        if not stalled:
            return p
        if not self.reported:
            self.reported = True
            p.extra["stall"] = self.record(screen)
            p.reason = f"stalled on {screen}: {p.reason}; trying the screen's ways out next"
            return p
        ways = escapes()
        e = self._way_out(ways, allowed)
        if e is None and self.tried and now - self.round_began >= self.stall_after_s:
            self.tried = set()  # a new round
            e = self._way_out(ways, allowed)
        if e is not None:
            if not self.tried:
                self.round_began = now
            self.tried.add(action_key(e.action, e.parameters))
            e.extra.update(escape=True, stall=self.record(screen))
            e.reason = f"stalled on {screen}: way out: {e.reason}"
            return e
        if idle < self.stuck_s:
            return p
        info = self.record(screen)
        return Proposal.stop(
            "stuck", extra={"stall": info, "stuck_on": f"{screen} for {info['seconds']:.0f}s: {describe(info)}"}
        )

    def _way_out(self, escapes: list[Proposal], allowed: Callable[[Proposal], bool]) -> Proposal | None:
        """The first way out not yet tried in this round that the policy memory allows."""
        for e in escapes:
            if e.wish == "execute" and action_key(e.action, e.parameters) not in self.tried and allowed(e):
                return e
        return None


def describe(info: dict) -> str:
    """One line for people: the screen's last refusals, or what was last tried."""
    refusals = info.get("refusals") or []
    if refusals:
        return "last refusals: " + "; ".join(f"{r['action']} -> {r.get('error') or 'rejected'}" for r in refusals)
    tried = info.get("tried") or []
    if tried:
        return "last tried: " + "; ".join(f"{t['action']} ({t['outcome']})" for t in tried[-3:])
    return "nothing accepted, nothing refused"


__all__ = ["StallWatch", "describe"]
