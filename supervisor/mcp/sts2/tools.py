"""``supervisor mcp --game``: the STS2MCP mod's MCP tools, each call a step of a supervised session.

:class:`GameTools` owns one :class:`GameSession` (started at the first call, started again if
it ended; its profile: :func:`game_profile`) and answers the tools of :mod:`.schemas`:

* **acting tools** (``combat_play_card``...; ``switch_profile``/``delete_profile`` as
  ``profiles:<verb>`` actions): the game is read afresh (an ``observe`` request: a journalled
  ``wait`` proposal saying ``read_now``, after which the observer reads at once, and a new
  observation), then the action is handed to the policy
  (``mcp_sts2``: :class:`actors.policy.mcp_sts2.Sts2AgentPolicy`) as the agent's proposal on that observation; the
  pipeline records it, fsyncs the intent, POSTs it once and records the result, and the
  observer reads the state after it. The answer is the game's reply in the mod server's words
  (the reply's JSON; ``Error: HTTP <status> — <body>`` for an HTTP error) and a second text,
  ``{"gamerig": ...}``, with the step's journal ids. A refused index or a guarded duplicate is
  a tool error (nothing sent); an unknown outcome is a tool error saying so (never resent).
* **reads**: ``get_game_state`` is a fresh observation, read at once (``format: "markdown"``
  adds the game's own rendering, read right after it); ``get_profile``, ``get_compendium``,
  ``search_wiki`` and ``list_profiles`` are read by this server and journalled as
  ``agent_read`` rows (the body, its SHA-256 and size, the HTTP status).
* **waiting**: ``wait_until_actionable`` and ``wait_for_change`` read at the observer's pace
  (``game.poll_interval_s``) until their condition holds or ``timeout_seconds`` pass.
* **multiplayer** (``mp_*``): refused, nothing sent.

Sessions are captured under ``<workspace>/artifacts/sts2/`` (a capture root: ``supervisor view``,
``capture verify`` and the rest read it as any other).
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import time
from pathlib import Path

import zmq

from actors.policy.context import PolicyContext, digest, is_blocking_popup
from actors.policy.mcp_sts2 import RELEASES
from actors.policy.run_state import RunContext
from actors.runtime.recorder_client import RecorderClient
from actors.runtime.transport import Counters, RequestFailed
from actors.sts2mcp import PROFILE_PREFIX, GameClient
from protocol.events import ActionAttempt, ActionResult, Observation, ObservationError, Proposal, ProposalStatus

from ..shared.args import Answer
from ..shared.bridge import Bridge
from ..shared.errors import SessionGone, ToolRefused
from ..shared.session import Playtest, private_dir, remove_private
from ..shared.workspace import Workspace
from .schemas import ALL, REQUIRED, GameTool, known_args, schema

UNREACHABLE_S = 5.0  # a session without any observation this long after its first failed read
MAX_WAIT_S = 600.0
BODY_MAX = 512 * 1024  # the most of a read's body kept in its journal row
STEP_TIMEOUT_S = 30.0
MULTIPLAYER = (
    "mp-refused: gamerig does not drive multiplayer runs: its built-in game has no multiplayer, "
    "and no multiplayer flow (votes, bids, the end-turn barrier) was checked against the mod. "
    "Nothing was sent. Use the mod's own MCP server for co-op runs."
)
ACTORS = ("recorder", "policy", "actuator", "observer")
CAPTURE = Path("artifacts") / "sts2"  # the sessions' capture root, in the workspace
CHOICES = {"format": ("markdown", "json"), "item_type": ("all", "card", "relic"), "tool": ("big", "small")}
INSTRUCTIONS = (
    "Play Slay the Spire 2 through gamerig: the STS2MCP mod's tools (get_game_state, menu_select, "
    "combat_play_card, ...), each action recorded and its intent fsynced before it reaches the "
    "game. After an action, wait_until_actionable returns the next state you can act on. "
    "Refusals start with a code (duplicate-refused, invalid-argument, outcome-unknown, "
    "mp-refused); nothing refused was sent."
)


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


class GameTools:
    INSTRUCTIONS = INSTRUCTIONS

    def __init__(
        self,
        workspace: Workspace,
        base_url: str,
        builtin: bool = False,
        seed: int = 1,
        poll_s: float = 0.1,
        knobs: dict | None = None,
    ):
        self.ws, self.base_url, self.builtin, self.seed, self.poll_s = workspace, base_url, builtin, seed, poll_s
        self.knobs = dict(knobs or {})
        self.capture_root = workspace.root / CAPTURE
        self.private = private_dir()
        self.zctx = zmq.Context()
        self.bridge = Bridge(self.zctx, f"ipc://{self.private / 'agent.sock'}")
        self.client = GameClient(base_url, 5.0)
        self.session: GameSession | None = None
        self.recorder: RecorderClient | None = None
        self.sessions = 0
        self.shown: str | None = None  # digest of the last state an answer showed the agent

    # -- the one entry ------------------------------------------------------------------
    def listing(self) -> list[tuple[str, str, dict]]:
        """Every tool: (name, description, input schema)."""
        return [(t.name, t.text, schema(t)) for t in ALL.values()]

    def call(self, name: str, arguments: object) -> Answer:
        tool = ALL.get(name)
        if tool is None:
            raise ToolRefused(
                "unknown-tool",
                f"no tool {name!r} (the STS2MCP tools: get_game_state, "
                "menu_select, combat_play_card, ...; see tools/list)",
            )
        args = check_args(tool, arguments)
        if tool.how == "mp":
            raise ToolRefused(*MULTIPLAYER.split(": ", 1))
        handler = {"act": self.act, "profile": self.act, "state": self.state, "read": self.read, "wait": self.wait}[
            tool.how
        ]
        return handler(tool, args)

    def shutdown(self) -> None:
        try:
            self.end("the MCP server shut down")
        finally:
            self.client.close()
            self.bridge.close()
            self.zctx.term()
            remove_private(self.private)

    # -- the session --------------------------------------------------------------------
    def live(self, catch_up: bool = True) -> GameSession:
        """The running session, or a new one. ``catch_up``: read the rows appended while the
        agent was away first (for the tools that answer from the session's newest observation);
        a tool that hands the pipeline a request skips it, since that request's rows come after
        all of them and are awaited row by row."""
        s = self.session
        if s is not None and s.alive() and s.stopping is None:
            if catch_up:
                s.catch_up()
            if s.observation is None:
                s.wait(s.ready, STEP_TIMEOUT_S, "the session's first observation")
            return s
        if s is not None:
            self.end("ended under the server")
        self.sessions += 1
        runtime = self.private / f"runtime-{self.sessions}"
        profile = game_profile(
            self.base_url,
            self.builtin,
            self.seed,
            self.capture_root,
            runtime,
            self.bridge.endpoint,
            os.getpid(),
            self.poll_s,
            self.knobs,
        )
        s = self.session = GameSession(self.private, self.capture_root, profile, self.bridge, self.zctx)
        self.shown = None
        try:
            s.start()
        except SessionGone:
            self.end("did not start")
            raise
        return s

    def end(self, why: str) -> None:
        s, self.session = self.session, None
        if self.recorder is not None:
            self.recorder.close()
            self.recorder = None
        if s is not None:
            s.end("mcp_server")

    def record(self, event: str, fields: dict) -> dict | None:
        """Append an open row to the session's journal through its recorder; its sequence."""
        s = self.session
        if self.recorder is None:
            socks = Path(s.record["control"][len("ipc://") :]).parent
            self.recorder = RecorderClient(
                self.zctx,
                f"ipc://{socks}/recorder.sock",
                session=s.record["session_id"],
                sender="mcp",
                counters=Counters(),
            )
        try:
            reply = self.recorder.record_event(event, fields, deadline_s=10.0)
        except RequestFailed as exc:
            raise ToolRefused(
                "not-recorded",
                f"the {event} row could not be recorded ({exc}); its answer is "
                "withheld, since nothing unrecorded is answered",
            ) from None
        return {"sequence": getattr(reply, "sequence", None)}

    def fresh(self, tool: str, s: GameSession, now: bool = True) -> dict:
        """A fresh observation (an ``observe`` request); its row with the state under ``state``.
        ``now``: the observer reads at once (the agent waits for this read); otherwise after
        ``game.poll_interval_s``, the pace of the waiting tools."""
        rows = s.request("observe", {}, tool, STEP_TIMEOUT_S, now=now)
        return rows["observation"]

    # -- tools ---------------------------------------------------------------------------
    def state(self, tool: GameTool, args: dict) -> Answer:
        s = self.live(catch_up=False)
        obs = self.fresh(tool.name, s)
        self.shown = digest(obs["state"])
        evidence = {
            "session_dir": str(s.session_dir),
            "observation_id": obs["observation_id"],
            "sequence": obs["sequence"],
            "sha256": obs.get("sha256"),
        }
        if args["format"] == "json":
            return Answer({"gamerig": evidence}, text=json.dumps(obs["state"], indent=2, ensure_ascii=False))
        status, text = self.client.read_text("/api/v1/singleplayer", {"format": "markdown"})
        evidence["read"] = self._read_row(
            "get_game_state", args, "/api/v1/singleplayer?format=markdown", status, text, obs["observation_id"]
        )
        return Answer({"gamerig": evidence}, text=mod_text(status, text))

    def read(self, tool: GameTool, args: dict) -> Answer:
        s = self.live()
        query = {k: v for k, v in args.items() if k != "reason"} or None
        status, text = self.client.read_text(tool.path, query)
        row = self._read_row(tool.name, args, tool.path, status, text, s.observation["observation_id"])
        return Answer({"gamerig": {"session_dir": str(s.session_dir), "read": row}}, text=mod_text(status, text))

    def _read_row(self, name: str, args: dict, path: str, status: int | None, text: str, obs_id: str) -> dict:
        data = text.encode("utf-8")
        fields = {
            "tool": name,
            "arguments": args,
            "path": path,
            "http_status": status,
            "bytes": len(data),
            "sha256": hashlib.sha256(data).hexdigest(),
            "after_observation_id": obs_id,
            "body": text if len(data) <= BODY_MAX else data[:BODY_MAX].decode("utf-8", "ignore"),
        }
        if len(data) > BODY_MAX:
            fields["body_truncated"] = True
        recorded = self.record("agent_read", fields)
        return {
            "event": "agent_read",
            "sequence": recorded["sequence"],
            "http_status": status,
            "sha256": fields["sha256"],
        }

    def act(self, tool: GameTool, args: dict) -> Answer:
        s = self.live(catch_up=False)
        reason = args.pop("reason", None)
        if tool.how == "profile":
            action, params = PROFILE_PREFIX + tool.action, {"profile_id": args["profile_id"]}
        else:
            body = tool.body(args)
            action = body.pop("action")
            params = body
        answer = self._step(s, tool, action, params, args, reason)
        if tool.name == "switch_profile":
            return self._switch_profile(s, tool, args, reason, answer)
        return answer

    def _step(
        self, s: GameSession, tool: GameTool, action: str, params: dict, args: dict, reason: str | None
    ) -> Answer:
        obs = self.fresh(tool.name, s)
        rows = s.request(
            "act",
            params,
            tool.name,
            STEP_TIMEOUT_S,
            unexecuted_ok=True,
            action=action,
            indexed=tool.indexed,
            arguments=args,
            reason=reason,
        )
        prop, status = rows["proposal"], rows["status"]["status"]
        ids = {
            "session_dir": str(s.session_dir),
            "observation_id": obs["observation_id"],
            "proposal_id": prop["proposal_id"],
            "proposal_sequence": prop["sequence"],
            "status": status,
        }
        if status != "execute":
            raise refusal(prop, status, ids)
        attempt, result = rows["attempt"], rows["result"]
        ids.update(
            attempt_id=attempt["attempt_id"],
            intent_sequence=attempt["sequence"],
            result_sequence=result["sequence"],
            outcome=result["outcome"],
        )
        after = self._after(s, attempt["attempt_id"], result["sequence"])
        ids["next_observation_id"] = after["observation_id"]
        if result["outcome"] == "unknown":
            raise ToolRefused(
                "outcome-unknown",
                f"the game gave no usable answer to {action} "
                f"({result.get('error')}): it may or may not have happened, and it was not sent "
                f"again. Read the state (get_game_state) before acting. Journal: {json.dumps(ids)}",
            )
        text = mod_text(result.get("http_status"), json.dumps(result.get("response"), indent=2, ensure_ascii=False))
        return Answer({"gamerig": ids}, text=text)

    def _after(self, s: GameSession, attempt_id: str, result_seq: int) -> dict:
        """The observation the observer took after this attempt's result."""
        s.wait(
            lambda: s.observation.get("after_attempt_id") == attempt_id or s.observation["sequence"] > result_seq,
            STEP_TIMEOUT_S,
            "the observation after the result",
        )
        return s.observation

    def _switch_profile(self, s: GameSession, tool: GameTool, args: dict, reason: str | None, answer: Answer) -> Answer:
        """The mod server's ``switch_profile``: a first POST may only open the profile screen
        (then, once the state shows it, the same POST again); then it waits for the slot to be
        the active one (``list_profiles`` reads, journalled) and answers as the mod does."""
        pid = args["profile_id"]
        try:
            reply = json.loads(answer.text)
        except ValueError:
            return answer
        if not isinstance(reply, dict) or reply.get("status") == "error":
            return answer
        if str(reply.get("message", "")).startswith("Opened profile screen"):
            for _ in range(20):
                if (self.fresh(tool.name, s, now=False)["state"].get("menu_screen")) == "profile_select":
                    answer = self._step(s, tool, PROFILE_PREFIX + tool.action, {"profile_id": pid}, args, reason)
                    break
        last = None
        for _ in range(30):
            time.sleep(0.1)
            status, text = self.client.read_text("/api/v1/profiles")
            self._read_row("switch_profile", args, "/api/v1/profiles", status, text, s.observation["observation_id"])
            try:
                last = json.loads(text)
            except ValueError:
                continue
            if isinstance(last, dict) and last.get("current_profile_id") == pid:
                return Answer(
                    answer.data,
                    text=json.dumps(
                        {
                            "status": "ok",
                            "message": f"Switched to profile {pid}",
                            "current_profile_id": pid,
                            "profiles": last.get("profiles", []),
                        },
                        indent=2,
                    ),
                )
        last = last if isinstance(last, dict) else {}
        return Answer(
            answer.data,
            text=json.dumps(
                {
                    "status": "error",
                    "error": f"Timed out waiting for profile {pid} to become active",
                    "current_profile_id": last.get("current_profile_id"),
                    "profiles": last.get("profiles", []),
                    "initial_response": answer.text,
                },
                indent=2,
            ),
        )

    def wait(self, tool: GameTool, args: dict) -> Answer:
        s = self.live()
        until = "actionable" if tool.name == "wait_until_actionable" else "change"
        start = time.monotonic()
        deadline = start + args["timeout_seconds"]
        baseline = self.shown if self.shown is not None else digest(s.observation["state"])
        obs, reads = s.observation, 0

        def met(o: dict) -> str | None:
            if until == "change":
                return "changed" if digest(o["state"]) != baseline else None
            return None if s.awaited() else actionable(o["state"])

        why = met(obs)
        while why is None and time.monotonic() < deadline:
            obs, reads = self.fresh(tool.name, s, now=False), reads + 1
            why = met(obs)
        self.shown = digest(obs["state"])
        evidence = {
            "session_dir": str(s.session_dir),
            "observation_id": obs["observation_id"],
            "sequence": obs["sequence"],
            "reads": reads,
            "waited_s": round(time.monotonic() - start, 3),
            ("actionable" if until == "actionable" else "changed"): why is not None,
        }
        if why is not None and until == "actionable":
            evidence["why"] = why
        elif until == "actionable" and s.awaited():
            evidence["awaiting"] = s.awaited()
        return Answer({"gamerig": evidence}, text=json.dumps(obs["state"], indent=2, ensure_ascii=False))


def mod_text(status: int | None, text: str) -> str:
    """An answer in the mod server's words: the body of a 2xx answer as it is; ``Error: HTTP
    <status> — <body>`` otherwise (its ``_handle_error``); no answer at all is its connect error."""
    if status is None:
        return f"Error: Cannot connect to STS2_MCP mod. Is the game running with the mod enabled? ({text})"
    if 200 <= status < 300:
        return text
    return f"Error: HTTP {status} — {text}"


def refusal(prop: dict, status: str, ids: dict) -> ToolRefused:
    """The tool error of a proposal the pipeline did not execute."""
    if prop.get("refused"):
        return ToolRefused(prop["refused"]["code"], f"{prop['refused']['detail']}. Journal: {json.dumps(ids)}")
    guard = prop.get("guard")
    if guard:
        when = f" (attempt {guard['attempt_id']})" if guard.get("attempt_id") else ""
        lapse = guard.get("lapses_after") or {}
        return ToolRefused(
            "duplicate-refused",
            (
                f"not sent: {guard['pending_action']} {json.dumps(guard['pending_parameters'])} was accepted{when} on "
                f"this very state, which has not changed since, and still awaits its effect ('ok' means queued). It is "
                f"released by {guard['released_by']}; or, if nothing changes, after {lapse.get('reads')} reads over "
                f"{lapse.get('seconds')} s it may be sent again. Wait with wait_for_change or wait_until_actionable. "
                f"Journal: {json.dumps(ids)}"
            ),
        )
    return ToolRefused(
        "not-executed",
        f"the proposal was not executed ({status}: "
        f"{prop.get('reason') or 'no reason recorded'}). Journal: {json.dumps(ids)}",
    )


def check_args(tool: GameTool, arguments: object) -> dict:
    """The call's arguments, checked against the tool's parameters (types, required, choices),
    with the mod's defaults filled in; a refusal names the tool, the argument and the value."""
    if arguments is None:
        arguments = {}
    if not isinstance(arguments, dict):
        raise ToolRefused("invalid-argument", f"{tool.name}: arguments must be an object, got {arguments!r}")
    known = known_args(tool)
    unknown = sorted(set(arguments) - set(known))
    if unknown:
        raise ToolRefused(
            "invalid-argument",
            f"{tool.name}: unknown argument {unknown[0]!r} (known: {', '.join(known) or 'none'}); nothing was sent",
        )
    out = {}
    for p in tool.params:
        if p.name not in arguments or (arguments[p.name] is None and p.default is None):
            if p.default is REQUIRED:
                raise ToolRefused("invalid-argument", f"{tool.name}: {p.name} is required; nothing was sent")
            if p.default is not None:
                out[p.name] = p.default
            continue
        value = arguments[p.name]
        out[p.name] = _checked(tool, p.name, p.kind, value)
    if arguments.get("reason") is not None:
        if not isinstance(arguments["reason"], str) or len(arguments["reason"]) > 2000:
            raise ToolRefused(
                "invalid-argument", f"{tool.name}: reason must be a string of at most 2000 characters; nothing was sent"
            )
        out["reason"] = arguments["reason"]
    return out


def _checked(tool: GameTool, name: str, kind: type, value: object) -> object:
    def bad(wanted: str) -> ToolRefused:
        return ToolRefused("invalid-argument", f"{tool.name}: {name} must be {wanted}, got {value!r}; nothing was sent")

    if kind is int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise bad("an integer")
        if name == "profile_id" and value not in (1, 2, 3):
            raise bad("1, 2 or 3")
        if value < (1 if name == "limit" else 0):
            raise bad(f"an integer >= {1 if name == 'limit' else 0}")
        return value
    if kind is float:
        if (
            isinstance(value, bool)
            or not isinstance(value, (int, float))
            or not math.isfinite(value)
            or not 0 < value <= MAX_WAIT_S
        ):
            raise bad(f"a number of seconds in (0, {MAX_WAIT_S:g}]")
        return float(value)
    if not isinstance(value, str):
        raise bad("a string")
    if name in CHOICES and value not in CHOICES[name]:
        raise bad("one of " + ", ".join(repr(c) for c in CHOICES[name]))
    return value
