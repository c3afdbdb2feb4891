"""``PolicyContext``: the session's policy memory for STS2MCP screens (state the session owns,
not the game).

Lifecycle, driven by the policy actor in journal order:

1. ``reconcile(state)`` — fresh evidence: screen-flow changes, release of pending actions;
2. ``blocking()`` — a wait proposal while an accepted action still awaits its evidence;
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
crystal_click      the cell is no longer hidden, or a transition
character          any fresh read (the API does not show the pick)
embark             a transition; a rejection instead allows picking again
reward_skip        the rewards list reappearing (the reward is then marked skipped)
effect             any read that differs from the one acted on ("ok means queued")
(none)             ``advance_dialogue``: nothing is awaited (an ancient's dialogue lines are
                   not in the state, so each read may advance it again)
=================  ===========================================================================

**Attempt, then react.** A pending action whose evidence never comes (the mod answers ``ok``
to a potion reward with a full belt, and nothing changes) is *overdue* once it has waited
``no_effect_reads`` reads and ``no_effect_seconds``; ``release_no_effect`` then drops it and
marks its *situation* (screen flow, action and the targeted thing, see ``situation_of``)
futile: that action is not proposed again in that situation until the screen flow changes.
An interruption in between (a popup, tutorial, overlay or transition read while it was
pending, which may have swallowed it) makes it a different situation: the release then marks
nothing futile (``futile: false``) and the action may be proposed again — once: a second
release in the same situation is futile whatever interrupted it (popups that come every few
seconds would otherwise excuse a claim with a full belt for ever).

**Refusals.** An identical action (action and parameters) is not proposed again once it was
rejected ``MAX_REJECTIONS`` times in a row (an accepted action or a flow change ends the run of
refusals), nor after ``MAX_REJECTIONS`` refusals on the very same state.

Screen boundaries: ``rewards`` and ``card_reward`` are one flow; ``unknown``, ``overlay`` and
the blocking tutorial/popup menus (``tutorial_prompt``, ``tutorial``, ``popup``) neither reset
memory nor prove completion (a tutorial or popup mid-run is dismissed while the run's pending
action and guards wait for it: its own dismissal is tracked in ``popup_pending``); any other
flow change clears screen memory and releases pending actions.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import time
from typing import Any

NEUTRAL = {"unknown", "overlay"}
BLOCKING_MENUS = {"tutorial_prompt", "tutorial", "popup"}
MAX_REJECTIONS = 3
UNGUARDED = {"advance_dialogue"}  # no evidence to wait for: the dialogue's lines are not in the state
GUARDED = {  # action -> pending kind (anything else: "effect")
    "select_card": "grid_toggle",
    "combat_select_card": "hand_select",
    "confirm_selection": "confirm",
    "cancel_selection": "confirm",
    "combat_confirm_selection": "confirm",
    "confirm_bundle_selection": "confirm",
    "cancel_bundle_selection": "confirm",
    "select_bundle": "bundle_select",
    "shop_purchase": "purchase",
    "crystal_sphere_click_cell": "crystal_click",
    "skip_card_reward": "reward_skip",
}


_LAST_DIGEST: list = [None, ""]  # the last state digested (by identity) and its digest
# The encoders ``json.dumps(x, sort_keys=True)`` (``default=str`` for situations) builds anew on
# every call, built once. A state came off the wire (msgpack or JSON): it cannot hold itself,
# so its encoder skips the cycle check, which costs a sixth of the state's digest. The bytes
# are ``json.dumps``'s exactly: journaled digests and situations do not change.
_STATE_JSON = json.JSONEncoder(sort_keys=True, check_circular=False)
_SORTED_JSON = json.JSONEncoder(sort_keys=True)
_SITUATION_JSON = json.JSONEncoder(sort_keys=True, default=str)


def digest(state: dict) -> str:
    """The SHA-256 of the state's canonical JSON (``json.dumps(state, sort_keys=True)``). A step
    digests the same state object several times (reconcile, decide, effect checks): the last
    one's digest is kept."""
    if _LAST_DIGEST[0] is not state:
        _LAST_DIGEST[:] = [state, hashlib.sha256(_STATE_JSON.encode(state).encode()).hexdigest()]
    return _LAST_DIGEST[1]


