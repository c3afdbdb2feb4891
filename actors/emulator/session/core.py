"""The emulator session core: one PyBoy machine, its route, and (optionally) its recording.

Typical use (the actor wraps exactly these calls)::

    session = EmulatorSession(rom_bytes, recording=RecordingOptions(parent=Path("run/capture/x")))
    session.step([], 120)                       # boot
    obs = session.observe()                     # frame, PNG, RGBA hash, memory, held, ROM
    result = session.step({"right"}, 60, samples=2)   # result.span -> exact recording span
    session.step([], 1); info = session.checkpoint("before the door")
    session.restore(info.checkpoint_id)         # fresh PyBoy, new branch
    session.stop("passed", "door opened"); session.close()

After a crash, a new process continues with
``resume_from_latest_checkpoint(recording_path, rom_bytes)``.

Route model: ``frame`` counts native frames since boot along the current branch and
``action_index`` counts normalized actions (one per step) along it. A restore starts a new
branch at the checkpoint's (action index, frame); earlier branches stay in the journal.
"""

from __future__ import annotations

import secrets
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from ..recording import journal as j
from ..recording.errors import (
    CheckpointNotNeutral,
    InvalidOption,
    RecordingError,
    SessionClosed,
)
from ..recording.frames import PngEncoder, rgba_sha256
from ..recording.identity import build_identity
from ..recording.limits import RecordingLimits
from ..recording.reader import EXPORT_DEFAULT_LIMIT, export_page, summarize
from ..recording.results import BranchInfo, CheckpointInfo, ObservedFrame, RecordingSpan, StepResult
from ..recording.rom import RomIdentity, battery_ram_size
from ..recording.writer import OUTCOMES, Recording, now
from . import checkpoints as ck
from .battery import (
    BATTERY_DIR,
    BATTERY_FILE,
    START_FILE,
    BatterySave,
    describe,
    file_sizes,
    read_previous,
    write_atomically,
)
from .buttons import normalize, ordered
from .machine import Machine
from .sampling import FrameSampler, sample_points
from .score import ScoreSpec

MAX_REASON = 1000
MAX_STEP_FRAMES = 216_000


@dataclass(frozen=True)
class RecordingOptions:
    """Where and how to record. ``path`` must be unused; otherwise a unique dir under ``parent``."""

    path: Path | None = None
    parent: Path | None = None
    limits: RecordingLimits = field(default_factory=RecordingLimits)
    fsync_inputs: bool = False  # fsync each input line before its frames run (slower)


