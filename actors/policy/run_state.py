"""``RunContext``: run identity and card evidence for the session, each card snapshot with its
provenance.

Identity is the one the observer read from the compendium after a stable in-run observation
(``row["run_identity"]``, see ``actors.identity``). It is *reported*, not atomic with the
state, and never replaced by a seed, character or floor.

* A usable identity that differs from the last known one is a new run: policy memory, guards,
  rejection counts and card evidence are reset, and with ``session.stop_on_run_end`` the
  session stops before acting in the replacement run (``run_changed``).
* An outage (missing identity or a failed read) discards card evidence but keeps guards; the
  last known id is kept privately (so a different id after the outage still resets), while
  decision rows carry ``run_id: null`` during it.
* Observed menu and game-over screens clear run evidence and active-run policy memory.

**Joining a game in progress.** A session whose first observation is inside a run (any state
with ``run``, a mid-run tutorial or popup aside) joined it mid-run; one that finds the main
menu offering ``continue`` joins the saved run through it. The first proposal in the run says
so once (``session_join``: ``how`` ``in_run`` with the screen, act and floor, or
``continue_saved_run``); the run's identity is then picked up from ``run_identity`` like any
other.

Tutorial and popup states (mid-run too) are neither a run exit nor evidence of anything.

**A seeded run** (``policy.settings.run_seed``, ``RunSeed``). The policy embarks with
``menu_select {option: embark, seed}`` while the game has not refused the seed itself; once it
did (one of the two refusals of McpMod.Actions.cs ``ExecuteCharacterSelectMenuOption``, kept
for the session: the game's flows do not change), it embarks without. Every run the policy
plays while a seed is asked gets one mark, on a proposal row: ``seeded: true`` with
``seed_applied`` (``requested``, ``embark_reply``, ``reported_seed``, ``run_id``) once the run's
identity reports the asked seed (compared as text, ignoring case and surrounding blanks), or
``seeded: false`` with ``unseeded`` (``reason``, ``requested``, and what backs the reason):
``refused`` (the game's ``error``), ``embarked_without_seed`` (a plain embark, e.g. a stall's
way out), ``seed_mismatch`` (the identity reports another seed: ``seed_applied`` too),
``unconfirmed`` (the run ended before its identity reported a seed), ``joined_in_run``,
``continued_saved_run``. The run is told from earlier ones by a run id not seen before the
embark; a restarted policy rebuilds all of it from the replayed results and proposal rows.

Card evidence is a combat-pile snapshot, kept only with a reported run id, with provenance:
``source: combat_piles``, ``run_id``, ``observed_step``, ``act``, ``floor``,
``persistent_deck: false``, ``piles_present`` and freshness ``observed_combat_piles`` (read
in this observation) or ``historical_combat_piles`` (carried into the reward screens of the
same room). It is discarded on a room change, missing room coordinates, an identity failure,
a new run id, a run exit, and any other accepted non-combat action than opening or skipping a
card reward; a rejected request discards nothing. It is never the persistent deck.
"""

from __future__ import annotations

from collections import Counter

from .context import PolicyContext, is_blocking_popup, refusal_text, room_of

PILES = ("hand", "draw_pile", "discard_pile", "exhaust_pile")
COMBAT = {"monster", "elite", "boss", "hand_select"}
EMBARK = ("embark", "confirm")
# McpMod.Actions.cs ExecuteCharacterSelectMenuOption: the refusals of the seed itself (no
# lobby; the lobby's SetSeed threw); any other refusal of a seeded embark says nothing of it
SEED_REFUSALS = ("Seeded embark is not supported", "Seeded embark failed before starting the run")


class RunSeed:
    """The run seed asked of the game and each run's mark (module docstring)."""

    def __init__(self, requested: str | int | None):
        self.requested = None if requested is None else str(requested).strip()
        self.refusal: str | None = None  # the game's refusal of the seed itself
        self.awaiting: dict | None = None  # an accepted seeded embark, its run not confirmed yet
        self.entered = False  # the awaited run was seen (an in-run read after the embark)
        self.before: set[str] = set()  # run ids seen before the awaited embark
        self.seen: set[str] = set()  # every run id seen
        self.mark: dict | None = None  # the next proposal's mark

    def embark_parameters(self) -> dict:
        """``{"seed": ...}`` for an embark while a seed is asked and not refused, else ``{}``."""
        return {"seed": self.requested} if self.requested and self.refusal is None else {}

    def observe(self, state: dict) -> None:
        if self.awaiting is None:
            return
        if state.get("state_type") in ("menu", "game_over"):  # (a game over shows its run)
            if self.entered:
                self._unseeded("unconfirmed", embark_reply=self.awaiting["embark_reply"])
                self.awaiting = None
        elif isinstance(state.get("run"), dict):
            self.entered = True

    def identity(self, rid: str, seed) -> None:
        """A usable identity: the awaited run's, when its id was not seen before the embark."""
        self.seen.add(rid)
        if self.awaiting is None or rid in self.before:
            return
        applied = {**self.awaiting, "reported_seed": seed, "run_id": rid}
        self.awaiting = None
        if seed is not None and str(seed).strip().upper() == str(applied["requested"]).upper():
            self.mark = {"seeded": True, "seed_applied": applied}
        else:
            self._unseeded("seed_mismatch" if seed is not None else "unconfirmed", reported_seed=seed, run_id=rid)
            self.mark["seed_applied"] = applied

    def record_result(self, proposal: dict, result: dict) -> None:
        params = proposal.get("parameters") or {}
        if self.requested is None or proposal.get("action") != "menu_select" or params.get("option") not in EMBARK:
            return
        seeded = isinstance(params.get("seed"), str) and bool(params["seed"].strip())
        if result.get("outcome") == "rejected":
            text = refusal_text(result)
            if seeded and text.startswith(SEED_REFUSALS):
                self.refusal = text
            return
        if seeded:  # accepted (or unknown: it may have happened)
            reply = result.get("response") if isinstance(result.get("response"), dict) else {}
            self.awaiting = {"requested": params["seed"], "embark_reply": reply.get("message")}
            self.entered = False
            self.before = set(self.seen)
        elif self.refusal is not None:
            self.awaiting = None
            self._unseeded("refused", error=self.refusal)
        else:
            self.awaiting = None
            self._unseeded("embarked_without_seed")

    def joined(self, how: str) -> None:
        """The session joined a run it did not start: no seed could be asked of it."""
        if self.requested is not None:
            self._unseeded("continued_saved_run" if how == "continue_saved_run" else "joined_in_run")

    def _unseeded(self, reason: str, **why) -> None:
        self.mark = {"seeded": False, "unseeded": {"reason": reason, "requested": self.requested, **why}}

    def take_mark(self) -> dict:
        """The mark for the proposal being made, once."""
        mark, self.mark = self.mark, None
        return mark or {}

    def record_proposal(self, proposal: dict) -> None:
        if isinstance(proposal.get("seeded"), bool):
            self.mark = None  # recorded (a restarted policy replays it here)