def action_key(action: str | None, params: dict | None) -> str:
    return _SORTED_JSON.encode([action, params or {}])


def is_blocking_popup(state: dict) -> bool:
    """A tutorial or popup state (Helpers.cs BuildVisibleFtueState): it replaces the whole
    state, mid-run too, and blocks every other action until dismissed."""
    return state.get("state_type") == "menu" and state.get("menu_screen") in BLOCKING_MENUS


def is_neutral(state: dict) -> bool:
    return state.get("state_type") in NEUTRAL or is_blocking_popup(state)


def flow_of(state: dict) -> str:
    kind = state.get("state_type") or "?"
    if kind == "card_reward":
        return "rewards"
    if kind == "menu":
        return "menu:" + str(state.get("menu_screen"))
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
    situation: str | None = None
    reads: int = 0  # reads of a non-neutral screen since the result
    interrupted: bool = False  # a popup, tutorial, overlay or transition showed meanwhile


class PolicyContext:
    def __init__(self, no_effect_reads: int = 4, no_effect_seconds: float = 5.0):
        self.no_effect_reads = no_effect_reads
        self.no_effect_seconds = no_effect_seconds
        self.reset()

    def reset(self) -> None:
        """Forget everything about the active run (a new run id, or a run exit)."""
        self.flow: str | None = None
        self.pending: Pending | None = None
        self.popup_pending: Pending | None = None
        self.toggles: set[int] = set()
        self.grid: tuple | None = None
        self.grid_changed = False
        self.skipped_reward = False
        self.character_picked = False
        self.rejections: dict[str, int] = {}
        self.rejected_here: dict[tuple[str, str], int] = {}  # (state digest, action key) -> n
        self.here: str | None = None  # the digest of the state being read now
        self.streak: dict[str, int] = {}  # action key -> rejections in a row
        self.futile: set[str] = set()  # situations whose accepted action showed no effect
        self.excused: set[str] = set()  # situations already released once as interrupted
        self.combat_only_potions: set[str] = set()  # potion ids refused out of combat
        self.automatic_potions: set[str] = set()  # potion ids refused anywhere (PotionUsage.Automatic)
        self.abandon_requested = False  # the next popup confirms abandoning the saved run

    # -- 1. reconcile ------------------------------------------------------------------
    def reconcile(self, state: dict) -> None:
        d = digest(state)
        if d != self.here:  # refusals "on this very state" count while it lasts, not when it recurs
            self.here = d
            self.rejected_here.clear()
        if is_neutral(state):  # neither a reset nor proof of completion...
            if self.pending is not None:
                self.pending.interrupted = True
            if self.popup_pending is not None:
                if d != self.popup_pending.acted_digest:
                    self.popup_pending = None
                else:
                    self.popup_pending.reads += 1
            if (
                state.get("state_type") in NEUTRAL
                and self.pending is not None
                and self.pending.kind == "effect"
                and d != self.pending.acted_digest
            ):
                self.pending = None  # ...but a changed read is the evidence an effect needs
            return
        self.popup_pending = None
        new_flow = flow_of(state)
        if self.flow is not None and new_flow != self.flow:
            self._transition(new_flow)
        self.flow = new_flow
        if self.pending is not None:
            if self._released(self.pending, state):
                if self.pending.kind == "reward_skip":
                    self.skipped_reward = True  # the rewards list is back: now it is skipped
                self.pending = None
            else:
                self.pending.reads += 1
        if state.get("state_type") == "card_select":
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
        self.streak.clear()
        self.futile.clear()
        self.excused.clear()
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
            items = {i.get("index"): i for i in shop_items(state)}
            now = items.get(p.parameters.get("index"))
            return now is None or item_identity(now) != p.snapshot.get("item")
        if kind == "crystal_click":
            cells = (state.get("crystal_sphere") or {}).get("cells") or []
            x, y = p.parameters.get("x"), p.parameters.get("y")
            return any(c.get("x") == x and c.get("y") == y and not c.get("is_hidden", True) for c in cells)
        return digest(state) != p.acted_digest  # "effect": any changed read

    # -- 2. blocking --------------------------------------------------------------------
    def blocking(self) -> tuple[str, str] | None:
        """(wish, reason) while a pending action blocks further guarded actions."""
        p = self.pending
        if p is None:
            return None
        return ("wait", f"awaiting evidence for the accepted {p.action} ({p.kind})")

    def overdue(self, popup: bool = False, now: float | None = None) -> bool:
        """The pending action (or, on a tutorial/popup, its dismissal) waited long enough —
        reads and time — for an effect that never came."""
        p = self.popup_pending if popup else self.pending
        if p is None:
            return False
        now = time.monotonic() if now is None else now
        return p.reads >= self.no_effect_reads and now - p.since >= self.no_effect_seconds

    def release_no_effect(self, popup: bool = False, now: float | None = None) -> dict:
        """Drop the overdue pending action; its situation becomes futile. The returned record
        goes on the next proposal row (``released_no_effect``) and is replayed through
        ``apply_release``."""
        p = self.popup_pending if popup else self.pending
        now = time.monotonic() if now is None else now
        info = {
            "action": p.action,
            "parameters": p.parameters,
            "kind": p.kind,
            "reads": p.reads,
            "seconds": round(now - p.since, 3),
            "situation": p.situation,
            "flow": p.flow,
            "futile": not p.interrupted or p.situation in self.excused,
        }
        if popup:
            info["popup"] = True
        self.apply_release(info)
        return info

    def apply_release(self, info: dict) -> None:
        slot = "popup_pending" if info.get("popup") else "pending"
        p = getattr(self, slot)
        if p is not None and p.action == info.get("action") and p.parameters == info.get("parameters"):
            setattr(self, slot, None)
        if info.get("situation") and info.get("futile", True):
            self.futile.add(info["situation"])
        elif info.get("situation"):
            self.excused.add(info["situation"])

    def grid_is_stale(self) -> bool:
        """Accepted toggles exist but the grid changed: wait, never map old indices."""
        return bool(self.toggles) and self.grid_changed

    # -- 3. what may be proposed ----------------------------------------------------------
    def refusal(
        self, state_digest: str, action: str | None, params: dict, situation: str | None, escape: bool = False
    ) -> str | None:
        """Why this action must not be proposed now, or None. A way out of a stall (``escape``)
        may retry a futile action once; refusals still count."""
        key = action_key(action, params)
        if self.rejected_here.get((state_digest, key), 0) >= MAX_REJECTIONS:
            return f"rejected {MAX_REJECTIONS} times on this very state"
        if self.streak.get(key, 0) >= MAX_REJECTIONS:
            return f"rejected {self.streak[key]} times in a row"
        if not escape and situation is not None and situation in self.futile:
            return "accepted here before without any effect"
        return None

    def was_rejected_here(self, state_digest: str, action: str, params: dict) -> bool:
        key = (state_digest, action_key(action, params))
        return self.rejected_here.get(key, 0) >= MAX_REJECTIONS

    # -- 4. results ---------------------------------------------------------------------
    def record_result(self, proposal: dict, result: dict) -> None:
        action = proposal.get("action") or ""
        params = proposal.get("parameters") or {}
        if result.get("outcome") == "rejected":
            self._rejected(proposal, action, params, result)
            return
        # accepted, or unknown (it may have happened): never repeat on a guess
        self.streak.clear()
        if proposal.get("escape"):
            # a way out of a stall that was accepted may have changed the game underneath a read
            # that looks the same (main_menu leaves the game over under an unchanged popup):
            # what was refused "on this very state", or accepted there without effect, may work now
            self.rejected_here.clear()
            self.futile.clear()
            self.excused.clear()
        if action in UNGUARDED:
            return
        pending = Pending(
            "effect",
            action,
            dict(params),
            self.flow or "",
            proposal.get("state_digest"),
            time.monotonic(),
            dict(proposal.get("guard_snapshot") or {}),
            proposal.get("situation"),
        )
        if proposal.get("popup_screen"):  # a tutorial/popup dismissal: the run's pending stays
            self.popup_pending = pending
            self.abandon_requested = False
            return
        if proposal.get("abandon_run"):
            self.abandon_requested = True
        kind = GUARDED.get(action, "effect")
        if proposal.get("character_pick"):
            kind = "character"
            self.character_picked = True
        elif action == "menu_select" and params.get("option") in ("embark", "confirm"):
            kind = "embark"
        elif action == "select_card" and proposal.get("screen_type") == "choose":
            kind = "choose_card"
        if kind == "grid_toggle":
            self.toggles.add(params.get("index"))
        pending.kind = kind
        self.pending = pending

    def _rejected(self, proposal: dict, action: str, params: dict, result: dict) -> None:
        key = action_key(action, params)
        self.rejections[key] = self.rejections.get(key, 0) + 1
        self.streak[key] = self.streak.get(key, 0) + 1
        here = (proposal.get("state_digest"), key)
        self.rejected_here[here] = self.rejected_here.get(here, 0) + 1
        if proposal.get("character_pick") or (
            action == "menu_select" and params.get("option") in ("embark", "confirm")
        ):
            self.character_picked = False  # a rejected embark allows picking again
        if action == "use_potion" and proposal.get("potion_id"):
            text = refusal_text(result)  # McpMod.Actions.cs ExecuteUsePotion's usage refusals
            if "only be used in combat" in text:
                self.combat_only_potions.add(proposal["potion_id"])
            elif "is automatic and cannot be manually used" in text:
                self.automatic_potions.add(proposal["potion_id"])


