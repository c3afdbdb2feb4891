"""Where the actuator sends actions: the HTTP game (any STS2MCP-speaking server), or the
emulator actor (``game.backend: pyboy``).

A sink has ``send(action, parameters, attempt_id) -> ActionOutcome`` (never raises, never
retries) and ``close()``.

The pyboy sink takes ``action: "step"`` with ``parameters: {"buttons": [...], "frames": N,
"samples": K}`` and sends exactly one ``emulator_step``:

* a ``emulator_stepped`` reply → ``accepted``; the response holds the frame, the button diff,
  the requested samples, the exact ``recording_span`` and, when the emulator reads a score
  (``emulator.score``), the ``score`` values the step left;
* an ``emulator_error`` reply with ``effect: none`` (the step was refused before any frame
  ran: bad button, limit reached, ...) → ``rejected``; with ``effect: unknown`` → ``unknown``;
* no reply within the deadline (the emulator hangs) → ``unknown``; never resent;
* the emulator process exited (the supervisor's ``actor_exit`` row, seen by the actuator
  through ``watch``/``abandon``) → ``unknown`` at once, without waiting out the deadline:
  its restart is known, so a reply from the process the step went to can never come.

An agent driving the session through the MCP server (supervisor/mcp, docs/mcp.md) also
proposes ``checkpoint {label}``, ``restore {checkpoint_id}``, ``stop_recording {outcome,
reason}`` and ``clip {request, workspace}``: each is sent exactly once as ``emulator_checkpoint``
/ ``emulator_restore`` / ``emulator_stop_recording`` / ``emulator_clip`` after its own fsynced
intent, with the outcomes above (a clip gets ``CLIP_EXTRA_S`` more time: up to 600 images).

Pipelined steps (proposals decided ahead, see ``actors.runtime.steps``) go out with ``submit``: the
steps whose intents were acknowledged together travel in one ``emulator_step_batch``, sent
without waiting for the previous reply, so the emulator runs them back to back; ``collect``
gathers the replies in order. Each step is still sent exactly once and only after its own
fsynced intent, and gets its own outcome. If the oldest batch gets no reply in time, the
socket is dropped (with anything still queued in it) and every step in flight is recorded
``unknown``.
"""

from __future__ import annotations

import collections
import time
from collections.abc import Callable

import zmq

import protocol
from actors.runtime.actor import ActorContext
from actors.runtime.transport import RequestFailed, connect_dealer, decode_or_count
from actors.sts2mcp import ActionOutcome, GameClient
from protocol.errors import ProtocolError
from protocol.from_emulator import (
    CheckpointSaved,
    ClipMade,
    EmulatorErrorReply,
    RecordingFinalized,
    Restored,
    Stepped,
    SteppedBatch,
)
from protocol.message import from_item
from protocol.to_emulator import Checkpoint, Clip, Restore, Step, StepBatch, StopRecording

STEP_ACTION = "step"
AGENT_ACTIONS = ("checkpoint", "restore", "stop_recording", "clip")  # sent alone, never pipelined
CLIP_EXTRA_S = 60.0  # a clip reads, verifies and encodes up to 600 retained PNGs
WATCH_S = 0.05  # a step sent alone checks this often whether the emulator has exited
EXITED = "the emulator process exited before replying (the supervisor restarts it)"


class HttpSink:
    def __init__(self, base_url: str, timeout_s: float):
        self.client = GameClient(base_url, timeout_s)

    def send(self, action: str, parameters: dict, attempt_id: str) -> ActionOutcome:
        return self.client.send_action(action, parameters, attempt_id)

    def close(self) -> None:
        self.client.close()


