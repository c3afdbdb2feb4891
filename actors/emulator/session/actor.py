"""The emulator actor: one :class:`EmulatorSession` served over a ROUTER socket.

Lifecycle (``run`` calls them in order; ``python -m actors.emulator`` runs it):

* ``on_start`` — tells the recorder that the emulator started (its reply also proves the
  session directory exists), then opens the session: a fresh recording under
  ``<session_dir>/recording/``, or, when that recording already exists (this is a restart
  after a crash), ``resume_from_latest_checkpoint`` onto a new branch, and an
  ``emulator_resumed`` journal row with the lost interval. A fresh session starts from the
  profile's battery save (``game.battery_save``) and start checkpoint
  (``game.start_checkpoint``); ``emulator_started`` names both, with their SHA-256. Raises on a bad profile or ROM;
  ``run`` turns that into a recorded session stop instead of a restart loop.
* ``serve`` — answers ``emulator_observe``, ``emulator_step`` (alone or in an
  ``emulator_step_batch``), ``emulator_checkpoint``, and an agent's ``emulator_restore``,
  ``emulator_stop_recording`` and ``emulator_clip`` (a GIF of the live recording, docs/mcp.md)
  until the supervisor asks the actor to stop. Exceptions become ``emulator_error`` replies
  in exactly one place (``_dispatch``); the actor itself never dies of a bad request.
* ``on_stop`` — records ``emulator_stats`` (requests served, frame reached, and the share of
  the time from its first request to its last reply it spent working: ``busy_percent``),
  finalizes the recording (status ``stopped``, the session's stop reason) and closes PyBoy,
  which writes battery RAM into the recording (and, with ``game.battery_mode:
  load-and-keep``, back to ``game.battery_save``: ``emulator_battery_kept``). If the process is killed
  instead, the next start resumes.
"""

from __future__ import annotations

import collections
import dataclasses
import logging
import os
import time
import uuid
from pathlib import Path

import zmq

from actors.runtime.actor import ActorContext
from actors.runtime.transport import RequestFailed, decode_or_count, send_envelope
from protocol import events as ev
from protocol import from_emulator as rep
from protocol import to_emulator as req
from protocol.actor_to_supervisor import Heartbeat
from protocol.errors import ProtocolError
from protocol.journal import iter_lines

from ..cartridge.layout import DEMO_REGIONS, is_demo_cartridge
from ..recording.errors import (
    EmulatorError,
    InvalidButton,
    InvalidOption,
    LimitExceeded,
    RecordingError,
    RecordingStopped,
    SessionClosed,
)
from ..recording.rom import RomIdentity
from .battery import BATTERY_FILE, describe, write_atomically
from .config import ConfigProblem, EmulatorConfig
from .core import EmulatorSession, RecordingOptions
from .resume import resume_from_latest_checkpoint

log = logging.getLogger("emulator")

RECORDING_DIR = "recording"
REPLY_CACHE = 64
#: errors a step raises before any frame runs: the emulator is unchanged
REFUSED_BEFORE_RUNNING = (InvalidButton, InvalidOption, LimitExceeded, RecordingStopped, SessionClosed)


