"""``PolicyContext``: the session's policy memory for STS2MCP screens (seed: session-owned
policy state).

Lifecycle, driven by the policy actor in journal order:

1. ``reconcile(obs)`` — fresh evidence: screen-flow changes, release of pending actions;
2. ``blocking(obs)`` — a wait proposal while an accepted action still awaits its evidence;
3. the policy decides (a proposal only); the pipeline executes it unless dry-run/suppressed;
4. ``record_result(proposal, result)`` with the real result.

An accepted response does not prove completion: a ``Pending`` is an accepted request awaiting
reconciliation, not a successful effect. An ``unknown`` result is treated like an accepted one
(it may have happened), so a guarded action is never repeated on a guess. A rejected request
reserves nothing. Release rules per action kind (what each guard waits for):

=================  ===========================================================================
kind               released by
=================  ===========================================================================
grid_toggle        a fresh read of the same grid (the index stays reserved in ``toggles``)
choose_card        a screen-flow transition
hand_select        the selected-card count increases, or a transition
confirm            a transition (grid, hand or bundle confirm/cancel; never re-sent)
bundle_select      a preview with confirmation enabled, or a transition
purchase           the targeted item changes or disappears, or a transition (price and
                   affordability alone do not release it)
crystal_click      the cell is revealed (no longer clickable), or a transition
character          any fresh read (the API does not show the pick)
embark             a transition; a rejection instead allows picking again
reward_skip        the rewards list reappearing (the reward is then marked skipped)
effect             any read that differs from the one acted on ("ok means queued")
=================  ===========================================================================

Screen boundaries: ``rewards`` and ``card_reward`` are one flow; ``unknown`` and ``overlay``
neither reset memory nor prove completion; any other flow change clears screen memory and
releases pending actions. A pending action older than ``stuck_seconds`` makes the policy stop
the session (``pending_action_timeout``) rather than risk a repeat.
"""
from __future__ import annotations

import dataclasses
import hashlib
import json
import time
from typing import Any

NEUTRAL = {"unknown", "overlay"}
MAX_REJECTIONS = 3
GUARDED = {  # action -> pending kind (anything else: "effect")
    "select_card": "grid_toggle", "combat_select_card": "hand_select",
    "confirm_selection": "confirm", "cancel_selection": "confirm",
    "combat_confirm_selection": "confirm", "confirm_bundle_selection": "confirm",
    "cancel_bundle_selection": "confirm", "select_bundle": "bundle_select",
    "shop_purchase": "purchase", "crystal_sphere_click_cell": "crystal_click",
    "skip_card_reward": "reward_skip",
}


def digest(state: dict) -> str:
    return hashlib.sha256(json.dumps(state, sort_keys=True).encode()).hexdigest()


def flow_of(state: dict) -> str:
    kind = state.get("state_type") or "?"
    if kind == "card_reward":
        return "rewards"
    if kind == "menu":
        return "menu:" + str((state.get("menu") or {}).get("menu_screen") or state.get("menu_screen"))
    if kind == "card_select":
        return "card_select:" + str((state.get("card_select") or {}).get("screen_type"))
    if kind in ("monster", "elite", "boss"):
        return "combat"
    return kind


def room_of(state: dict) -> tuple | None:
    run = state.get("run")
    if not isinstance(run, dict) or run.get("act") is None or run.get("floor") is None:
        return None
    return (run["act"], run["floor"])


@dataclasses.dataclass
class Pending:
    kind: str
    action: str
    parameters: dict
    flow: str
    acted_digest: str | None
    since: float
    snapshot: dict