def _check_int(name: str, value: object, low: int, high: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise InvalidOption(name, value, f"an integer {low}..{high}")
    return value


class EmulatorSession:
    """One emulator instance plus its route, checkpoints and optional recording."""

    def __init__(
        self,
        rom: bytes,
        *,
        cgb: bool | None = None,
        sound: bool = False,
        memory_regions: Mapping[str, tuple[int, int]] | None = None,
        recording: RecordingOptions | None = None,
        battery_dir: Path | None = None,
        checkpoint_every_frames: int | None = None,
        battery: BatterySave | None = None,
        score: ScoreSpec | None = None,
    ):
        """``battery``: battery RAM to start from (a cartridge with a battery only); without
        it, ``battery_dir/battery.ram`` is loaded when present, else the RAM starts empty.
        ``score``: the values to read after every step and observe (``session/score.py``)."""
        identity = RomIdentity.from_bytes(rom)
        size = battery_ram_size(rom) if identity.battery else 0
        if battery is not None and len(battery.data) != size:
            raise InvalidOption(
                "battery",
                f"{battery.source} ({len(battery.data):,} bytes)",
                f"{size:,} bytes, this cartridge's battery RAM size"
                if size
                else "nothing: this cartridge has no battery",
            )
        start = battery.data if battery else read_previous(battery_dir, size)
        rec = None
        if recording is not None:
            cgb_mode = identity.prefers_cgb if cgb is None else bool(cgb)
            extra = {
                "batteryLoaded": battery.to_json() if battery else None,
                "batteryStart": describe(start or bytes(size)) if size else None,
            }
            rec = Recording.create(
                identity, cgb_mode, recording.limits, path=recording.path, parent=recording.parent, extra=extra
            )
        self._setup(
            rom,
            cgb,
            sound,
            memory_regions,
            rec,
            battery_dir,
            checkpoint_every_frames,
            fsync_inputs=bool(recording and recording.fsync_inputs),
            start_ram=start,
            score=score,
        )
        if rec is not None and size:
            ram = self._machine.battery_ram()  # what the cartridge starts with, counted from now
            rec.charge(write_atomically(rec.path / BATTERY_DIR / START_FILE, ram))
            self._save_battery()
            rec.write_manifest()

    def _setup(
        self,
        rom,
        cgb,
        sound,
        memory_regions,
        rec,
        battery_dir,
        every,
        fsync_inputs=False,
        start_ram: bytes | None = None,
        score: ScoreSpec | None = None,
    ):
        self._rom = bytes(rom)
        self._sound = sound
        self._recording: Recording | None = rec
        self._fsync_inputs = fsync_inputs
        self.battery_dir = Path(battery_dir) if battery_dir else (rec.path / BATTERY_DIR if rec else None)
        battery = self.battery_dir / BATTERY_FILE if self.battery_dir else None
        rtc = battery.with_suffix(".rtc") if battery else None
        self._machine = Machine(
            self._rom,
            cgb=cgb,
            sound=sound,
            battery_ram=start_ram,
            rtc=rtc.read_bytes() if rtc and rtc.is_file() else None,
        )
        self.rom: RomIdentity = self._machine.identity
        self.cgb: bool = self._machine.cgb
        self.memory_regions = dict(memory_regions or {})
        for name, (address, length) in self.memory_regions.items():
            _check_int(f"memory_regions[{name}].address", address, 0, 0xFFFF)
            _check_int(f"memory_regions[{name}].length", length, 1, 0x10000 - address)
        self.checkpoint_every_frames = (
            None if every is None else _check_int("checkpoint_every_frames", every, 1, MAX_STEP_FRAMES)
        )
        self.session_id = rec.session_id if rec else secrets.token_hex(16)
        self.branch_id, self.action_index, self.frame = "branch-0001", 0, 0
        self._neutral_frames = 0
        self._frames_since_checkpoint = 0
        self._frames_run = 0
        self._emulation_before = 0.0  # tick time of machines replaced by restores
        self._png = PngEncoder()
        self._sampler = FrameSampler(self._png, rec.limits.recent_frame_count if rec else 12)
        self.resume_info: dict | None = None  # set by resume_from_latest_checkpoint
        self.score = score
        self.closed = False

    # ---- properties ----------------------------------------------------------------------
    @property
    def emulation_s(self) -> float:
        """Wall time spent inside PyBoy's tick by this session (all machines since a restore)."""
        return self._emulation_before + self._machine.run_s

    @property
    def frames_executed(self) -> int:
        """Native frames run on every branch (with a recording: since it was created, across
        resumes) -- what ``maxFrames`` limits."""
        return self._recording.frames_executed if self._recording is not None else self._frames_run

    @property
    def held(self) -> frozenset[str]:
        return self._machine.held

    @property
    def recording(self) -> Recording | None:
        """The recording this session writes (None without one)."""
        return self._recording

    @property
    def recording_path(self) -> Path | None:
        return self._recording.path if self._recording else None

    def _require_open(self, operation: str) -> None:
        if self.closed:
            raise SessionClosed(operation)

    def _require_recording(self, operation: str) -> Recording:
        self._require_open(operation)
        if self._recording is None:
            raise RecordingError(f"cannot {operation}: this session has no recording")
        self._recording.require_live(operation)
        return self._recording

    # ---- observe -------------------------------------------------------------------------
    def observe(self) -> ObservedFrame:
        """The current frame (PNG + RGBA hash), named memory regions, held buttons, ROM identity."""
        self._require_open("observe")
        started = time.perf_counter()
        rgba = self._machine.rgba()
        digest, png = rgba_sha256(rgba), self._png.encode(rgba)
        memory = {name: self._machine.read(address, length) for name, (address, length) in self.memory_regions.items()}
        png_path = None
        rec = self._recording
        if rec is not None and rec.status == "live" and rec.store_frame(digest, png):
            png_path = rec.frames.relative(digest)
            rec.append(
                j.OBSERVATION,
                {
                    "branchId": self.branch_id,
                    "actionIndex": self.action_index,
                    "frame": self.frame,
                    "rgbaSha256": digest,
                    "png": png_path,
                    "executionMs": self._account(started),
                },
            )
        return ObservedFrame(
            self.frame, png, digest, memory, tuple(ordered(self.held)), self.rom, self.cgb, png_path, self.read_score()
        )

    def read_score(self) -> dict | None:
        """The score's evidence block now (``ScoreSpec.evaluate``); None without a score section."""
        if self.score is None:
            return None
        return self.score.evaluate(self._machine.read_value, self._machine.wrapper_value)

    def flush_evidence(self) -> None:
        """Wait until every frame queued for the recording is on disk (PNG writes are async)."""
        if self._recording is not None:
            self._recording.frames.flush()

    def _account(self, started: float) -> float:
        elapsed = round((time.perf_counter() - started) * 1000, 3)
        if self._recording is not None:
            self._recording.execution_ms += elapsed
        return elapsed

    # ---- step ----------------------------------------------------------------------------
    def step(
        self, buttons: Iterable[str], frames: int, samples: int = 0, *, attempt_id: str | None = None
    ) -> StepResult:
        """Hold exactly ``buttons`` for ``frames`` native frames; sample evenly (endpoint included).
        ``attempt_id``: the session journal's ``action_attempt`` that asked for this step (the
        emulator actor passes it), kept in the ``input`` row so the recording names its intent."""
        self._require_open("step")
        wanted = normalize(buttons)
        _check_int("frames", frames, 1, MAX_STEP_FRAMES)
        _check_int("samples", samples, 0, frames)
        started = time.perf_counter()
        rec = self._recording
        every = rec.limits.sample_every_frames if rec else None
        points, requested = sample_points(self.frame, frames, samples, every)
        if rec is not None:
            rec.require_live("step")
            rec.check_step(frames, len(points) + 3)
        from_pin = rec.pin if rec else None
        from_frame, action = self.frame, self.action_index + 1
        pressed, released = ordered(wanted - self.held), ordered(self.held - wanted)
        if rec is not None:
            rec.append(
                j.INPUT,
                {
                    "branchId": self.branch_id,
                    "actionIndex": action,
                    "buttons": ordered(wanted),
                    "pressed": pressed,
                    "released": released,
                    "frames": frames,
                    "fromFrame": from_frame,
                    "toFrame": from_frame + frames,
                    "samplesRequested": samples,
                    **({"attemptId": attempt_id} if attempt_id else {}),
                },
            )
            if self._fsync_inputs:
                rec.sync()
            rec.frames_executed += frames
            rec.action_count += 1
        self._machine.hold(wanted)
        captured = self._sampler.run(self._machine, rec, self.branch_id, from_frame, frames, points, requested, action)
        self._after_step(wanted, frames, action, from_frame + frames)
        span = None
        if rec is not None:
            rec.append(
                j.STEPPED,
                {
                    "branchId": self.branch_id,
                    "actionIndex": action,
                    "toFrame": self.frame,
                    "executionMs": self._account(started),
                },
            )
            span = RecordingSpan(
                rec.resolved,
                self.session_id,
                self.branch_id,
                action - 1,
                action,
                from_frame,
                self.frame,
                rec.pin,
                from_pin,
            )
        score = self.read_score()  # before an automatic checkpoint: the values the step left
        auto = self._maybe_auto_checkpoint()
        return StepResult(
            self.frame, tuple(ordered(wanted)), tuple(pressed), tuple(released), tuple(captured), span, auto, score
        )

    def _after_step(self, wanted: frozenset[str], frames: int, action: int, to_frame: int) -> None:
        self.action_index, self.frame = action, to_frame
        self._frames_run += frames
        self._neutral_frames = self._neutral_frames + frames if not wanted else 0
        self._frames_since_checkpoint += frames

    # ---- checkpoints ---------------------------------------------------------------------
    def checkpoint(self, label: str | None = None, *, automatic: bool = False) -> CheckpointInfo:
        """Save a checkpoint; needs one neutral frame with no buttons held first."""
        rec = self._require_recording("save a checkpoint")
        if self.held or self._neutral_frames < 1:
            raise CheckpointNotNeutral(self.held, self._neutral_frames)
        if label is not None and (not isinstance(label, str) or len(label) > MAX_REASON):
            raise InvalidOption("label", label, f"a string of at most {MAX_REASON} characters")
        started = time.perf_counter()
        checkpoint_id = f"cp-{len(rec.checkpoints) + 1:04d}-{secrets.token_hex(4)}"
        header = {
            "identity": build_identity(self.rom.sha256, self.cgb),
            "checkpointId": checkpoint_id,
            "sessionId": self.session_id,
            "branchId": self.branch_id,
            "actionIndex": self.action_index,
            "frame": self.frame,
            "prefixPin": rec.pin,
            "label": label,
            "automatic": automatic,
            "createdAt": now(),
        }
        info = ck.store(rec, header, self._machine.save_state())
        event = rec.append_synced(j.CHECKPOINT, {**info.to_json(), "executionMs": self._account(started)})
        rec.checkpoints[checkpoint_id] = event
        rec.write_manifest()
        self._frames_since_checkpoint = 0
        return info

    def _maybe_auto_checkpoint(self) -> CheckpointInfo | None:
        every = self.checkpoint_every_frames
        if (
            every is None
            or self._frames_since_checkpoint < every
            or self.held
            or self._neutral_frames < 1
            or self._recording is None
        ):
            return None
        if not self._recording.room_for(256 * 1024):
            return None  # never let automatic checkpoints exhaust the evidence budget
        return self.checkpoint("automatic", automatic=True)

    def restore(self, checkpoint: str | Path, *, reason: str = "restore") -> BranchInfo:
        """Restore into a fresh PyBoy after every check; start and return a new branch.

        ``checkpoint`` is an id from this recording, or a path to a checkpoint file (which
        is still identity-checked but has no journal hash to compare with).
        """
        self._require_open("restore a checkpoint")
        rec = self._recording
        header, state, event, file_sha = ck.load(rec, checkpoint, build_identity(self.rom.sha256, self.cgb))
        started = time.perf_counter()
        fresh = Machine(self._rom, cgb=self.cgb, sound=self._sound)
        try:
            fresh.load_state(state, source=checkpoint)
        except BaseException:
            fresh.close()
            raise
        self._machine.close()
        self._emulation_before += self._machine.run_s
        self._machine = fresh
        parent = self.branch_id
        self.action_index, self.frame = header["actionIndex"], header["frame"]
        self._neutral_frames, self._frames_since_checkpoint = 1, 0
        checkpoint_id = event["checkpointId"] if event else None
        if rec is not None:
            rec.branch_count += 1
            self.branch_id = f"branch-{rec.branch_count:04d}"
            info = BranchInfo(self.branch_id, parent, checkpoint_id, self.action_index, self.frame, reason)
            source = (
                {}
                if event
                else {
                    "checkpointFile": str(Path(checkpoint).resolve()),
                    "fileSha256": file_sha,
                    "sourceSessionId": header.get("sessionId"),
                    "sourceCheckpointId": header.get("checkpointId"),
                }
            )
            rec.append_synced(j.BRANCH, {**info.to_json(), **source, "executionMs": self._account(started)})
            rec.write_manifest()
            return info
        return BranchInfo(parent, parent, checkpoint_id, self.action_index, self.frame, reason)

    def start_from_checkpoint(self, path: Path) -> BranchInfo:
        """Continue from a checkpoint file of an earlier session (``game.start_checkpoint``):
        restore it (identity-checked, reason ``start-checkpoint``; the branch event names the
        file, its SHA-256 and the session it came from) and, when recording, save it again as
        this recording's first checkpoint, so a crash resume comes back to it."""
        branch = self.restore(Path(path), reason="start-checkpoint")
        if self._recording is not None:
            self.checkpoint("start checkpoint")
        return branch

    # ---- recording control ---------------------------------------------------------------
    def status(self) -> dict:
        """Live status: route position, counts, budgets used, recent frames."""
        rec = self._recording
        base = {
            "sessionId": self.session_id,
            "closed": self.closed,
            "branchId": self.branch_id,
            "actionIndex": self.action_index,
            "frame": self.frame,
            "held": ordered(self.held),
            "rom": self.rom.to_json(),
            "cgb": self.cgb,
            "recording": None,
        }
        if rec is not None:
            base["recording"] = {
                "recordingPath": str(rec.path.resolve()),
                "status": rec.status,
                "outcome": rec.outcome,
                "reason": rec.reason,
                "limits": rec.limits.to_json(),
                "limitReached": rec.limit_reached,
                "actionCount": rec.action_count,
                "evidenceCount": rec.sample_count,
                "checkpointCount": len(rec.checkpoints),
                "branchCount": rec.branch_count,
                "framesExecuted": rec.frames_executed,
                "executionWallTimeMs": round(rec.execution_ms, 3),
                "gameTimeMs": round(rec.frames_executed * 1000 / 59.7275, 1),
                "bytesUsed": rec.bytes_used,
                "prefixPin": rec.pin,
                "recentFrames": list(self._sampler.recent),
            }
        return base

    def export(self, action_offset: int = 0, limit: int = EXPORT_DEFAULT_LIMIT) -> dict:
        """A page of normalized inputs and the latest min(limit, 32) samples (see reader.py)."""
        rec = self._recording
        if rec is None:
            raise RecordingError("cannot export: this session has no recording")
        summary = summarize(j.read_journal(rec.path / "events.jsonl").events)
        return {
            "recordingPath": str(rec.path.resolve()),
            "sessionId": self.session_id,
            "status": rec.status,
            **export_page(summary, action_offset, limit),
        }

    def live_recording(self, what: str = "clip") -> Recording:
        """This session's open recording, its evidence flushed, for a tool that reads it while
        the session runs (the emulator actor's live clip, ``actors.emulator.tools.clips.clip_live``):
        the session itself never imports the tools."""
        self._require_open(what)
        if self._recording is None:
            raise RecordingError(f"cannot {what}: this session has no recording")
        self.flush_evidence()
        return self._recording

    def stop(self, outcome: str | None = None, reason: str | None = None) -> dict:
        """Finalize the recording: failed/cancelled keep those statuses, others are ``stopped``."""
        rec = self._require_recording("stop")
        if outcome is not None and outcome not in OUTCOMES:
            raise InvalidOption("outcome", outcome, " | ".join(OUTCOMES))
        if reason is not None and (not isinstance(reason, str) or len(reason) > MAX_REASON):
            raise InvalidOption(
                "reason",
                reason if not isinstance(reason, str) else f"<{len(reason)} chars>",
                f"a string of at most {MAX_REASON} characters",
            )
        status = outcome if outcome in ("failed", "cancelled") else "stopped"
        rec.stop(outcome, reason, status, battery=self._save_battery())
        return self.status()

    def close(self) -> None:
        """Stop PyBoy (battery RAM saved into the session), cancel a live recording, release it."""
        if self.closed:
            return
        rec = self._recording
        if rec is not None and rec.status == "live":
            rec.stop("cancelled", "closed before stop", "cancelled", battery=self._save_battery())
        self.closed = True
        self._sampler.close()
        battery = self._battery_path()
        before = file_sizes(battery)
        self._machine.close(battery)  # the same RAM again, and the RTC of a cart that has one
        if rec is not None:
            grown = sum(file_sizes(battery)) - sum(before)
            if grown and self._battery_charged():
                rec.charge(grown)
                rec.write_manifest()
            rec.close()

    # ---- battery -------------------------------------------------------------------------
    def battery_ram(self) -> bytes:
        """The cartridge's battery RAM now (empty for a cartridge without a battery)."""
        self._require_open("read the battery RAM")
        return self._machine.battery_ram()

    def _battery_path(self) -> Path | None:
        return self.battery_dir / BATTERY_FILE if self.battery_dir and self.rom.battery else None

    def _battery_charged(self) -> bool:
        rec = self._recording
        return bool(rec and self.battery_dir and self.battery_dir.resolve().is_relative_to(rec.path.resolve()))

    def _save_battery(self) -> dict | None:
        """Write ``battery.ram`` from the cartridge's RAM now (charged when it is in the
        recording); None for a cartridge without a battery."""
        path = self._battery_path()
        if path is None:
            return None
        ram = self._machine.battery_ram()
        grown = write_atomically(path, ram)
        if self._battery_charged():
            self._recording.charge(grown)
        return describe(ram)

    def __enter__(self) -> EmulatorSession:
        return self

    def __exit__(self, *exc) -> None:
        self.close()
