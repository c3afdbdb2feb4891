"""The tools that play: ``emulator_run``, ``emulator_step``, ``emulator_observe``,
``emulator_checkpoint`` and ``emulator_close`` (the evidence tools are in :mod:`.evidence`).

:class:`Tools` owns at most one :class:`~supervisor.mcp.shared.session.Playtest` at a time
(its profile: :func:`profile_for`) and the bridge to its policy (``mcp_pyboy``).
``call(name, arguments)`` is the one entry: it checks the arguments, refuses with a
:class:`~supervisor.mcp.shared.errors.ToolRefused` (or the emulator library's own error)
naming the reason, and returns an :class:`~supervisor.mcp.shared.args.Answer`.
State-changing requests go through the pipeline (the bridge); before one is handed over, an
emulator exit or crash resume since the last call is reported as the ``emulator-restarted``
refusal and nothing is sent.
"""

from __future__ import annotations

import os
from pathlib import Path

import zmq

from actors.emulator.recording.limits import RecordingLimits
from actors.emulator.recording.reader import RecordingReader
from actors.emulator.recording.rom import RomIdentity

from ..shared.args import Answer, Args
from ..shared.bridge import Bridge
from ..shared.errors import SessionGone, ToolRefused
from ..shared.session import Playtest, private_dir, remove_private
from ..shared.workspace import Workspace, admit
from . import evidence
from .schemas import LIMITS, TOOLS

MAX_STEP_FRAMES = 216_000
MAX_SAMPLES = 64
ACTORS = ("recorder", "emulator", "policy", "actuator", "observer")
INSTRUCTIONS = (
    "Playtest Game Boy ROMs of this workspace through gamerig's supervised pipeline: "
    "emulator_run, then emulator_step / emulator_observe / emulator_checkpoint; review and clip "
    "retained evidence with emulator_review / emulator_clip; emulator_recording stop, then "
    "emulator_close. Refusals start with a code; read them, do not retry blindly."
)


def profile_for(rom: Path, attempt: Path, runtime_dir: Path, bridge: str, record: bool, limits: dict) -> dict:
    """The session profile of one playtest (docs/mcp.md lists it)."""
    restart = {"restart": "permanent", "max_restarts": 5, "period_s": 30}
    return {
        "name": "mcp-playtest",
        "game": {"backend": "pyboy", "rom": str(rom), "timeout_s": 5, "poll_interval_s": 0.05},
        "policy": {"module": "mcp_pyboy", "settings": {"bridge": bridge, "server_pid": os.getpid()}},
        "capture": {"root": str(attempt)},
        "session": {"stop_on_run_end": False, "max_steps": None, "stuck_seconds": 0},
        "supervisor": {"runtime_dir": str(runtime_dir), "progress": "off"},
        "emulator": {
            "record": record,
            "recording_limits": limits,
            "checkpoint_every_frames": None,
            "step_timeout_s": 5,
        },
        "actors": {name: dict(restart) for name in ACTORS},
    }