class EmulatorActor:
    def __init__(self, ctx: ActorContext, config: EmulatorConfig, clip_maker=None):
        self.clip_maker = clip_maker  # (recording, request, workspace) -> clip: given by the entry point
        self.ctx, self.config = ctx, config
        self.session: EmulatorSession | None = None
        self.recording_dir = Path(ctx.session_dir) / RECORDING_DIR
        self.recorder = ctx.recorder()
        self.replies: collections.OrderedDict[tuple[str, str], object] = collections.OrderedDict()
        self.handlers = {
            req.Observe: self.on_observe,
            req.Step: self.on_step,
            req.StepBatch: self.on_step_batch,
            req.Checkpoint: self.on_checkpoint,
            req.Restore: self.on_restore,
            req.StopRecording: self.on_stop_recording,
            req.Clip: self.on_clip,
        }
        self.first_request_at: float | None = None  # for emulator_stats: how busy it was kept
        self.last_done_at = self.first_cpu = self.last_cpu = 0.0
        self.busy_s = 0.0
        self.requests = 0
        self.limit_refused = False  # a step refused by a recording budget since the last reply

    # -- lifecycle ------------------------------------------------------------------------
    def on_start(self) -> None:
        rom = RomIdentity.from_bytes(self.config.rom)
        regions = dict(DEMO_REGIONS) if is_demo_cartridge(rom.title) else {}
        regions.update(self.config.memory_regions)
        self._journal(
            ev.EmulatorStarted,
            {
                "start_count": self.ctx.start_count,
                "pid": os.getpid(),
                "rom": rom.to_json(),
                "rom_source": self.config.rom_source,
                "record": self.config.record,
                "recording": self._rel(self.recording_dir) if self.config.record else None,
                "memory_regions": {k: list(v) for k, v in regions.items()},
                "checkpoint_every_frames": self.config.checkpoint_every_frames,
                "frame_budget": self.config.limits.max_frames if self.config.record else None,
                "start_checkpoint": self.config.start_checkpoint,
                "battery_save": self._battery_json(),
                "score": self.config.score.to_json() if self.config.score else None,
            },
            key=uuid.uuid4().hex,
        )
        self.session = self._open(regions)
        if self.session.resume_info is not None:
            info = self.session.resume_info
            self._journal(
                ev.EmulatorResumed,
                {
                    "start_count": self.ctx.start_count,
                    "recording": self._rel(self.recording_dir),
                    "lost_interval": info["lostInterval"],
                    "branch": info["branch"],
                },
                key=f"emulator_resumed:{info['branch']['branchId']}",
            )
            log.info("resumed on %s after losing %s", info["branch"]["branchId"], info["lostInterval"])
        elif not self.config.record and self.ctx.start_count > 1:  # 1 = the first start
            self._journal(
                ev.EmulatorResumed,
                {
                    "start_count": self.ctx.start_count,
                    "recording": None,
                    "lost_interval": {"fromFrame": 0, "toFrame": None, "reason": "recording off: restarted from boot"},
                    "branch": None,
                },
                key=f"emulator_restarted:{self.ctx.start_count}:{uuid.uuid4().hex}",
            )
        self._update_status()

    def _open(self, regions: dict) -> EmulatorSession:
        """Resume the session's recording after a crash, or open a fresh session: from the
        battery save and the start checkpoint of the profile, when it names them."""
        c = self.config
        common = {
            "sound": c.sound,
            "memory_regions": regions,
            "checkpoint_every_frames": c.checkpoint_every_frames,
            "score": c.score,
        }
        if c.record and (self.recording_dir / "events.jsonl").exists():
            return resume_from_latest_checkpoint(self.recording_dir, c.rom, fsync_inputs=c.fsync_inputs, **common)
        if c.record:
            options = RecordingOptions(path=self.recording_dir, limits=c.limits, fsync_inputs=c.fsync_inputs)
            session = EmulatorSession(c.rom, cgb=c.cgb, recording=options, battery=c.battery, **common)
        else:
            session = EmulatorSession(
                c.rom, cgb=c.cgb, battery_dir=Path(self.ctx.session_dir) / "battery", battery=c.battery, **common
            )
        if c.start_checkpoint is not None:
            try:
                session.start_from_checkpoint(Path(c.start_checkpoint["path"]))
            except BaseException:
                session.close()
                raise
        return session

    def _battery_json(self) -> dict | None:
        c = self.config
        if c.battery_path is None:
            return None
        loaded = (
            c.battery.to_json()
            if c.battery
            else {"source": str(c.battery_path.resolve()), "sha256": None, "bytes": 0, "absent": True}
        )
        return {**loaded, "mode": c.battery_mode}

    def _keep_battery(self, session: EmulatorSession) -> None:
        """``game.battery_mode: load-and-keep``: the session's final battery RAM replaces
        ``game.battery_save`` (atomically), and a row says which bytes were written."""
        c = self.config
        if c.battery_mode != "load-and-keep" or c.battery_path is None or session.battery_dir is None:
            return
        source = session.battery_dir / BATTERY_FILE
        if not source.is_file():
            return
        data = source.read_bytes()
        write_atomically(c.battery_path, data)
        try:
            self._journal(
                ev.EmulatorBatteryKept,
                {"path": str(c.battery_path.resolve()), **describe(data)},
                key=f"emulator_battery_kept:{self.ctx.start_count}:{os.getpid()}",
                deadline_s=2,
            )
        except RequestFailed as exc:
            log.warning("emulator_battery_kept not recorded: %s", exc)

    def serve(self) -> None:
        sock = self.ctx.zctx.socket(zmq.ROUTER)
        sock.setsockopt(zmq.LINGER, 0)
        sock.bind(self.ctx.endpoints["emulator"])
        try:
            while not self.ctx.stopping.is_set():
                if sock.poll(200):
                    started = time.perf_counter()
                    if self.first_request_at is None:
                        self.first_request_at, self.first_cpu = started, time.process_time()
                    self._dispatch(sock, sock.recv_multipart())
                    self.last_done_at, self.last_cpu = time.perf_counter(), time.process_time()
                    self.busy_s += self.last_done_at - started
                    self.requests += 1
        finally:
            sock.close(0)

    def on_stop(self) -> None:
        session, self.session = self.session, None
        try:
            self._record_stats(session)
            if session is not None:
                if session.recording_path is not None and not session.closed:
                    try:
                        session.stop(None, stop_reason(self.ctx.session_dir))
                    except RecordingStopped:
                        pass
                session.close()
                self._keep_battery(session)
        finally:
            self.recorder.close()

    # -- requests -------------------------------------------------------------------------
    def _dispatch(self, sock: zmq.Socket, frames: list[bytes]) -> None:
        """Decode, run the handler, and reply exactly once; errors become ``emulator_error``."""
        routing, data = frames[:-1], frames[-1]
        env = decode_or_count(data, self.ctx.counters, "emulator")
        if env is None:
            return
        reply = self._answer_once(env.body)
        send_envelope(
            sock,
            dataclasses.replace(reply, reply_to=env.id),
            session=self.ctx.session_id,
            sender=self.ctx.name,
            routing=routing,
        )
        self._update_status()
        if self.limit_refused:  # a budget ran out: the progress line shows it now, not a beat later
            self.limit_refused = False
            self.ctx.outbox.put(Heartbeat(actor=self.ctx.name, counters=dict(self.ctx.status)))

    def _answer_once(self, body) -> object:
        """The reply to ``body``; a repeated read or step id gets its first reply again."""
        key = _dedupe_key(body)
        reply = self.replies.get(key) if key else None
        if reply is None:
            reply = self.answer(body)
            if key and not isinstance(reply, rep.EmulatorErrorReply):
                self.replies[key] = reply
                while len(self.replies) > REPLY_CACHE:
                    self.replies.popitem(last=False)
        return reply

    def answer(self, body) -> object:
        """The reply to one request (no dedupe: ``_answer_once`` keeps first replies)."""
        handler = self.handlers.get(type(body))
        if handler is None:
            return rep.EmulatorErrorReply(
                reply_to="", code="unexpected-type", message=f"the emulator does not take {body.TYPE!r}"
            )
        before = (self.session.branch_id, self.session.action_index)
        try:
            return handler(body)
        except EmulatorError as exc:
            self.limit_refused = self.limit_refused or isinstance(exc, LimitExceeded)
            unchanged = before == (self.session.branch_id, self.session.action_index)
            effect = "none" if isinstance(exc, REFUSED_BEFORE_RUNNING) and unchanged else "unknown"
            if not isinstance(body, req.Step):
                effect = "none"
            return rep.EmulatorErrorReply(reply_to="", code=exc.code, message=str(exc), effect=effect)
        except Exception as exc:  # a bug or a PyBoy failure: answer, log, keep serving
            log.exception("%s failed", body.TYPE)
            return rep.EmulatorErrorReply(
                reply_to="",
                code="internal-error",
                message=f"{type(exc).__name__}: {exc}",
                effect="unknown" if isinstance(body, req.Step) else "none",
            )

    def on_observe(self, m: req.Observe) -> rep.Observed:
        s = self.session
        obs = s.observe()
        s.flush_evidence()
        return rep.Observed(
            reply_to="",
            frame=obs.frame,
            frame_png=self._frame_rel(obs.png_path),
            frame_rgba_sha256=obs.rgba_sha256,
            memory={name: data.hex() for name, data in obs.memory.items()},
            held=list(obs.held),
            rom=obs.rom.to_json(),
            cgb=obs.cgb,
            branch_id=s.branch_id,
            action_index=s.action_index,
            recording=self._rel(self.recording_dir) if s.recording_path else None,
            score=obs.score,
        )

    def on_step(self, m: req.Step) -> rep.Stepped:
        result = self.session.step(m.buttons, m.frames, m.samples, attempt_id=m.attempt_id or None)
        if result.samples:
            self.session.flush_evidence()
        samples = [{**sample.to_json(), "png": self._frame_rel(sample.png_path)} for sample in result.samples]
        return rep.Stepped(
            reply_to="",
            attempt_id=m.attempt_id,
            frame=result.frame,
            held=list(result.held),
            pressed=list(result.pressed),
            released=list(result.released),
            samples=samples,
            span=result.span.to_json() if result.span else None,
            checkpoint=result.checkpoint.to_json() if result.checkpoint else None,
            score=result.score,
        )

    def on_step_batch(self, m: req.StepBatch) -> rep.SteppedBatch:
        """Each step in order, answered exactly as if sent alone (see ``StepBatch``)."""
        out = []
        for n, item in enumerate(m.steps):
            try:
                reply = self._answer_once(req.Step.from_body(item))
            except ProtocolError as exc:
                reply = rep.EmulatorErrorReply(reply_to="", code="bad-request", message=f"steps[{n}]: {exc}")
            out.append(reply.to_item())
        return rep.SteppedBatch(reply_to="", replies=out)

    def on_checkpoint(self, m: req.Checkpoint) -> rep.CheckpointSaved:
        info = self.session.checkpoint(m.label)
        return rep.CheckpointSaved(reply_to="", checkpoint=info.to_json())

    def on_restore(self, m: req.Restore) -> rep.Restored:
        """An agent's restore (supervisor/mcp): a checkpoint of this recording, a new branch."""
        return rep.Restored(reply_to="", branch=self.session.restore(m.checkpoint_id).to_json())

    def on_stop_recording(self, m: req.StopRecording) -> rep.RecordingFinalized:
        """An agent's ``emulator_recording stop`` (supervisor/mcp): finalize with its outcome."""
        return rep.RecordingFinalized(reply_to="", status=self.session.stop(m.outcome, m.reason))

    def on_clip(self, m: req.Clip) -> rep.ClipMade:
        """An agent's ``emulator_clip`` of the live recording (supervisor/mcp): this writer makes it."""
        if self.clip_maker is None:
            raise RecordingError("this emulator actor was started without a clip maker")
        return rep.ClipMade(reply_to="", clip=self.clip_maker(self.session.live_recording(), m.request, m.workspace))

    def _record_stats(self, session: EmulatorSession | None) -> None:
        """An ``emulator_stats`` row: how busy the pipeline kept this emulator (never fatal)."""
        if self.first_request_at is None or session is None:
            return
        wall = self.last_done_at - self.first_request_at  # first request to last reply
        try:
            self._journal(
                ev.EmulatorStats,
                {
                    "start_count": self.ctx.start_count,
                    "requests": self.requests,
                    "frame": session.frame,
                    "actions": session.action_index,
                    "busy_s": round(self.busy_s, 3),
                    "wall_s": round(wall, 3),
                    "cpu_s": round(self.last_cpu - self.first_cpu, 3),
                    "emulation_s": round(session.emulation_s, 3),
                    "busy_percent": round(100 * self.busy_s / wall, 1) if wall > 0 else None,
                },
                key=f"emulator_stats:{self.ctx.start_count}:{os.getpid()}",
                deadline_s=2,
            )
        except RequestFailed as exc:
            log.warning("emulator_stats not recorded: %s", exc)

    # -- helpers --------------------------------------------------------------------------
    def _journal(self, kind: type[ev.Event], fields: dict, key: str, deadline_s: float = 60) -> None:
        """Append a row of ``kind`` to the session journal (waits for the recorder; raises if
        it never answers)."""
        self.recorder.record(kind.from_fields(fields), key, deadline_s=deadline_s)

    def _rel(self, path: Path) -> str:
        return os.path.relpath(path, self.ctx.capture_root)

    def _frame_rel(self, png_path: str | None) -> str | None:
        return self._rel(self.recording_dir / png_path) if png_path else None

    def _update_status(self) -> None:
        s = self.session
        if s is not None:
            self.ctx.status.update(
                frame=s.frame,
                branch=s.branch_id,
                actions=s.action_index,
                frames_run=s.frames_executed,
                frame_budget=self.config.limits.max_frames if self.config.record else None,
            )


