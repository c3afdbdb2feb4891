"""One Slay the Spire 2 session of ``supervisor mcp --game``: its profile and what it knows.

:func:`game_profile` writes the session profile (policy ``mcp_sts2``; docs/mcp.md lists it);
:class:`GameSession` is the running session (ready at its first observation, a failed read
before it kept to say why the game cannot be reached) with the policy's memory of accepted
actions, so that waiting knows what an accepted action still awaits; :func:`actionable` says
whether the agent can act on a state. Sessions are captured under ``<workspace>/artifacts/sts2/``
(:data:`CAPTURE`, a capture root: ``supervisor view``, ``capture verify`` and the rest read it as
any other).
"""

from __future__ import annotations

import json
import time
from pathlib import Path

from actors.policy.context import PolicyContext, is_blocking_popup
from actors.policy.mcp_sts2 import RELEASES
from actors.policy.run_state import RunContext
from protocol.events import ActionAttempt, ActionResult, Observation, ObservationError, Proposal, ProposalStatus

from ..shared.errors import ToolRefused
from ..shared.session import Playtest

UNREACHABLE_S = 5.0  # a session without any observation this long after its first failed read
ACTORS = ("recorder", "policy", "actuator", "observer")
CAPTURE = Path("artifacts") / "sts2"  # the sessions' capture root, in the workspace


def game_profile(
    base_url: str,
    builtin: bool,
    seed: int,
    capture_root: Path,
    runtime_dir: Path,
    bridge: str,
    server_pid: int,
    poll_s: float,
    knobs: dict,
) -> dict:
    """The session profile of ``supervisor mcp --game`` (docs/mcp.md lists it)."""
    restart = {"restart": "permanent", "max_restarts": 5, "period_s": 30}
    actors = {name: dict(restart) for name in (*ACTORS, *(("game",) if builtin else ()))}
    return {
        "name": "mcp-agent",
        "game": {
            "backend": "http",
            "builtin": builtin,
            "base_url": base_url,
            "seed": seed,
            "timeout_s": 5,
            "poll_interval_s": poll_s,
            "knobs": knobs,
        },
        "policy": {"module": "mcp_sts2", "settings": {"bridge": bridge, "server_pid": server_pid}},
        "capture": {"root": str(capture_root)},
        "session": {"stop_on_run_end": False, "max_steps": None, "stuck_seconds": 0},
        "supervisor": {"runtime_dir": str(runtime_dir), "progress": "off"},
        "actors": actors,
    }


def actionable(state: dict) -> str | None:
    """Why the agent can act on this state (a few words), or None when it cannot (a transition,
    the enemies' turn, a combat that ended and awaits its rewards, a shop not ready)."""
    kind = state.get("state_type")
    block = state.get(kind) if isinstance(state.get(kind), dict) else {}
    if kind in ("monster", "elite", "boss"):
        battle = state.get("battle") if isinstance(state.get("battle"), dict) else {}
        return "your turn" if battle.get("is_play_phase") else None
    if kind == "fake_merchant":
        block = block.get("shop") if isinstance(block.get("shop"), dict) else {}
    if kind == "menu":
        return "menu options" if state.get("options") else None
    if kind == "game_over":
        return "the run is over" if block.get("options") else None
    if kind == "event":
        return (
            "event"
            if block.get("in_dialogue")
            or any(isinstance(o, dict) and not o.get("is_locked") for o in block.get("options") or [])
            else None
        )
    if kind in (None, "unknown", "overlay"):
        return None
    lists = ("items", "cards", "next_options", "options", "relics", "bundles", "clickable_cells")
    if (
        block.get("can_proceed")
        or block.get("can_skip")
        or block.get("can_confirm")
        or any(block.get(k) for k in lists)
    ):
        return kind
    return None


class GameSession(Playtest):
    """A session for an agent playing over HTTP: ready at its first observation; a failed read
    before it is kept to say why the game cannot be reached. It keeps the policy's memory of
    accepted actions (``PolicyContext`` and ``RunContext`` fed the journal's rows in order, as
    the policy feeds its own), so that waiting knows what an accepted action still awaits."""

    def __init__(self, *args):
        super().__init__(*args)
        self.read_error: dict | None = None
        self.first_error_at: float | None = None
        self.memory = PolicyContext()
        self.run = RunContext(self.memory, stop_on_run_end=False)
        self.by_id: dict[str, dict] = {}  # proposal id -> proposal row, until its result
        self.attempted: dict[str, str] = {}  # attempt id -> proposal id, until its result

    def awaited(self) -> str | None:
        """The accepted action whose evidence has not shown yet (None when there is none, or it
        waited in vain past the policy's no-effect limits)."""
        popup = is_blocking_popup(self.observation["state"])
        pending = self.memory.popup_pending if popup else self.memory.pending
        if pending is None or self.memory.overdue(popup):
            return None
        return f"{pending.action} {json.dumps(pending.parameters)} ({RELEASES.get(pending.kind, pending.kind)})"

    def ready(self) -> bool:
        if (
            self.observation is None
            and self.read_error is not None
            and time.monotonic() - self.first_error_at > UNREACHABLE_S
        ):
            raise ToolRefused(
                "game-unreachable",
                f"Cannot connect to STS2_MCP mod at "
                f"{self.profile['game']['base_url']}: {self.read_error.get('error')}. Is the game "
                "running with the mod enabled? (the session keeps trying; call again)",
            )
        return self.observation is not None

    def feed(self, row: dict) -> None:
        event = row["event"]
        if event == ObservationError.KIND:
            self.read_error = row
            self.first_error_at = self.first_error_at or time.monotonic()
        super().feed(row)
        if event == Observation.KIND:
            self.run.observe(self.observation["state"], row)
            self.memory.reconcile(self.observation["state"])
        elif event == Proposal.KIND:
            self.by_id[row["proposal_id"]] = row
            if row.get("released_no_effect"):
                self.memory.apply_release(row["released_no_effect"])
        elif event == ProposalStatus.KIND and row["status"] != "execute":
            self.by_id.pop(row["proposal_id"], None)
        elif event == ActionAttempt.KIND:
            self.attempted[row["attempt_id"]] = row["proposal_id"]
        elif event == ActionResult.KIND:
            proposal = self.by_id.pop(self.attempted.pop(row["attempt_id"], ""), None)
            if proposal is not None:
                self.memory.record_result(proposal, row)
                self.run.record_result(proposal, row)