class EmulatorSink:
    def __init__(self, ctx: ActorContext, timeout_s: float):
        self.ctx = ctx
        self.client = ctx.client("emulator")
        self.timeout_s = timeout_s
        #: set by the actuator: reads the journal rows waiting and returns how many times the
        #: emulator process has exited so far (a step sent alone stops waiting when it grows)
        self.watch: Callable[[], int] | None = None
        self.socket: zmq.Socket | None = None  # for pipelined steps
        # message id -> (attempt ids, frames, sent at) of each step batch awaiting its reply
        self.in_flight: collections.OrderedDict[str, tuple[list[str], int, float]] = collections.OrderedDict()
        self._progress = 0.0  # when the oldest step in flight started to be the oldest

    def send(self, action: str, parameters: dict, attempt_id: str) -> ActionOutcome:
        start = time.monotonic()
        try:
            msg = step_message(action, parameters, attempt_id)
        except ValueError as exc:  # refused here: nothing was sent
            return ActionOutcome("rejected", None, {"error_code": "bad-action"}, str(exc), 0.0)
        deadline = self.timeout_s + getattr(msg, "frames", 0) / 1000  # slow carts still finish long steps
        if isinstance(msg, Clip):
            deadline += CLIP_EXTRA_S
        try:  # exactly one try: a step is never sent twice
            if self.watch is not None:
                return self._send_watched(msg, start, deadline)
            reply = self.client.request(msg, deadline_s=deadline, try_s=deadline, max_tries=1)
        except RequestFailed as exc:
            return ActionOutcome("unknown", None, None, f"no reply from the emulator: {exc}", _ms(start))
        except Exception as exc:  # noqa: BLE001 - never raise: an unexpected failure leaves the outcome unknown
            return ActionOutcome("unknown", None, None, f"{type(exc).__name__}: {exc}", _ms(start))
        return _outcome(reply, start)

    def _send_watched(self, msg: Step, start: float, deadline: float) -> ActionOutcome:
        """Send one step and wait for its reply, until the deadline or until the emulator
        process is known to have exited (``watch``), whichever comes first."""
        exits = self.watch()
        sock = connect_dealer(self.ctx.zctx, self.ctx.endpoints["emulator"])
        try:
            env = protocol.wrap(msg, session=self.ctx.session_id, sender=self.ctx.name)
            sock.send(protocol.encode(env))
            while (left := start + deadline - time.monotonic()) > 0:
                if sock.poll(int(min(left, WATCH_S) * 1000) + 1):
                    reply = decode_or_count(sock.recv(), self.ctx.counters, "emulator")
                    if reply is not None and getattr(reply.body, "reply_to", None) == env.id:
                        return _outcome(reply.body, start)
                elif self.watch() != exits:
                    return ActionOutcome(
                        "unknown",
                        None,
                        None,
                        f"{EXITED}; the step in flight is recorded unknown and never resent",
                        _ms(start),
                    )
            return ActionOutcome(
                "unknown",
                None,
                None,
                f"no reply from the emulator within {deadline:.1f}s; the step is recorded unknown and never resent",
                _ms(start),
            )
        finally:
            sock.close(0)  # drop the step if it still waits for a (dead) emulator

    # -- pipelined steps ------------------------------------------------------------------
    def submit(self, steps: list[tuple[str, dict, str]]) -> list[tuple[str, ActionOutcome]]:
        """Send ``(action, parameters, attempt_id)`` steps in one ``emulator_step_batch``
        without waiting for a reply; return the outcomes of those refused here (not sent)."""
        refused, bodies, attempts, frames = [], [], [], 0
        for action, parameters, attempt_id in steps:
            try:
                msg = step_message(action, parameters, attempt_id)
            except ValueError as exc:
                refused.append(
                    (attempt_id, ActionOutcome("rejected", None, {"error_code": "bad-action"}, str(exc), 0.0))
                )
                continue
            bodies.append(msg.to_body())
            attempts.append(attempt_id)
            frames += msg.frames
        if not bodies:
            return refused
        if self.socket is None:
            self.socket = connect_dealer(self.ctx.zctx, self.ctx.endpoints["emulator"])
        env = protocol.wrap(StepBatch(steps=bodies), session=self.ctx.session_id, sender=self.ctx.name)
        now = time.monotonic()
        if not self.in_flight:
            self._progress = now
        self.socket.send(protocol.encode(env))
        self.in_flight[env.id] = (attempts, frames, now)
        return refused

    def collect(self) -> list[tuple[str, ActionOutcome]]:
        """Outcomes of the batches whose replies arrived (in order), or ``unknown`` for every
        step in flight once the oldest batch is overdue."""
        out: list[tuple[str, ActionOutcome]] = []
        while self.socket is not None and self.in_flight and self.socket.poll(0):
            env = decode_or_count(self.socket.recv(), self.ctx.counters, "emulator")
            entry = self.in_flight.pop(getattr(env.body, "reply_to", None), None) if env else None
            if entry is not None:
                self._progress = time.monotonic()
                out.extend(_batch_outcomes(env.body, *entry))
        if self.in_flight and self.next_deadline_s() <= 0:
            waited = time.monotonic() - self._progress
            count = sum(len(attempts) for attempts, _, _ in self.in_flight.values())
            error = (
                f"no reply from the emulator within {waited:.1f}s; the {count} step(s) in "
                "flight are recorded unknown and never resent"
            )
            out.extend(
                (att, ActionOutcome("unknown", None, None, error, _ms(sent)))
                for attempts, _, sent in self.in_flight.values()
                for att in attempts
            )
            self.in_flight.clear()
            self.socket.close(0)  # drop anything still queued for a dead emulator
            self.socket = None
        return out

    def abandon(self) -> list[tuple[str, ActionOutcome]]:
        """The emulator process exited: the replies that came before it did, and ``unknown``
        for every other step in flight, at once (never resent). The socket, with anything
        still queued in it for the dead process, is dropped."""
        out = self.collect()
        if not self.in_flight:
            return out
        count = sum(len(attempts) for attempts, _, _ in self.in_flight.values())
        error = f"{EXITED}; the {count} step(s) in flight are recorded unknown and never resent"
        out.extend(
            (att, ActionOutcome("unknown", None, None, error, _ms(sent)))
            for attempts, _, sent in self.in_flight.values()
            for att in attempts
        )
        self.in_flight.clear()
        self.socket.close(0)
        self.socket = None
        return out

    def next_deadline_s(self) -> float:
        """Seconds until the oldest batch in flight is overdue (for the caller's poll)."""
        if not self.in_flight:
            return 3600.0
        _, frames, _ = next(iter(self.in_flight.values()))
        return max(0.0, self._progress + self.timeout_s + frames / 1000 - time.monotonic())

    def close(self) -> None:
        self.client.close()
        if self.socket is not None:
            self.socket.close(0)
            self.socket = None


