"""The journal's vocabulary: one frozen dataclass per event kind written to ``events.jsonl``.

``Cls.KIND`` is the row's ``event``; ``event.to_row()`` is exactly the row the recorder
writes minus the common fields (which the writer adds); ``Cls.from_row(row)`` reads one back
and raises ``EventError`` naming the kind and the field when a declared field is missing or
ill-typed. ``parse(row)`` picks the class by the row's ``event`` and returns ``None`` for a
kind this version does not know (readers skip those). ``EVENTS`` maps kind -> class, in the
order of the docs' table. Readers name kinds as ``Observation.KIND``, never as literals.

Adding an event kind:
  1. Write a class here, decorated ``@event_kind``, with ``KIND``, ``WRITER`` (who appends
     it) and its fields. Base it on ``RecordedEvent`` when an actor or the supervisor records it
     through ``record_event`` (send ``RecordEvent.of(MyEvent(...), key=...)``); set
     ``RESERVED = True`` when only the recorder itself appends it. Use ``optional()`` for a
     field left out of the row when it is None, and ``extra: dict = extra_field()`` when the
     row may carry keys the class does not declare.
  2. Regenerate the docs' table: ``python -m protocol.events --write docs/journal.md``.
  3. Readers that care use ``MyEvent.KIND`` / ``parse``; readers that do not skip it.
Nothing else changes: the recorder appends any kind it does not reserve.

``python -m protocol.events`` prints the table (``--write DOC.md`` puts it between the
markers of DOC.md); ``--check JOURNAL...`` reads every row of journals back through its
class and reports any row that does not round-trip exactly.
"""

from __future__ import annotations

import dataclasses
import json
import sys
import typing
from typing import Any

from .event_base import WRITER_FIELDS, E, Event, EventError, check_kind, extra_field, markdown_table, optional

SCHEMA_VERSION = 1

EVENTS: dict[str, type[Event]] = {}

__all__ = [
    "SCHEMA_VERSION",
    "EVENTS",
    "Event",
    "EventError",
    "RecordedEvent",
    "parse",
    "reserved_kinds",
    "event_kind",
    "WRITER_FIELDS",
]


@typing.dataclass_transform(kw_only_default=True, frozen_default=True)
def event_kind(cls: type[E]) -> type[E]:
    """Class decorator: a frozen, keyword-only event dataclass, registered under its KIND."""
    cls = check_kind(dataclasses.dataclass(frozen=True, kw_only=True)(cls))
    if cls.KIND in EVENTS:
        raise TypeError(f"event kind {cls.KIND!r} declared twice")
    EVENTS[cls.KIND] = cls
    return cls


def parse(row: Any) -> Event | None:
    """The typed event of ``row``; ``None`` when its kind is unknown (skip it).
    Raises ``EventError`` when a known kind's row lacks a field or has an ill-typed one."""
    # a row's "event" may be any JSON value: one that names no kind finds none
    cls = EVENTS.get(row.get("event")) if isinstance(row, dict) else None  # type: ignore[arg-type]
    return cls.from_row(row) if cls is not None else None


def reserved_kinds() -> frozenset[str]:
    """Kinds only the recorder appends (``record_event`` refuses them)."""
    return frozenset(k for k, cls in EVENTS.items() if cls.RESERVED)


@dataclasses.dataclass(frozen=True, kw_only=True)
class RecordedEvent(Event):
    """An event recorded through a ``record_event`` request; ``event_key`` is the request's
    idempotency key, added by the recorder when the request had one."""

    event_key: str | None = optional()


# -- the recorder's own rows -------------------------------------------------------------


@event_kind
class SessionStart(Event):
    """The first row, written before any read: how the session was configured."""

    KIND = "session_start"
    WRITER = "recorder"
    RESERVED = True
    gamerig_version: str
    protocol_version: str
    profile: dict  # the effective profile, as loaded
    dry_run: bool
    max_steps: int | None
    game_backend: str | None
    capture_root: str


