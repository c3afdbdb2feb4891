"""``mcp_sts2``: the policy of an agent playing Slay the Spire 2 through ``supervisor mcp --game``
(:class:`Sts2AgentPolicy`; the server writes it into the session profile it builds).

Like the Game Boy agent's :class:`.mcp_pyboy.AgentPolicy` it proposes what the agent asked for,
one request per observation (``source: mcp-agent``; rows carry ``agent_request``, ``agent_tool``
and, when the agent gave one, ``agent_reason``). It keeps the memory the built-in STS2 policy keeps, replayed from the
journal after a restart: ``PolicyContext`` (what an accepted action awaits) and ``RunContext``
(run identity, ``session_join``).

A request ``{"kind": "act", "tool", "action", "parameters", "indexed"}`` becomes:

* ``suppressed`` with ``refused`` when ``indexed`` (the parameter naming a list position) is not
  one of the indices the current screen lists (``choices``): nothing is sent;
* ``suppressed`` with ``guard`` when it is the very action already accepted on this very state
  (same action and parameters, same state digest) and that action still awaits its evidence:
  nothing is sent; ``guard`` names the pending action, when it was accepted and what releases
  it (``RELEASES``). After ``no_effect_reads`` reads over ``no_effect_seconds`` without any
  evidence the guard lapses (``released_no_effect`` on the row) and the action may go again;
* otherwise an executable proposal (``guard_snapshot``, ``situation``, ``state_digest``...).

``observe`` is a ``wait`` (the observer reads the game again: a fresh observation; at once when
the request says ``now``, as its row then says ``read_now``, else after ``game.poll_interval_s``)
and ``end`` a ``stop`` (``stop_command``).
"""

from __future__ import annotations

from .base import PolicyObservation, Proposal
from .context import PolicyContext, action_key, digest, is_blocking_popup, situation_of, snapshot_for
from .mcp_bridge import BridgedPolicy
from .run_state import RunContext
from .sts2_menus import infer_outcome

COMBAT = ("monster", "elite", "boss")
#: what releases a pending accepted action, by its kind (``actors.policy.context``'s table)
RELEASES = {
    "grid_toggle": "a fresh read of the same grid",
    "choose_card": "a change of screen",
    "hand_select": "one more selected card, or a change of screen",
    "confirm": "a change of screen",
    "bundle_select": "a preview with confirmation enabled, or a change of screen",
    "purchase": "the item changing or leaving the shop, or a change of screen",
    "crystal_click": "the cell being revealed, or a change of screen",
    "character": "any fresh read",
    "embark": "a change of screen",
    "reward_skip": "the rewards list showing again",
    "effect": "any read that differs from the state it acted on",
}


def _block(state: dict) -> dict:
    kind = state.get("state_type")
    block = state.get(kind)
    return block if isinstance(block, dict) else {}


def _indices(items) -> list:
    return [i.get("index", n) for n, i in enumerate(items or []) if isinstance(i, dict)]


def choices(tool: str, state: dict) -> tuple[str, list] | None:
    """(what the list is, its valid indices) for a tool's ``indexed`` parameter on this screen;
    None when this screen does not list them (the game then answers for itself)."""
    kind, block = state.get("state_type"), _block(state)
    player = state.get("player") if isinstance(state.get("player"), dict) else {}
    if tool in ("use_potion", "discard_potion") and isinstance(player.get("potions"), list):
        return "potion slots", [p.get("slot") for p in player["potions"] if isinstance(p, dict)]
    lists = {
        ("combat_play_card", "monster"): ("hand", player.get("hand")),
        ("combat_play_card", "elite"): ("hand", player.get("hand")),
        ("combat_play_card", "boss"): ("hand", player.get("hand")),
        ("combat_select_card", "hand_select"): ("selectable cards", block.get("cards")),
        ("rewards_claim", "rewards"): ("rewards", block.get("items")),
        ("rewards_pick_card", "card_reward"): ("reward cards", block.get("cards")),
        ("map_choose_node", "map"): ("next_options", block.get("next_options")),
        ("rest_choose_option", "rest_site"): ("rest options", block.get("options")),
        ("shop_purchase", "shop"): ("shop items", block.get("items")),
        ("shop_purchase", "fake_merchant"): ("shop items", (block.get("shop") or {}).get("items")),
        ("event_choose_option", "event"): ("event options", block.get("options")),
        ("deck_select_card", "card_select"): ("cards", block.get("cards")),
        ("bundle_select", "bundle_select"): ("bundles", block.get("bundles")),
        ("relic_select", "relic_select"): ("relics", block.get("relics")),
        ("treasure_claim_relic", "treasure"): ("relics", block.get("relics")),
    }
    found = lists.get((tool, kind))
    if found is None or not isinstance(found[1], list):
        return None
    return found[0], _indices(found[1])