def _batch_outcomes(reply, attempts: list[str], frames: int, sent: float) -> list[tuple[str, ActionOutcome]]:
    """One outcome per step of a batch, from the emulator's ``emulator_stepped_batch``."""
    items = reply.replies if isinstance(reply, SteppedBatch) else None
    if items is None or len(items) != len(attempts):
        what = reply.TYPE if items is None else f"{len(items)} replies for {len(attempts)} steps"
        if isinstance(reply, EmulatorErrorReply):  # the batch as a whole was refused
            return [(att, _outcome(reply, sent)) for att in attempts]
        return [
            (att, ActionOutcome("unknown", None, None, f"unexpected reply to a step batch: {what}", _ms(sent)))
            for att in attempts
        ]
    out = []
    for att, item in zip(attempts, items):
        try:
            message = from_item(item)
        except ProtocolError as exc:
            out.append((att, ActionOutcome("unknown", None, None, f"undecodable step reply: {exc}", _ms(sent))))
            continue
        out.append((att, _outcome(message, sent)))
    return out


def _outcome(reply, start: float) -> ActionOutcome:
    """The outcome of one step from the emulator's reply."""
    if isinstance(reply, EmulatorErrorReply):
        outcome = "rejected" if reply.effect == "none" else "unknown"
        return ActionOutcome(
            outcome,
            None,
            {"error_code": reply.code, "effect": reply.effect},
            f"{reply.code}: {reply.message}",
            _ms(start),
        )
    agent = {CheckpointSaved: "checkpoint", Restored: "branch", RecordingFinalized: "status", ClipMade: "clip"}.get(
        type(reply)
    )
    if agent is not None:  # an agent's checkpoint, restore, stop or clip (supervisor/mcp)
        return ActionOutcome("accepted", None, {agent: getattr(reply, agent)}, None, _ms(start))
    if not isinstance(reply, Stepped):
        return ActionOutcome("unknown", None, None, f"unexpected reply {reply.TYPE!r}", _ms(start))
    response = {
        "frame": reply.frame,
        "held": reply.held,
        "pressed": reply.pressed,
        "released": reply.released,
        "samples": reply.samples,
        "recording_span": reply.span,
        "checkpoint": reply.checkpoint,
    }
    if reply.score is not None:  # emulator.score: the values the step left (docs/emulator.md)
        response["score"] = reply.score
    return ActionOutcome("accepted", None, response, None, _ms(start))