def refusal_text(result: dict) -> str:
    """The game's words for a refusal (either of the mod's error shapes), or the transport's."""
    resp = result.get("response")
    if isinstance(resp, dict) and resp.get("error"):
        return str(resp["error"])
    return str(result.get("error") or "")


def shop_items(state: dict) -> list:
    kind = state.get("state_type")
    block = state.get(kind) or {}
    if kind == "fake_merchant":
        block = block.get("shop") or {}
    return [i for i in block.get("items") or [] if isinstance(i, dict)]


def item_identity(item: dict) -> dict:
    """What a shop item is, without its price and affordability."""
    return {k: item.get(k) for k in ("category", "card_id", "relic_id", "potion_id", "is_stocked")}


def _indexed(items, index) -> dict:
    for i, item in enumerate(items or []):
        if isinstance(item, dict) and item.get("index", i) == index:
            return item
    return {}


def target_of(action: str | None, params: dict, state: dict) -> Any:
    """The thing an action acts on, described without list positions (which shift)."""
    kind = state.get("state_type")
    block = state.get(kind) if isinstance(state.get(kind), dict) else {}
    if action == "claim_reward":
        item = _indexed(block.get("items"), params.get("index"))
        return {k: v for k, v in item.items() if k != "index"}
    if action == "shop_purchase":
        return item_identity(_indexed(shop_items(state), params.get("index")))
    if action in ("use_potion", "discard_potion"):
        potions = (state.get("player") or {}).get("potions") or []
        pot = next((p for p in potions if isinstance(p, dict) and p.get("slot") == params.get("slot")), {})
        return {"potion": pot.get("id"), "target": params.get("target")}
    if action == "choose_rest_option":
        return _indexed(block.get("options"), params.get("index")).get("id")
    if action == "choose_event_option":
        return _indexed(block.get("options"), params.get("index")).get("title")
    return params


def situation_of(action: str | None, params: dict, state: dict) -> str:
    """A short key for "this action on this thing, on this screen flow"."""
    raw = _SITUATION_JSON.encode([flow_of(state), action, target_of(action, params, state)])
    return hashlib.sha256(raw.encode()).hexdigest()[:16]


def snapshot_for(action: str, params: dict, state: dict) -> dict[str, Any]:
    """What a guard needs to remember about the state it acted on."""
    if action == "combat_select_card":
        return {"selected": len((state.get("hand_select") or {}).get("selected_cards") or [])}
    if action == "shop_purchase":
        return {"item": item_identity(_indexed(shop_items(state), params.get("index")))}
    return {}


__all__ = [
    "PolicyContext",
    "Pending",
    "flow_of",
    "room_of",
    "digest",
    "NEUTRAL",
    "is_neutral",
    "is_blocking_popup",
    "situation_of",
    "snapshot_for",
    "refusal_text",
    "action_key",
]
