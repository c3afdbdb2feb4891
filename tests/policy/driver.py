"""Feeding the built-in STS2MCP policy the mod's exact shapes, without processes.

``sample(name, **edits)`` loads ``vendor/sts2mcp/<name>.json`` (the contract samples, written
from the mod's source; each names its source function in vendor/sts2mcp/README.md) and applies
edits given as dotted paths (``sample("rest_site", **{"rest_site.can_proceed": True})``).

``Driver`` plays the policy actor's part: ``see(state)`` is one observation (``observe`` then
``decide``, as the actor calls them), ``answer(outcome, error=None)`` records the result of the
last executable proposal exactly as the journal rows carry it (the proposal row has the
proposal's extras at its top level). ``Clock`` stands in for ``time.monotonic`` so time-bound
rules are tested without sleeping.
"""

from __future__ import annotations

import copy
import json
import os
import time

from actors.policy.base import PolicyObservation, Proposal
from actors.policy.sts2 import Sts2Heuristic

VENDOR = os.path.join(os.path.dirname(__file__), "..", "..", "vendor", "sts2mcp")


def sample(name: str, **edits) -> dict:
    with open(os.path.join(VENDOR, name + ".json"), encoding="utf-8") as fh:
        state = json.load(fh)
    for path, value in edits.items():
        *parents, leaf = path.split(".")
        node = state
        for key in parents:
            node = node[int(key)] if isinstance(node, list) else node[key]
        if isinstance(node, list):
            node[int(leaf)] = value
        else:
            node[leaf] = value
    return state


class Clock:
    def __init__(self, monkeypatch, start: float = 1000.0):
        self.now = start
        monkeypatch.setattr(time, "monotonic", lambda: self.now)

    def advance(self, seconds: float) -> None:
        self.now += seconds


class Driver:
    def __init__(self, settings: dict | None = None, **session):
        session.setdefault("stuck_seconds", 20)
        session.setdefault("stop_on_run_end", False)
        self.policy = Sts2Heuristic(dict(settings or {}), session)
        self.step = 0
        self.last: Proposal | None = None
        self.rows: list[dict] = []  # the proposal rows, as the journal would hold them

    def see(self, state: dict, **row) -> Proposal:
        self.step += 1
        obs = PolicyObservation(
            f"o-{self.step:06d}", self.step, "preflight" if self.step == 1 else "run", copy.deepcopy(state), row
        )
        self.policy.observe(obs)
        p = self.policy.decide(obs)
        record = {
            "proposal_id": f"p-{self.step:06d}",
            "action": p.action,
            "parameters": p.parameters,
            "reason": p.reason,
            "source": p.source,
            "wish": p.wish,
            **p.extra,
        }
        self.rows.append(record)
        self.policy.record_proposal(record)
        self.last = p
        return p

    def answer(self, outcome: str = "accepted", error: str | None = None) -> None:
        row = self.rows[-1]
        assert row["wish"] == "execute", f"no executable proposal to answer: {row}"
        response = (
            {"status": "ok", "message": "done"}
            if outcome == "accepted"
            else {"status": "error", "error": error or "refused"}
        )
        self.policy.record_result(row, {"outcome": outcome, "http_status": 200, "response": response})

    def play(self, state: dict, outcome: str = "accepted", error: str | None = None) -> Proposal:
        """See ``state`` and answer its proposal, if executable."""
        p = self.see(state)
        if p.wish == "execute":
            self.answer(outcome, error)
        return p
