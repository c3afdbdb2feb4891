"""Envelopes made by ``wrap`` and ``decode`` (which fill them without the frozen
``__init__``): the same fields, values and behaviour as an envelope constructed directly."""

from __future__ import annotations

import dataclasses

import msgpack
import pytest

import protocol
from protocol.codec import Envelope
from protocol.from_recorder import Recorded

FIELDS = [f.name for f in dataclasses.fields(Envelope)]


def test_wrapped_and_decoded_envelopes_hold_every_field_of_the_dataclass():
    """An Envelope field added without filling it in ``wrap`` and ``decode`` fails here."""
    made = Envelope(
        type="recorded",
        type_version=1,
        id="i",
        session="s",
        sender="t",
        sent_at=2.0,
        body=Recorded(reply_to="r", sequence=1),
    )
    wrapped = protocol.wrap(Recorded(reply_to="r", sequence=1), session="s", sender="t", msg_id="i", sent_at=2.0)
    decoded = protocol.decode(protocol.encode(wrapped))
    for env in (wrapped, decoded):
        assert list(vars(env)) == FIELDS
        assert env == made and repr(env) == repr(made)
        assert dataclasses.replace(env, id="j").id == "j"
        with pytest.raises(dataclasses.FrozenInstanceError):
            env.id = "j"


def test_wrap_stamps_a_fresh_id_and_the_time():
    a = protocol.wrap(Recorded(reply_to="r", sequence=1), session="s", sender="t")
    b = protocol.wrap(Recorded(reply_to="r", sequence=1), session="s", sender="t")
    assert a.id != b.id and len(a.id) == 32
    assert isinstance(a.sent_at, float) and a.sent_at <= b.sent_at
    assert (a.major, a.minor, a.type, a.type_version) == (
        protocol.PROTOCOL_MAJOR,
        protocol.PROTOCOL_MINOR,
        "recorded",
        Recorded.VERSION,
    )


def test_an_envelope_decodes_from_any_bytes_like_and_an_integer_time_becomes_a_float():
    raw = msgpack.packb(
        ["gamerig", 1, 0, "recorded", 1, "id", "s", "t", 5, {"reply_to": "r", "sequence": 1}], use_bin_type=True
    )
    envs = [protocol.decode(raw), protocol.decode(bytearray(raw)), protocol.decode(memoryview(raw))]
    assert envs[0] == envs[1] == envs[2]
    assert envs[0].sent_at == 5.0 and type(envs[0].sent_at) is float
    assert (envs[0].major, envs[0].minor, envs[0].body) == (1, 0, Recorded(reply_to="r", sequence=1))