class Tools:
    INSTRUCTIONS = INSTRUCTIONS

    def __init__(self, workspace: Workspace):
        self.ws = workspace
        self.private = private_dir()  # 0700: the bridge, profiles, logs
        self.zctx = zmq.Context()
        self.bridge = Bridge(self.zctx, f"ipc://{self.private / 'agent.sock'}")
        self.playtest: Playtest | None = None
        self.last_recording: Path | None = None
        self.handlers = {
            "emulator_run": self.run,
            "emulator_step": self.step,
            "emulator_observe": self.observe,
            "emulator_checkpoint": self.checkpoint,
            "emulator_close": self.close,
            "emulator_recording": self.recording,
            "emulator_review": self.review,
            "emulator_clip": self.clip,
        }
        assert set(self.handlers) == set(TOOLS)

    def listing(self) -> list[tuple[str, str, dict]]:
        """Every tool: (name, description, input schema)."""
        return [(name, text, schema) for name, (text, schema) in TOOLS.items()]

    def call(self, name: str, arguments: object) -> Answer:
        handler = self.handlers.get(name)
        if handler is None:
            raise ToolRefused("unknown-tool", f"no tool {name!r} (tools: {', '.join(TOOLS)})")
        known = tuple(TOOLS[name][1]["properties"])
        return handler(Args(name, arguments, known))

    def shutdown(self) -> None:
        """End a running session (its live recording cancelled) and remove the private files."""
        try:
            if self.playtest is not None:
                self.end_session("the MCP server shut down")
        finally:
            self.bridge.close()
            self.zctx.term()
            remove_private(self.private)

    # -- helpers --------------------------------------------------------------------------
    def _live(self) -> Playtest:
        p = self.playtest
        if p is None:
            raise SessionGone("no playtest is running; start one with emulator_run")
        if not p.alive() or p.stopping is not None:
            raise SessionGone(
                f"the playtest session has ended ({p.ended_reason()}); start a new one with "
                "emulator_run (its evidence stays readable: emulator_recording, emulator_review)"
            )
        p.catch_up()
        notice = p.take_notices()
        if notice:
            raise ToolRefused(
                "emulator-restarted",
                f"{notice}. Not sent. Check the state with emulator_observe, "
                'or start over with emulator_run {"restart": true}',
            )
        return p

    def act(self, kind: str, parameters: dict, tool: str, timeout_s: float = 30.0) -> dict:
        """A request through the pipeline; the accepted result's response, or the refusal."""
        p = self._live()
        rows = p.request(kind, parameters, tool, timeout_s)
        result = rows["result"]
        if result["outcome"] == "accepted":
            return rows
        response = result.get("response") or {}
        if result["outcome"] == "rejected":
            code = response.get("error_code") or "rejected"
            error = str(result.get("error"))
            error = error[len(code) + 2 :] if error.startswith(f"{code}: ") else error
            raise ToolRefused(code, f"{error} (attempt {result['attempt_id']}, recorded rejected)")
        notice = p.take_notices()
        raise ToolRefused(
            "outcome-unknown",
            f"{result.get('error')} (attempt {result['attempt_id']}, recorded "
            f"unknown; never resent){'; ' + notice if notice else ''}",
        )

    def _after(self, rows: dict) -> dict:
        """The observation the observer took after this request's result."""
        p = self.playtest
        attempt = rows["attempt"]["attempt_id"]
        p.wait(
            lambda: (
                p.observation.get("after_attempt_id") == attempt
                or p.observation["sequence"] > rows["result"]["sequence"]
            ),
            30,
            "the observation after the result",
        )
        return p.observation

    def _observed(self, obs: dict) -> tuple[dict, list[bytes]]:
        st = obs["state"]
        png = Path(self.playtest.record["capture_root"]) / st["frame_png"] if st.get("frame_png") else None
        data = {
            "frame": st["frame"],
            "held": st["held"],
            "memory": st["memory"],
            "branchId": st["branch_id"],
            "actionIndex": st["action_index"],
            "framePng": str(png) if png else None,
            "frameRgbaSha256": st["frame_rgba_sha256"],
            "rom": st["rom"],
            "cgb": st["cgb"],
            "observationId": obs["observation_id"],
        }
        return data, [png.read_bytes()] if png and png.is_file() else []

    def journal_of(self, rows: dict) -> dict:
        out = {
            "sessionDir": str(self.playtest.session_dir),
            "proposalId": rows["proposal"]["proposal_id"],
            "agentRequest": rows["request"],
        }
        if "attempt" in rows:
            out.update(
                attemptId=rows["attempt"]["attempt_id"],
                outcome=rows["result"]["outcome"],
                intentSequence=rows["attempt"]["sequence"],
                resultSequence=rows["result"]["sequence"],
            )
        return out

    def end_session(self, reason: str, tool: str = "emulator_close", cancel: bool = True) -> dict:
        """Cancel a live recording (kept; unless ``cancel`` is false: it was stopped), end the
        session, return the recording's status."""
        p, self.playtest = self.playtest, None
        if cancel and p.alive() and p.stopping is None and p.recording_path is not None:
            try:
                p.request("stop_recording", {"outcome": "cancelled", "reason": reason[:1000]}, tool)
            except ToolRefused:
                pass  # the emulator is gone: the restarted actor or the session's end finalizes it
        p.end(tool)
        status = None
        if p.recording_path is not None and p.recording_path.is_dir():
            status = RecordingReader(p.recording_path).status()
        return {
            "sessionDir": str(p.session_dir) if p.record else None,
            "journal": str(p.session_dir / "events.jsonl") if p.record else None,
            "endedBy": p.ended_reason(),
            "recording": status,
        }

    # -- the tools ------------------------------------------------------------------------
    def run(self, a: Args) -> Answer:
        rom = self.ws.rom(a.get("romPath"))
        restart, initial = a.flag("restart", False), a.integer("initialFrames", 0, 0, MAX_STEP_FRAMES)
        recording = a.mapping("recording")
        limits, budget = _recording_limits(recording)
        RomIdentity.from_bytes(rom.read_bytes())  # RomError: not a cartridge PyBoy runs
        if self.playtest is not None and self.playtest.alive() and self.playtest.stopping is None and not restart:
            raise ToolRefused(
                "session-running",
                "a playtest is already running; pass restart: true to replace "
                "it (its recording is cancelled, never deleted) or call emulator_close first",
            )
        target = self.ws.attempt_target((recording or {}).get("outputPath"))
        if recording is not None:
            admit(target.parent, budget)  # before a running session is replaced (again when created)
        replaced = None
        if self.playtest is not None:
            replaced = self.end_session("replaced by emulator_run restart", "emulator_run")
        attempt = self.ws.create_attempt(target, budget if recording is not None else None)
        runtime = self.private / f"runtime-{attempt.name}"
        profile = profile_for(rom, attempt, runtime, self.bridge.endpoint, recording is not None, limits)
        self.playtest = Playtest(self.private, attempt, profile, self.bridge, self.zctx)
        try:
            self.playtest.start()
        except ToolRefused:
            self.playtest.end("emulator_run")  # stops whatever did start; the attempt stays as evidence
            raise
        self.last_recording = self.playtest.recording_path
        data, images = self._observed(self.playtest.observation)
        if initial:
            rows = self.act(
                "step", {"buttons": [], "frames": initial, "samples": 0}, "emulator_run", 30 + initial / 1000
            )
            data, images = self._observed(self._after(rows))
        rec = RecordingReader(self.last_recording).status() if self.last_recording else None
        return Answer(
            {
                "romPath": str(rom),
                "attemptPath": str(attempt),
                "recordingPath": str(self.last_recording) if self.last_recording else None,
                "recording": rec and {k: rec[k] for k in ("sessionId", "status", "branchId", "limits")},
                "session": {
                    "sessionDir": str(self.playtest.session_dir),
                    "journal": str(self.playtest.session_dir / "events.jsonl"),
                },
                "replaced": replaced,
                **data,
            },
            images,
        )

    def step(self, a: Args) -> Answer:
        buttons = a.names("buttons", [])
        frames = a.integer("frames", 1, 1, MAX_STEP_FRAMES)
        samples = a.integer("sampleCount", 0, 0, MAX_SAMPLES)
        rows = self.act(
            "step", {"buttons": buttons, "frames": frames, "samples": samples}, "emulator_step", 30 + frames / 1000
        )
        response = rows["result"]["response"]
        span = dict(response.get("recording_span") or {})
        from_pin = span.pop("fromPrefixPin", None)
        root = Path(self.playtest.record["capture_root"])
        sampled = [
            {
                "frame": s.get("frame"),
                "rgbaSha256": s.get("rgbaSha256"),
                "png": str(root / s["png"]) if s.get("png") else None,
            }
            for s in response.get("samples") or []
        ]
        data, images = self._observed(self._after(rows))
        seen = {data["frameRgbaSha256"]}
        for s in sampled:
            if s["png"] and s["rgbaSha256"] not in seen and Path(s["png"]).is_file():
                seen.add(s["rgbaSha256"])
                images.append(Path(s["png"]).read_bytes())
        return Answer(
            {
                "frame": response["frame"],
                "held": response["held"],
                "pressed": response["pressed"],
                "released": response["released"],
                "samples": sampled,
                "recordingSpan": span or None,
                "fromPrefixPin": from_pin,
                "automaticCheckpoint": response.get("checkpoint"),
                "observation": data,
                "journal": self.journal_of(rows),
            },
            images,
        )

    def observe(self, a: Args) -> Answer:
        rows = self._live().request("observe", {}, "emulator_observe", now=True)
        data, images = self._observed(rows["observation"])
        return Answer({**data, "journal": self.journal_of(rows)}, images)

    def checkpoint(self, a: Args) -> Answer:
        action = a.text("action", choices=("save", "restore"))
        if action == "save":
            a.only("action", "label")
            label = a.text("label", None)
            rows = self.act("checkpoint", {"label": label}, "emulator_checkpoint")
            return Answer({"checkpoint": rows["result"]["response"]["checkpoint"], "journal": self.journal_of(rows)})
        a.only("action", "checkpointId")
        rows = self.act("restore", {"checkpoint_id": a.text("checkpointId")}, "emulator_checkpoint")
        data, images = self._observed(self._after(rows))
        return Answer(
            {"branch": rows["result"]["response"]["branch"], "observation": data, "journal": self.journal_of(rows)},
            images,
        )

    def close(self, a: Args) -> Answer:
        if self.playtest is None:
            return Answer(
                {
                    "closed": False,
                    "detail": "no playtest was running",
                    "recordingPath": str(self.last_recording) if self.last_recording else None,
                }
            )
        ended = self.end_session("closed by emulator_close")
        return Answer(
            {"closed": True, "recordingPath": str(self.last_recording) if self.last_recording else None, **ended}
        )

    def recording(self, a: Args) -> Answer:
        return evidence.recording(self, a)

    def review(self, a: Args) -> Answer:
        return evidence.review(self.ws, a)

    def clip(self, a: Args) -> Answer:
        return evidence.clip(self, a)


def _recording_limits(recording: dict | None) -> tuple[dict, int]:
    """``recording``'s limits (checked: unknown keys and bad values are refused by name) and
    its byte budget."""
    if recording is not None:
        unknown = sorted(set(recording) - set(LIMITS) - {"outputPath"})
        if unknown:
            raise ToolRefused(
                "invalid-argument",
                f"emulator_run: recording.{unknown[0]} is not a recording "
                f"option (known: outputPath, {', '.join(LIMITS)})",
            )
    limits = {k: v for k, v in (recording or {}).items() if k != "outputPath"}
    return limits, RecordingLimits.from_options(limits).max_bytes  # InvalidOption names the bad key