def out_of_range(request: dict, state: dict) -> str | None:
    """Why the request's index does not name anything on this screen, or None."""
    name = request.get("indexed")
    if not name:
        return None
    value = (request.get("arguments") or {}).get(name)
    listed = choices(request["tool"], state)
    if listed is None or value in listed[1]:
        return None
    what, valid = listed
    shown = ", ".join(str(v) for v in valid) if valid else "none"
    return (
        f"{request['tool']}: {name} {value} is not on this {state.get('state_type')} screen "
        f"({what}: {shown}); nothing was sent"
    )


class Sts2AgentPolicy(BridgedPolicy):
    SOURCE = "mcp-agent"

    def __init__(self, settings: dict, session: dict):
        super().__init__(settings, session)
        self.ctx = PolicyContext(int(settings.get("no_effect_reads", 4)), float(settings.get("no_effect_seconds", 5.0)))
        self.run = RunContext(self.ctx, stop_on_run_end=False)
        self.accepted_at: dict[str, dict] = {}  # action key -> ids of its last accepted proposal

    # -- memory (as the built-in policy keeps it) --------------------------------------
    def observe(self, obs: PolicyObservation) -> None:
        self.run.observe(obs.state, obs.row)
        self.ctx.reconcile(obs.state)

    def record_result(self, proposal: dict, result: dict) -> None:
        self.ctx.record_result(proposal, result)
        self.run.record_result(proposal, result)
        if result.get("outcome") != "rejected":
            self.accepted_at[action_key(proposal.get("action"), proposal.get("parameters"))] = {
                "proposal_id": proposal.get("proposal_id"),
                "attempt_id": result.get("attempt_id"),
            }

    def record_proposal(self, proposal: dict) -> None:
        if proposal.get("released_no_effect"):
            self.ctx.apply_release(proposal["released_no_effect"])
        if proposal.get("session_join"):
            self.run.join_reported = True

    # -- the agent's request -------------------------------------------------------------
    def propose(self, request: dict, obs: PolicyObservation) -> Proposal:
        st, d = obs.state, digest(obs.state)
        tool, kind = request.get("tool", request.get("kind")), request.get("kind")
        extra = {"agent_request": request["id"], "agent_tool": tool}
        if request.get("reason"):
            extra["agent_reason"] = str(request["reason"])
        said = f"agent request {request['id']} ({tool})"
        if kind == "observe":
            if request.get("now"):
                extra["read_now"] = True
            p = Proposal.wait(f"{said}: read the game again", extra=extra)
        elif kind == "end":
            p = Proposal.stop("stop_command", extra=extra)
        elif kind == "act":
            p = self._act(request, st, d, said, extra)
        else:
            p = Proposal.wait(f"{said}: unknown kind {kind!r}", extra=extra)
        p.source = self.SOURCE
        p.extra.update(state_digest=d, state_type=st.get("state_type"), **self.run.decision_fields())
        join = self.run.join_record(st, p)
        if join is not None:
            p.extra["session_join"] = join
        if st.get("state_type") == "game_over":  # the outcome as the built-in policy infers it
            p.extra["run_outcome"] = infer_outcome(st)
        return p

    def _act(self, request: dict, st: dict, d: str, said: str, extra: dict) -> Proposal:
        action, params = request["action"], dict(request.get("parameters") or {})
        reason = request.get("reason") or said
        problem = out_of_range(request, st)
        if problem is not None:
            return Proposal(
                action,
                params,
                f"{said}: refused: {problem}",
                wish="suppressed",
                extra={**extra, "refused": {"code": "invalid-argument", "detail": problem}},
            )
        popup = is_blocking_popup(st)
        pending = self.ctx.popup_pending if popup else self.ctx.pending
        if (
            pending is not None
            and pending.acted_digest == d
            and action_key(pending.action, pending.parameters) == action_key(action, params)
        ):
            if not self.ctx.overdue(popup):
                guard = {
                    "pending_action": pending.action,
                    "pending_parameters": pending.parameters,
                    "kind": pending.kind,
                    "released_by": RELEASES.get(pending.kind, RELEASES["effect"]),
                    "reads_since": pending.reads,
                    "lapses_after": {"reads": self.ctx.no_effect_reads, "seconds": self.ctx.no_effect_seconds},
                    **self.accepted_at.get(action_key(action, params), {}),
                }
                return Proposal(
                    action,
                    params,
                    f"{said}: duplicate of the accepted {action} on an unchanged state",
                    wish="suppressed",
                    extra={**extra, "guard": guard},
                )
            extra["released_no_effect"] = self.ctx.release_no_effect(popup)
        extra["guard_snapshot"] = snapshot_for(action, params, st)
        extra["situation"] = situation_of(action, params, st)
        return Proposal(action, params, reason, extra=extra)