def _dedupe_key(body) -> tuple[str, str] | None:
    if isinstance(body, req.Step) and body.attempt_id:
        return ("step", body.attempt_id)
    if isinstance(body, req.Observe) and body.read_id:
        return ("observe", body.read_id)
    return None


def stop_reason(session_dir: str) -> str:
    """The session's stop reason from the tail of its journal (read-only), for the recording."""
    reason = "the gamerig session stopped"
    path = os.path.join(session_dir, "events.jsonl")
    try:
        tail = max(0, os.path.getsize(path) - 65536)
        rows = [line.row for line in iter_lines(path, offset=tail) if isinstance(line.row, dict)]
    except OSError:
        return reason
    for row in reversed(rows):
        if row.get("event") == ev.SessionStopping.KIND:
            detail = f": {row['detail']}" if row.get("detail") else ""
            return f"{reason} ({row.get('reason')}{detail})"[:1000]
    return reason


def run(ctx: ActorContext, clip_maker=None) -> int:
    """The actor's main: start, serve, stop. A bad profile or ROM stops the session, recorded.
    ``clip_maker`` makes a GIF of the live recording (``tools.clips.clip_live``, wired by
    ``python -m actors.emulator``: this room does not import the tools)."""
    try:
        config = EmulatorConfig.from_profile(ctx.setting)
    except ConfigProblem as exc:
        return _fatal(ctx, "emulator_config", str(exc))
    actor = EmulatorActor(ctx, config, clip_maker)
    try:
        try:
            actor.on_start()
        except (EmulatorError, RequestFailed) as exc:
            return _fatal(ctx, "emulator_start_failed", f"{type(exc).__name__}: {exc}")
        actor.serve()
    finally:
        actor.on_stop()
    return 0


def _fatal(ctx: ActorContext, reason: str, detail: str) -> int:
    """Ask the supervisor to end the session and wait for it (a restart would fail the same way)."""
    log.error("%s: %s", reason, detail)
    ctx.request_stop(reason, detail)
    ctx.stopping.wait(30)
    return 0
