"""``supervisor mcp --game``: the STS2MCP mod's MCP tools, each call a step of a supervised session.

:class:`GameTools` owns one :class:`~.session.GameSession` (started at the first call, started
again if it ended; its profile: :func:`~.session.game_profile`) and answers the tools of
:mod:`.schemas`, their arguments checked by :mod:`.arguments`:

* **acting tools** (``combat_play_card``...; ``switch_profile``/``delete_profile`` as
  ``profiles:<verb>`` actions): the game is read afresh (an ``observe`` request: a journalled
  ``wait`` proposal saying ``read_now``, after which the observer reads at once, and a new
  observation), then the action is handed to the policy
  (``mcp_sts2``: :class:`actors.policy.mcp_sts2.Sts2AgentPolicy`) as the agent's proposal on that observation; the
  pipeline records it, fsyncs the intent, POSTs it once and records the result, and the
  observer reads the state after it. The answer is the game's reply in the mod server's words
  (the reply's JSON; ``Error: HTTP <status> — <body>`` for an HTTP error; :mod:`.replies`) and a second text,
  ``{"gamerig": ...}``, with the step's journal ids. A refused index or a guarded duplicate is
  a tool error (nothing sent); an unknown outcome is a tool error saying so (never resent).
* **reads**: ``get_game_state`` is a fresh observation, read at once (``format: "markdown"``
  adds the game's own rendering, read right after it); ``get_profile``, ``get_compendium``,
  ``search_wiki`` and ``list_profiles`` are read by this server and journalled as
  ``agent_read`` rows (the body, its SHA-256 and size, the HTTP status).
* **waiting**: ``wait_until_actionable`` and ``wait_for_change`` read at the observer's pace
  (``game.poll_interval_s``) until their condition holds or ``timeout_seconds`` pass.
* **multiplayer** (``mp_*``): refused, nothing sent.

Sessions are captured under ``<workspace>/artifacts/sts2/`` (:mod:`.session`).
"""

from __future__ import annotations

import hashlib
import json
import os
import time

import zmq

from actors.policy.context import digest
from actors.runtime.recorder_client import RecorderClient
from actors.runtime.transport import Counters, RequestFailed
from actors.sts2mcp import PROFILE_PREFIX, GameClient
from supervisor.rundir import endpoint_beside

from ..shared.args import Answer
from ..shared.bridge import Bridge
from ..shared.errors import SessionGone, ToolRefused
from ..shared.session import private_dir, remove_private
from ..shared.workspace import Workspace
from .arguments import check_args
from .replies import MULTIPLAYER, mod_text, refusal
from .schemas import ALL, GameTool, schema
from .session import CAPTURE, GameSession, actionable, game_profile

BODY_MAX = 512 * 1024  # the most of a read's body kept in its journal row
STEP_TIMEOUT_S = 30.0
INSTRUCTIONS = (
    "Play Slay the Spire 2 through gamerig: the STS2MCP mod's tools (get_game_state, menu_select, "
    "combat_play_card, ...), each action recorded and its intent fsynced before it reaches the "
    "game. After an action, wait_until_actionable returns the next state you can act on. "
    "Refusals start with a code (duplicate-refused, invalid-argument, outcome-unknown, "
    "mp-refused); nothing refused was sent."
)


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
            self.recorder = RecorderClient(
                self.zctx,
                endpoint_beside(s.record, "recorder"),
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
