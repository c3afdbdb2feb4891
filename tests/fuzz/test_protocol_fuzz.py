"""The wire decoder under hostile frames: mutated golden frames and type-confused bodies
decode to a checked message or raise a ``ProtocolError`` naming the problem, nothing else;
whatever decodes can be encoded again."""

from __future__ import annotations

import msgpack
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import protocol
from protocol import errors
from protocol.codec import MAX_FRAME_BYTES
from tests.protocol.samples import all_types, golden_frame, sample

from .strategies import trees

TYPES = sorted(all_types())
WITH_FIELDS = [name for name in TYPES if sample(all_types()[name]).to_body()]


def decode_or_protocol_error(data: bytes):
    """The envelope, or None when refused with a ``ProtocolError`` that explains itself."""
    try:
        env = protocol.decode(data)
    except errors.ProtocolError as exc:
        assert str(exc) and exc.code, "a refusal must say what was wrong"
        return None
    protocol.encode(env)  # whatever decodes can travel on
    return env


@settings(max_examples=150, deadline=None)
@given(st.sampled_from(TYPES), st.data())
def test_mutated_golden_frames_decode_or_are_refused(name, data):
    frame = bytearray(golden_frame(all_types()[name]))
    for _ in range(data.draw(st.integers(1, 4), label="mutations")):
        at = data.draw(st.integers(0, len(frame) - 1), label="at")
        how = data.draw(st.sampled_from(["flip", "cut", "insert", "drop"]), label="how")
        if how == "flip":
            frame[at] ^= 1 << data.draw(st.integers(0, 7))
        elif how == "cut":
            del frame[at:]
        elif how == "insert":
            frame[at:at] = data.draw(st.binary(min_size=1, max_size=8))
        else:
            del frame[at]
        if not frame:
            frame = bytearray(b"\xc0")
    decode_or_protocol_error(bytes(frame))


@settings(max_examples=200, deadline=None)
@given(st.sampled_from(WITH_FIELDS), st.data())
def test_type_confused_bodies_are_checked_field_by_field(name, data):
    cls = all_types()[name]
    body = sample(cls).to_body()
    field = data.draw(st.sampled_from(sorted(body)), label="field")
    body[field] = data.draw(trees(), label="value")
    frame = ["gamerig", 1, 0, name, cls.VERSION, "id", "session", "fuzz", 1.0, body]
    try:
        raw = msgpack.packb(frame, use_bin_type=True)
    except (OverflowError, TypeError, ValueError):
        return  # a value msgpack itself cannot carry never reaches the wire
    env = decode_or_protocol_error(raw)
    if env is not None:
        assert isinstance(env.body, cls)


@settings(max_examples=100, deadline=None)
@given(
    st.lists(
        st.one_of(st.text(max_size=6), st.integers(-5, 5), st.floats(), st.none(), st.binary(max_size=4)),
        min_size=0,
        max_size=12,
    )
)
def test_envelopes_of_the_wrong_shape_are_refused(items):
    decode_or_protocol_error(msgpack.packb(items, use_bin_type=True))


@pytest.mark.parametrize(
    "data, error",
    [
        (b"\x91" * 100_000 + b"\xc0", errors.NotMsgpack),  # nested past any stack
        (b"\xdd\xff\xff\xff\xff", errors.NotMsgpack),  # an array claiming 4 G items
        (b"\xc6\x7f\xff\xff\xff", errors.NotMsgpack),  # a 2 GB bin, 0 bytes given
        (b"\x00" * (MAX_FRAME_BYTES + 1), errors.FrameTooLarge),
    ],
)
def test_frames_built_to_exhaust_the_decoder_are_refused(data, error):
    with pytest.raises(error):
        protocol.decode(data)