@event_kind
class Observation(Event):
    """A successful read, stored as an observation file."""

    KIND = "observation"
    WRITER = "recorder"
    RESERVED = True
    observation_id: str
    path: str
    sha256: str
    step: int
    phase: str
    state_type: str | None
    read_id: str
    read_ms: float | None
    after_attempt_id: str | None = optional()
    run_identity: dict | None = optional()
    #: a run's progress as the state shows it (``actors.progress``): act, floor, hp, ...
    progress: dict | None = optional()


@event_kind
class ObservationError(Event):
    """A failed read; it invents no observation."""

    KIND = "observation_error"
    WRITER = "recorder"
    RESERVED = True
    read_id: str
    error: str
    error_type: str
    last_observation_id: str | None


@event_kind
class Proposal(Event):
    """The policy's proposal; ``extra`` holds the policy's own keys (``pipeline_depth``,
    ``decided_ahead``, ``then_stop``, ``guard_snapshot``, ``run_id``, ``stall``, ...)."""

    KIND = "proposal"
    WRITER = "recorder"
    RESERVED = True
    proposal_id: str
    observation_id: str
    action: str | None
    parameters: dict
    reason: str
    source: str
    decide_ms: float | None
    model_evidence: list | None = optional()
    extra: dict = extra_field()


@event_kind
class ProposalStatus(Event):
    """The disposition of one proposal."""

    KIND = "proposal_status"
    WRITER = "recorder"
    RESERVED = True
    STATUSES = ("wait", "suppressed", "dry_run", "execute", "session_stopped")  # (not a field)
    proposal_id: str
    status: str  # one of STATUSES
    stop_reason: str | None = optional()


@event_kind
class ActionAttempt(Event):
    """The durable intent to send exactly this request, written before it is sent."""

    KIND = "action_attempt"
    WRITER = "recorder"
    RESERVED = True
    attempt_id: str
    proposal_id: str
    observation_id: str
    action: str
    parameters: dict
    requester: str


@event_kind
class ActionResult(Event):
    """What became of an attempt: accepted, rejected or unknown."""

    KIND = "action_result"
    WRITER = "recorder"
    RESERVED = True
    attempt_id: str
    outcome: str
    http_status: int | None
    response: Any
    error: str | None
    request_ms: float | None


@event_kind
class RunIdentityChanged(Event):
    KIND = "run_identity_changed"
    WRITER = "recorder"
    RESERVED = True
    observation_id: str
    previous_run_id: str | None
    run_id: str
    seed: Any


@event_kind
class RunIdentityUnavailable(Event):
    KIND = "run_identity_unavailable"
    WRITER = "recorder"
    RESERVED = True
    observation_id: str
    status: Any
    detail: Any
    last_known_run_id: str | None


@event_kind
class RecorderResumed(Event):
    """A restarted recorder continues the journal; ``torn_rows`` names each torn line
    (``line``, ``offset``, ``length``, ``sha256``, ``terminated``)."""

    KIND = "recorder_resumed"
    WRITER = "recorder"
    RESERVED = True
    start_count: int
    resumed_after_sequence: int
    torn_rows: list


@event_kind
class TapWriteRefused(Event):
    """A tap sent a writer's request on the read-only stream endpoint."""

    KIND = "tap_write_refused"
    WRITER = "recorder"
    RESERVED = True
    request: str
    sender: str


@event_kind
class OutcomeError(Event):
    """Outcome-file attribution failed at finalization (the exit status is kept)."""

    KIND = "outcome_error"
    WRITER = "recorder (finalize)"
    error: str
    outcome_dir: Any


@event_kind
class SessionEnd(Event):
    """The last row of a finalized session."""

    KIND = "session_end"
    WRITER = "recorder (finalize)"
    RESERVED = True
    exit_code: int
    reason: str
    outcome_file_candidates: list | None
    awaiting_observation_after_attempt: list
    unresolved_attempts: list


