"""gamerig's wire protocol: message types, versions and the msgpack codec.

Bytes in, typed messages out; no sockets here.

    errors.py               ProtocolError and its tree
    fields.py               body validation from dataclass annotations
    message.py              Message base class and the type registry
    codec.py                Envelope, encode, strict decode, versions, frame limit
    actor_to_supervisor.py  hello, heartbeat, request_stop
    supervisor_to_actor.py  welcome, refused, ping, stop_actor
    cli_to_supervisor.py    status_request, stop_request
    supervisor_to_cli.py    status_reply, stop_reply, control_error
    to_recorder.py          store_observation, record_proposal, record_intent, ...
    from_recorder.py        the recorder's replies (intent_ack, rows, ...)
    policy_to_model.py      ask_model
    model_to_policy.py      model_answer, model_failure
    to_emulator.py          emulator_observe, emulator_step, emulator_checkpoint
    from_emulator.py        the emulator's replies (emulator_observed, emulator_stepped, ...)
    mcp_bridge.py           an MCP server and its session's policy: next, agent request (small
                            JSON messages of their own version, not the msgpack envelope)

The session journal (rows on disk, not messages):

    events.py               the journal's vocabulary: one dataclass per event kind, EVENTS,
                            parse, SCHEMA_VERSION (how to add a kind: its docstring)
    event_base.py           the Event base class, optional/extra fields, the docs' table
    journal.py              canonical encoding, the hash chain and the one journal reader

Importing the package registers every message type.
"""

from . import (  # noqa: F401  (importing each module registers its message types)
    actor_to_supervisor,
    cli_to_supervisor,
    from_emulator,
    from_recorder,
    model_to_policy,
    policy_to_model,
    supervisor_to_actor,
    supervisor_to_cli,
    to_emulator,
    to_recorder,
)
from .codec import MAX_FRAME_BYTES, PROTOCOL_MAJOR, PROTOCOL_MINOR, Envelope, decode, encode, new_id, wrap
from .errors import ProtocolError

__all__ = [
    "Envelope",
    "ProtocolError",
    "decode",
    "encode",
    "new_id",
    "wrap",
    "PROTOCOL_MAJOR",
    "PROTOCOL_MINOR",
    "MAX_FRAME_BYTES",
]
