"""What actors may ask of the recorder (requests that get exactly one reply each).

Every request is idempotent by a caller-chosen key, so a caller whose reply was lost (the
recorder restarted) can send it again: ``read_id`` for observations, ``proposal_id`` for
proposals and intents, ``attempt_id`` for results.
"""

from __future__ import annotations

from typing import Any

from .event_base import Event
from .message import Message, message


@message
class StoreObservation(Message):
    """A successful state read: the parsed state, stored as an observation file.

    Version 2 appended ``identity``: the run identity read right after the state (a
    separate, non-atomic read), or None when none was read (see ``actors.identity``).
    """

    TYPE = "store_observation"
    VERSION = 2
    read_id: str
    state: dict
    phase: str = "run"
    read_ms: float | None = None
    identity: dict | None = None


@message
class ReportObservationError(Message):
    """A failed state read; it never invents an observation."""

    TYPE = "report_observation_error"
    read_id: str
    error: str
    error_type: str = ""


@message
class RecordProposal(Message):
    """The policy's proposal for an observation and the disposition it wishes."""

    TYPE = "record_proposal"
    proposal_id: str
    observation_id: str
    action: str | None
    parameters: dict
    reason: str
    source: str
    wish: str  # execute | wait | suppressed | stop
    model_evidence: list | None = None
    extra: dict | None = None
    decide_ms: float | None = None


@message
class RecordIntent(Message):
    """The actuator's intent to send one request for an executed proposal."""

    TYPE = "record_intent"
    proposal_id: str
    requester: str = ""  # the actuator instance; only it may have a lost ack repeated


@message
class RecordResult(Message):
    """What became of an attempt: accepted, rejected or unknown."""

    TYPE = "record_result"
    attempt_id: str
    outcome: str
    http_status: int | None = None
    response: Any = None
    error: str | None = None
    request_ms: float | None = None


@message
class RecordEvent(Message):
    """A diagnostic or lifecycle event (actor_start, actor_exit, model_error, ...)."""

    TYPE = "record_event"
    event: str
    fields: dict
    key: str | None = None  # idempotency key; a repeated key is not appended twice

    @classmethod
    def of(cls, event: Event, key: str | None = None) -> RecordEvent:
        """The request that records ``event`` (a ``protocol.events`` kind). ``key`` is the
        idempotency key (the recorder writes it into the row as ``event_key``); without it,
        the event's own ``event_key`` is used, if it has one. A reserved kind (one only the
        recorder appends) raises ValueError: the recorder would refuse it."""
        if event.RESERVED:
            raise ValueError(f"{event.KIND!r} is recorded only through its own request")
        fields = event.to_row()
        kind = fields.pop("event")
        own_key = fields.pop("event_key", None)
        return cls(event=kind, fields=fields, key=key if key is not None else own_key)


@message
class RecordBatch(Message):
    """Several writer requests in one frame (pipelined steps send proposals, intents and
    results this way). ``items`` are ``{"type": <request type>, "body": {...}}`` of
    ``store_observation``, ``report_observation_error``, ``record_proposal``,
    ``record_intent``, ``record_result`` or ``record_event``; each is checked and answered
    exactly as if sent alone, in order, and every reply waits for the batch's one fsync.
    Idempotent because every item is."""

    TYPE = "record_batch"
    items: list[dict]


@message
class AwaitIntent(Message):
    """The actuator's standing intent: record the intent for the next ordinary proposal the
    recorder marks ``execute`` (as ``record_intent`` would for ``requester``: the same checks,
    the same fsync) and answer with its ``intent_ack`` once durable; or with ``no_intent``
    after ``wait_ms``. The newest such proposal already waiting without an attempt (on the
    newest observation) is taken at once. Pipelined proposals are never taken this way.
    Saves a step the round trips of the status row to the actuator and of ``record_intent``.
    ``wait_ms`` 0 withdraws the sender's parked request (answered ``no_intent`` at once; it
    never takes a proposal): an actuator that stops withdraws its own."""

    TYPE = "await_intent"
    requester: str
    wait_ms: int = 500


@message
class Follow(Message):
    """Ask for journal rows after ``after``; held until rows exist or ``wait_ms`` passes.

    Version 2 appended ``wake``: the rows whose arrival answers the held request (None: any
    row), each entry an event kind (``"action_result"``) or a kind and one field's value
    (``"proposal_status.status=wait"``, compared as text). Other rows wait, and come in the
    same reply as the next waking row — or when ``max_rows`` rows wait, or at ``wait_ms``. The
    reply always holds every row after ``after`` in order (up to ``max_rows``): ``wake``
    decides when, never what.
    """

    TYPE = "follow"
    VERSION = 2
    after: int
    max_rows: int = 256
    wait_ms: int = 1000
    with_states: bool = False
    wake: list[str] | None = None


@message
class Finalize(Message):
    """The last request of a session: append session_end and write the summaries."""

    TYPE = "finalize"
    reason: str
    exit_code: int


@message
class Snapshot(Message):
    """A tap's first request: the session's counters so far and the sequence they cover."""

    TYPE = "snapshot"