class PolicyContext:
    def __init__(self, stuck_seconds: float = 60.0):
        self.stuck_seconds = stuck_seconds
        self.reset()

    def reset(self) -> None:
        """Forget everything about the active run (a new run id, or a run exit)."""
        self.flow: str | None = None
        self.pending: Pending | None = None
        self.toggles: set[int] = set()
        self.grid: tuple | None = None
        self.grid_changed = False
        self.skipped_reward = False
        self.character_picked = False
        self.rejections: dict[str, int] = {}
        self.rejected_here: dict[tuple[str, str], int] = {}  # (state digest, action key) -> n

    # -- 1. reconcile ------------------------------------------------------------------
    def reconcile(self, state: dict) -> None:
        new_flow = flow_of(state)
        kind = state.get("state_type")
        if kind in NEUTRAL:  # neither a reset nor proof of completion...
            if self.pending is not None and self.pending.kind == "effect" and \
                    digest(state) != self.pending.acted_digest:
                self.pending = None  # ...but a changed read is the evidence an effect needs
            return
        if self.flow is not None and new_flow != self.flow:
            self._transition(new_flow)
        self.flow = new_flow
        if self.pending is not None and self._released(self.pending, state):
            if self.pending.kind == "reward_skip":
                self.skipped_reward = True  # the rewards list is back: now it is skipped
            self.pending = None
        if kind == "card_select":
            cards = (state.get("card_select") or {}).get("cards") or []
            grid = tuple(c.get("id") or c.get("name") for c in cards)
            if self.grid is None or not self.toggles:
                self.grid = grid
            elif grid != self.grid:
                self.grid_changed = True

    def _transition(self, new_flow: str) -> None:
        self.pending = None
        self.toggles.clear()
        self.grid = None
        self.grid_changed = False
        if new_flow != "rewards":
            self.skipped_reward = False
        if not new_flow.startswith("menu:character_select"):
            self.character_picked = False

    def _released(self, p: Pending, state: dict) -> bool:
        kind = p.kind
        if kind in ("grid_toggle", "character"):
            return True  # any fresh read of the same screen
        if kind in ("choose_card", "confirm", "embark"):
            return False  # only a transition (handled in _transition)
        if kind == "reward_skip":
            return state.get("state_type") == "rewards"
        if kind == "hand_select":
            return len((state.get("hand_select") or {}).get("selected_cards") or []) > p.snapshot.get("selected", 0)
        if kind == "bundle_select":
            bs = state.get("bundle_select") or {}
            return bool(bs.get("preview_showing") and bs.get("can_confirm"))
        if kind == "purchase":
            items = {i.get("index"): i for i in (state.get("shop") or {}).get("items") or []}
            now = items.get(p.parameters.get("index"))
            before = p.snapshot.get("item") or {}
            return now is None or now.get("id") != before.get("id") or \
                now.get("is_stocked") != before.get("is_stocked")
        if kind == "crystal_click":
            cells = (state.get("crystal_sphere") or {}).get("cells") or []
            x, y = p.parameters.get("x"), p.parameters.get("y")
            return any(c.get("x") == x and c.get("y") == y and c.get("revealed") for c in cells)
        return digest(state) != p.acted_digest  # "effect": any changed read

    # -- 2. blocking --------------------------------------------------------------------
    def blocking(self) -> tuple[str, str] | None:
        """(wish, reason) while a pending action blocks further guarded actions."""
        p = self.pending
        if p is None:
            return None
        if time.monotonic() - p.since > self.stuck_seconds:
            return ("stop", "pending_action_timeout")
        return ("wait", f"awaiting evidence for the accepted {p.action} ({p.kind})")

    def grid_is_stale(self) -> bool:
        """Accepted toggles exist but the grid changed: wait, never map old indices."""
        return bool(self.toggles) and self.grid_changed

    # -- 4. results ---------------------------------------------------------------------
    def record_result(self, proposal: dict, result: dict) -> None:
        action = proposal.get("action") or ""
        params = proposal.get("parameters") or {}
        outcome = result.get("outcome")
        if outcome == "rejected":
            key = json.dumps([action, params], sort_keys=True)
            self.rejections[key] = self.rejections.get(key, 0) + 1
            here = (proposal.get("state_digest"), key)
            self.rejected_here[here] = self.rejected_here.get(here, 0) + 1
            if len(self.rejected_here) > 2000:
                self.rejected_here.clear()
            if proposal.get("character_pick") or (action == "menu_select" and params.get("option") == "embark"):
                self.character_picked = False  # a rejected embark allows picking again
            return
        # accepted, or unknown (it may have happened): never repeat on a guess
        kind = GUARDED.get(action, "effect")
        if proposal.get("character_pick"):
            kind = "character"
            self.character_picked = True
        elif action == "menu_select" and params.get("option") == "embark":
            kind = "embark"
        elif action == "select_card" and proposal.get("screen_type") == "choose":
            kind = "choose_card"
        if kind == "grid_toggle":
            self.toggles.add(params.get("index"))
        self.pending = Pending(kind, action, dict(params), self.flow or "", proposal.get("state_digest"),
                               time.monotonic(), dict(proposal.get("guard_snapshot") or {}))

    def was_rejected_here(self, state_digest: str, action: str, params: dict) -> bool:
        """True once the same action was rejected ``MAX_REJECTIONS`` times on this very state
        (a refusal can be transient, e.g. "busy"; repeating it forever is not)."""
        key = (state_digest, json.dumps([action, params], sort_keys=True))
        return self.rejected_here.get(key, 0) >= MAX_REJECTIONS


__all__ = ["PolicyContext", "Pending", "flow_of", "room_of", "digest", "NEUTRAL"]


def snapshot_for(action: str, params: dict, state: dict) -> dict[str, Any]:
    """What a guard needs to remember about the state it acted on."""
    if action == "combat_select_card":
        return {"selected": len((state.get("hand_select") or {}).get("selected_cards") or [])}
    if action == "shop_purchase":
        items = {i.get("index"): i for i in (state.get("shop") or {}).get("items") or []}
        item = items.get(params.get("index")) or {}
        return {"item": {"id": item.get("id"), "is_stocked": item.get("is_stocked")}}
    return {}