# -- the supervisor's rows (its outbox) ----------------------------------------------------


@event_kind
class ActorStart(RecordedEvent):
    KIND = "actor_start"
    WRITER = "supervisor"
    actor: str
    pid: int | None
    start_count: int
    module: str
    cpus: list | None = optional()  # the CPU affinity, when one was set


@event_kind
class ActorExit(RecordedEvent):
    """An actor's exit: ``code`` or ``signal``; ``expected`` when the supervisor stopped it."""

    KIND = "actor_exit"
    WRITER = "supervisor"
    actor: str
    pid: int | None
    code: int | None
    signal: str | None
    expected: bool
    extra: dict = extra_field()


@event_kind
class ActorRestart(RecordedEvent):
    KIND = "actor_restart"
    WRITER = "supervisor"
    actor: str
    after_exit_of: str
    strategy: str
    delay_s: float


@event_kind
class ActorGiveUp(RecordedEvent):
    KIND = "actor_give_up"
    WRITER = "supervisor"
    actor: str
    reason: str


@event_kind
class ActorUnresponsive(RecordedEvent):
    KIND = "actor_unresponsive"
    WRITER = "supervisor"
    actor: str
    pid: int | None
    silent_s: float


@event_kind
class ActorRefused(RecordedEvent):
    KIND = "actor_refused"
    WRITER = "supervisor"
    actor: str
    reason: str


@event_kind
class StopRequested(RecordedEvent):
    KIND = "stop_requested"
    WRITER = "supervisor (an actor's request_stop)"
    actor: str
    reason: str
    detail: Any


@event_kind
class SessionStopping(RecordedEvent):
    KIND = "session_stopping"
    WRITER = "supervisor"
    reason: str
    detail: Any


@event_kind
class ControlRefused(RecordedEvent):
    """A control request refused: a bad token, or a tap's token on a write request."""

    KIND = "control_refused"
    WRITER = "supervisor, supervisor (taps)"
    request: str
    reason: str
    tap_id: str | None = optional()
    name: str | None = optional()


@event_kind
class TapAttached(RecordedEvent):
    KIND = "tap_attached"
    WRITER = "supervisor (taps)"
    tap_id: str
    name: str
    pid: int
    transport: str


@event_kind
class TapDetached(RecordedEvent):
    KIND = "tap_detached"
    WRITER = "supervisor (taps)"
    tap_id: str
    name: str
    reason: str
    silent_s: float | None = optional()  # a tap dropped as lost: how long it was silent


# -- the actors' rows ------------------------------------------------------------------------


@event_kind
class ActionError(RecordedEvent):
    """The actuator could not record an attempt's result (the session stops)."""

    KIND = "action_error"
    WRITER = "actuator"
    attempt_id: str
    error: str


@event_kind
class ModelError(RecordedEvent):
    """A model call without a usable answer; ``extra`` holds the failure's own keys as the
    model client or the policy described it (``backend``, ``attempts``, ``request``,
    ``call_id``, ``timeout_phase``, ``http_status``, ``usage``, ...; docs/models.md): which
    of them a failure has depends on where it failed (a question refused before any call has
    no ``backend``)."""

    KIND = "model_error"
    WRITER = "policy (advice)"
    kind: str
    message: str
    question_kind: str
    observation_id: str | None
    extra: dict = extra_field()


@event_kind
class ModelLateAnswer(RecordedEvent):
    """A model reply finished after the policy stopped waiting (its tokens were spent)."""

    KIND = "model_late_answer"
    WRITER = "model_client"
    ask_id: str
    question_kind: str
    deadline_ms: Any
    late_by_ms: float
    outcome: str
    call_id: str | None
    request_hash: str | None
    usage: dict | None
    attempts: Any
    evidence: dict | None = optional()
    error: dict | None = optional()