class RunContext:
    def __init__(self, policy_context: PolicyContext, stop_on_run_end: bool, run_seed: str | int | None = None):
        self.policy = policy_context
        self.seed = RunSeed(run_seed)
        self.stop_on_run_end = stop_on_run_end
        self.last_known_run_id: str | None = None  # private, kept through outages
        self.reported_run_id: str | None = None  # what decision rows carry (null in outages)
        self.run_seed = None
        self.evidence: dict | None = None
        self.stop_reason: str | None = None
        self.changes = 0
        self.first_state: dict | None = None  # the session's first observation (joining)
        self.join_reported = False

    def observe(self, state: dict, row: dict) -> None:
        if is_blocking_popup(state):
            return
        if self.first_state is None:
            self.first_state = state
        kind = state.get("state_type")
        if kind in ("menu", "game_over"):
            self._run_exit()
        self.seed.observe(state)
        ident = row.get("run_identity")
        if ident is not None:
            self._identity(ident)
        self._evidence(state, row)

    def _identity(self, ident: dict) -> None:
        if ident.get("status") != "ok":
            self.reported_run_id = None
            self.evidence = None
            return
        rid = ident["run_id"]
        if self.last_known_run_id is not None and rid != self.last_known_run_id:
            self.policy.reset()
            self.evidence = None
            self.changes += 1
            if self.stop_on_run_end:
                self.stop_reason = "run_changed"
        self.last_known_run_id = self.reported_run_id = rid
        self.run_seed = ident.get("seed")
        self.seed.identity(rid, self.run_seed)

    def _run_exit(self) -> None:
        if self.reported_run_id is not None or self.evidence is not None:
            self.policy.reset()
        self.evidence = None
        self.reported_run_id = None
        # a new run after the menu is expected: its id is not a "replacement"
        self.last_known_run_id = None

    def _evidence(self, state: dict, row: dict) -> None:
        kind = state.get("state_type")
        room = room_of(state)
        if self.evidence is not None and (room is None or room != (self.evidence["act"], self.evidence["floor"])):
            self.evidence = None
        if kind in COMBAT and self.reported_run_id and room is not None:
            player = state.get("player") or {}
            present = [p for p in PILES if isinstance(player.get(p), list)]
            counts = Counter([c.get("name") for p in present for c in player[p]])
            self.evidence = {
                "source": "combat_piles",
                "run_id": self.reported_run_id,
                "observed_step": row.get("step"),
                "act": room[0],
                "floor": room[1],
                "persistent_deck": False,
                "piles_present": present,
                "freshness": "observed_combat_piles",
                "card_counts": dict(sorted(counts.items())),
            }
        elif self.evidence is not None:
            self.evidence = {**self.evidence, "freshness": "historical_combat_piles"}

    def record_result(self, proposal: dict, result: dict) -> None:
        self.seed.record_result(proposal, result)
        if result.get("outcome") == "rejected":
            return
        action = proposal.get("action")
        opens_card_reward = action == "claim_reward" and proposal.get("reward_type") in ("card", "special_card")
        if proposal.get("state_type") not in COMBAT and not opens_card_reward and action != "skip_card_reward":
            self.evidence = None

    def join_record(self, state: dict, proposal) -> dict | None:
        """What the session's first proposal in a run says about joining it, once."""
        record = proposal.extra.pop("session_join", None)  # a rule's claim (continue)
        if self.join_reported or proposal.wish not in ("execute", "wait"):
            return None
        first = self.first_state or {}
        if record is None and isinstance(first.get("run"), dict) and not is_blocking_popup(state):
            run = first["run"]
            record = {
                "how": "in_run",
                "screen": first.get("state_type"),
                "act": run.get("act"),
                "floor": run.get("floor"),
            }
        if record is not None:
            self.join_reported = True
            record["run_id"] = self.reported_run_id
            self.seed.joined(record["how"])
        return record

    def decision_fields(self) -> dict:
        prov = None
        if self.evidence is not None:
            prov = {k: v for k, v in self.evidence.items() if k != "card_counts"}
        return {"run_id": self.reported_run_id, "run_seed": self.run_seed, "deck_provenance": prov}
