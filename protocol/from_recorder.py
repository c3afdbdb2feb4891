"""The recorder's replies. Each carries ``reply_to``: the id of the request it answers."""

from __future__ import annotations

from .message import Message, message


@message
class ObservationStored(Message):
    TYPE = "observation_stored"
    reply_to: str
    observation_id: str
    sequence: int
    path: str
    sha256: str
    step: int


@message
class ProposalRecorded(Message):
    TYPE = "proposal_recorded"
    reply_to: str
    proposal_id: str
    disposition: str
    sequence: int


@message
class IntentAck(Message):
    """Sent only after the ``action_attempt`` row is fsynced: permission to send once."""

    TYPE = "intent_ack"
    reply_to: str
    attempt_id: str
    proposal_id: str
    action: str
    parameters: dict
    sequence: int


@message
class NoIntent(Message):
    """An ``await_intent`` whose ``wait_ms`` passed with no executable proposal to take."""

    TYPE = "no_intent"
    reply_to: str


@message
class Recorded(Message):
    TYPE = "recorded"
    reply_to: str
    sequence: int


@message
class Rows(Message):
    """Journal rows in sequence order; ``states`` maps observation_id to the stored state."""

    TYPE = "rows"
    reply_to: str
    rows: list[dict]
    last_sequence: int
    states: dict | None = None


@message
class Finalized(Message):
    TYPE = "finalized"
    reply_to: str
    summary: dict


@message
class BatchReplies(Message):
    """The replies to a ``record_batch``, in its order: ``{"type", "body"}`` each (a refused
    item is a ``recorder_error`` with an empty ``reply_to``; the others carry on)."""

    TYPE = "batch_replies"
    reply_to: str
    items: list[dict]


@message
class RecorderError(Message):
    """A request the recorder refused or failed; ``code`` is stable."""

    TYPE = "recorder_error"
    ERROR_REPLY = True
    reply_to: str
    code: str
    message: str


@message
class SnapshotReply(Message):
    """Counters as of ``last_sequence``; follow from there for the live stream."""

    TYPE = "snapshot_reply"
    reply_to: str
    last_sequence: int
    summary: dict