def _agent_message(action: str, parameters: dict):
    """An agent's ``checkpoint``, ``restore``, ``stop_recording`` or ``clip`` (supervisor/mcp)."""
    if action == "clip":
        request, workspace = parameters.get("request"), parameters.get("workspace")
        if not isinstance(request, dict):
            raise ValueError(f"parameters.request must be a clip request object, got {request!r}")
        if not isinstance(workspace, str) or not workspace:
            raise ValueError(f"parameters.workspace must name the workspace root, got {workspace!r}")
        return Clip(request=request, workspace=workspace)
    text = {
        "label": parameters.get("label"),
        "checkpoint_id": parameters.get("checkpoint_id"),
        "outcome": parameters.get("outcome"),
        "reason": parameters.get("reason"),
    }
    for name, value in text.items():
        if value is not None and not isinstance(value, str):
            raise ValueError(f"parameters.{name} must be a string, got {value!r}")
    if action == "checkpoint":
        return Checkpoint(label=text["label"])
    if action == "restore":
        if not text["checkpoint_id"]:
            raise ValueError("parameters.checkpoint_id must name a checkpoint of this recording")
        return Restore(checkpoint_id=text["checkpoint_id"])
    return StopRecording(outcome=text["outcome"], reason=text["reason"])


def step_message(action: str, parameters: dict, attempt_id: str) -> Step:
    if action in AGENT_ACTIONS:
        return _agent_message(action, parameters)
    if action != STEP_ACTION:
        raise ValueError(f"the pyboy backend takes action {STEP_ACTION!r}, not {action!r}")
    buttons = parameters.get("buttons", [])
    frames, samples = parameters.get("frames"), parameters.get("samples", 0)
    if not isinstance(buttons, list) or not all(isinstance(b, str) for b in buttons):
        raise ValueError(f"parameters.buttons must be a list of button names, got {buttons!r}")
    for name, value in (("frames", frames), ("samples", samples)):
        if isinstance(value, bool) or not isinstance(value, int):
            raise ValueError(f"parameters.{name} must be an integer, got {value!r}")
    return Step(attempt_id=attempt_id, buttons=buttons, frames=frames, samples=samples)


def _ms(start: float) -> float:
    return round((time.monotonic() - start) * 1000, 3)


def make_sink(ctx: ActorContext):
    backend = ctx.setting("game.backend")
    if backend == "http":
        return HttpSink(ctx.setting("game.base_url"), float(ctx.setting("game.timeout_s", 5)))
    if backend == "pyboy":
        return EmulatorSink(ctx, float(ctx.setting("emulator.step_timeout_s", 5)))
    raise ValueError(f"game.backend {backend!r} has no actuator sink yet")