@event_kind
class BuiltinGameStats(RecordedEvent):
    """The built-in game's intent check at its exit."""

    KIND = "builtin_game_stats"
    WRITER = "game (built-in)"
    stats: dict


@event_kind
class EmulatorStarted(RecordedEvent):
    KIND = "emulator_started"
    WRITER = "emulator"
    start_count: int
    pid: int
    rom: dict
    rom_source: str
    record: bool
    recording: str | None
    memory_regions: dict
    checkpoint_every_frames: int | None
    frame_budget: int | None
    start_checkpoint: dict | None
    battery_save: dict | None
    #: the effective ``emulator.score`` section (``ScoreSpec.to_json``); absent without a score
    score: dict | None = optional()


@event_kind
class EmulatorResumed(RecordedEvent):
    """The emulator restarted: resumed from its recording's last checkpoint, or from boot."""

    KIND = "emulator_resumed"
    WRITER = "emulator"
    start_count: int
    recording: str | None
    lost_interval: dict
    branch: dict | None


@event_kind
class EmulatorBatteryKept(RecordedEvent):
    KIND = "emulator_battery_kept"
    WRITER = "emulator"
    path: str
    sha256: str
    bytes: int


@event_kind
class EmulatorStats(RecordedEvent):
    """How busy the pipeline kept the emulator."""

    KIND = "emulator_stats"
    WRITER = "emulator"
    start_count: int
    requests: int
    frame: int
    actions: int
    busy_s: float
    wall_s: float
    cpu_s: float
    emulation_s: float
    busy_percent: float | None


# -- the command line ---------------------------------------------------------------------


def table() -> str:
    """The markdown table of every kind, as docs/journal.md holds it."""
    return markdown_table(EVENTS.values())


def check_journal(path: str) -> list[str]:
    """Every problem found reading ``path``'s rows back through their classes."""
    problems = []
    try:
        fh = open(path, "rb")
    except OSError as exc:
        return [f"{path}: cannot read: {exc}"]
    with fh:
        for number, line in enumerate(fh, 1):
            try:
                row = json.loads(line)
                event = parse(row)
            except (ValueError, RecursionError) as exc:  # EventError is a ValueError
                problems.append(f"{path}:{number}: {exc}")
                continue
            if event is None:
                continue
            want = {k: v for k, v in row.items() if k not in WRITER_FIELDS}
            if event.to_row() != want:
                problems.append(f"{path}:{number}: {row.get('event')} row does not round-trip")
    return problems


BEGIN_MARK = "<!-- event table: generated by `python -m protocol.events --write docs/journal.md` -->"
END_MARK = "<!-- end of the generated event table -->"


def with_table(doc: str) -> str:
    """``doc`` with the text between the table's markers replaced by ``table()``. Raises
    ValueError when the markers are missing or out of order."""
    start, end = doc.find(BEGIN_MARK), doc.find(END_MARK)
    if start == -1 or end < start:
        raise ValueError(f"the document lacks the markers {BEGIN_MARK!r} ... {END_MARK!r}")
    return doc[: start + len(BEGIN_MARK)] + "\n" + table() + doc[end:]


def main(argv: list[str]) -> int:
    if argv[:1] == ["--check"] and len(argv) > 1:
        problems = [p for path in argv[1:] for p in check_journal(path)]
        print("\n".join(problems) or f"every row of {len(argv) - 1} journal(s) round-trips")
        return 1 if problems else 0
    if argv[:1] == ["--write"] and len(argv) == 2:
        with open(argv[1], encoding="utf-8") as fh:
            doc = fh.read()
        with open(argv[1], "w", encoding="utf-8") as fh:
            fh.write(with_table(doc))
        return 0
    if argv:
        print("usage: python -m protocol.events [--check JOURNAL... | --write DOC.md]", file=sys.stderr)
        return 2
    sys.stdout.write(table())
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
