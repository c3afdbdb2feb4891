"""The wire format: golden byte vectors, round trips, and strict decoding."""

from __future__ import annotations

import json
import os

import msgpack
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import protocol
from protocol import errors
from protocol.actor_to_supervisor import Heartbeat, Hello
from protocol.to_recorder import Follow, RecordProposal, RecordResult
from tests.protocol.samples import all_types, golden_frame, sample

GOLDEN = json.load(open(os.path.join(os.path.dirname(__file__), "golden_vectors.json")))


@pytest.mark.parametrize("name", sorted(all_types()))
def test_golden_bytes_pin_the_wire_format(name):
    """A failure here means a wire-format change: that is a protocol migration (bump the
    version, keep old readers working), never a fixture update."""
    assert name in GOLDEN, f"new message type {name!r}: add its golden vector deliberately"
    assert golden_frame(all_types()[name]).hex() == GOLDEN[name]


def test_every_golden_vector_still_has_its_type():
    assert set(GOLDEN) == set(all_types())


@pytest.mark.parametrize("name", sorted(all_types()))
def test_round_trip(name):
    cls = all_types()[name]
    env = protocol.wrap(sample(cls), session="s", sender="t")
    back = protocol.decode(protocol.encode(env))
    assert back == env


def _frame(**over):
    parts = {
        "magic": "gamerig",
        "major": 1,
        "minor": 0,
        "type": "heartbeat",
        "tv": 1,
        "id": "i",
        "session": "s",
        "sender": "x",
        "sent_at": 1.0,
        "body": {"actor": "a"},
    }
    parts.update(over)
    return msgpack.packb(list(parts.values()), use_bin_type=True)


@pytest.mark.parametrize(
    "data, error, words",
    [
        (b"\xc1", errors.NotMsgpack, "not a single msgpack value"),
        (b"", errors.NotMsgpack, "not a single msgpack value"),
        (_frame() + b"\x00", errors.NotMsgpack, "trailing bytes"),
        (msgpack.packb({"a": 1}), errors.BadEnvelope, "array of 10"),
        (_frame(magic="other"), errors.BadEnvelope, "magic"),
        (_frame(major=2), errors.VersionMismatch, "major version 2 is not supported"),
        (_frame(type="launch_missiles"), errors.UnknownMessageType, "launch_missiles"),
        (_frame(body={}), errors.BadBody, "field 'actor': missing"),
        (_frame(body={"actor": 5}), errors.BadBody, "field 'actor': expected str, got int"),
        (_frame(body=[1]), errors.BadBody, "expected a map"),
        (_frame(id=5), errors.BadEnvelope, "id (position 5)"),
        (_frame(sent_at="now"), errors.BadEnvelope, "sent_at"),
        (_frame(sent_at=True), errors.BadEnvelope, "sent_at (position 8) has type bool"),
        (_frame(major=True), errors.BadEnvelope, "major version (position 1) has type bool"),
        (_frame(minor=1.0), errors.BadEnvelope, "minor version (position 2) has type float"),
        (_frame(major=2, minor="0"), errors.BadEnvelope, "minor version (position 2) has type str"),
        (_frame(type=7), errors.BadEnvelope, "type (position 3) has type int"),
        (_frame(tv=None), errors.BadEnvelope, "type version (position 4) has type NoneType"),
        (_frame(session=b"s"), errors.BadEnvelope, "session (position 6) has type bytes"),
        (_frame(sender=["x"]), errors.BadEnvelope, "sender (position 7) has type list"),
        (_frame(magic="gamerig", id=None, type="launch_missiles"), errors.BadEnvelope, "id (position 5)"),
        ("not bytes", errors.NotMsgpack, "expected bytes, got str"),
    ],
)
def test_decoding_refuses_bad_frames_with_a_clear_error(data, error, words):
    with pytest.raises(error) as exc:
        protocol.decode(data)
    assert words in str(exc.value)
    assert isinstance(exc.value, errors.ProtocolError)


def test_oversized_frames_are_refused_both_ways():
    big = RecordResult(attempt_id="a", outcome="unknown", response="x" * protocol.MAX_FRAME_BYTES)
    with pytest.raises(errors.FrameTooLarge):
        protocol.encode(protocol.wrap(big, session="s", sender="t"))
    with pytest.raises(errors.FrameTooLarge):
        protocol.decode(b"\x00" * (protocol.MAX_FRAME_BYTES + 1))


def test_unknown_body_fields_are_ignored_so_senders_can_append_fields():
    env = protocol.decode(_frame(body={"actor": "a", "added_later": [1, 2]}))
    assert env.body == Heartbeat(actor="a")


#: ``follow`` version 1 as older followers send it (the golden vector before ``wake`` was
#: appended): still read, as a follow that any row answers
FOLLOW_V1 = (
    "9aa767616d657269670100a6666f6c6c6f7701d9203030303030303030303030303030303030303030303030"
    "303030303030303031b23230323631313239543030303030305a2d30a6676f6c64656ecb3ff4000000000000"
    "84a5616674657207a86d61785f726f777307a7776169745f6d7307ab776974685f737461746573c3"
)


def test_a_version_1_follow_still_decodes_without_wake():
    env = protocol.decode(bytes.fromhex(FOLLOW_V1))
    assert env.type_version == 1
    assert (env.body.after, env.body.with_states, env.body.wake) == (7, True, None)


#: ``emulator_observed`` and ``emulator_stepped`` version 1, as emulators before ``score`` was
#: appended sent them (their golden vectors then): still read, with no score
EMULATOR_V1 = {
    "emulator_observed": (
        "9aa767616d657269670100b1656d756c61746f725f6f6273657276656401d92030303030303030303030303030"
        "30303030303030303030303030303030303031b23230323631313239543030303030305a2d30a6676f6c64656e"
        "cb3ff40000000000008ba87265706c795f746fa178a56672616d6507a96672616d655f706e67a178b16672616d"
        "655f726762615f736861323536a178a66d656d6f727981a16ba178a468656c6491a178a3726f6d81a16b01a363"
        "6762c3a96272616e63685f6964a178ac616374696f6e5f696e64657807a97265636f7264696e67a178"
    ),
    "emulator_stepped": (
        "9aa767616d657269670100b0656d756c61746f725f7374657070656401d9203030303030303030303030303030"
        "303030303030303030303030303030303031b23230323631313239543030303030305a2d30a6676f6c64656ecb"
        "3ff400000000000089a87265706c795f746fa178aa617474656d70745f6964a178a56672616d6507a468656c64"
        "91a178a77072657373656491a178a872656c656173656491a178a773616d706c65739181a16b01a47370616e81"
        "a16b01aa636865636b706f696e7481a16b01"
    ),
}


@pytest.mark.parametrize("name", sorted(EMULATOR_V1))
def test_a_version_1_emulator_reply_still_decodes_without_score(name):
    env = protocol.decode(bytes.fromhex(EMULATOR_V1[name]))
    assert (env.type, env.type_version) == (name, 1)
    assert env.body.score is None and env.body.frame == 7


def test_follow_wake_must_be_a_list_of_kinds():
    bad = protocol.encode(protocol.wrap(Follow(after=1), session="s", sender="t"))
    body = msgpack.unpackb(bad, raw=False)
    body[-1]["wake"] = "observation"
    with pytest.raises(errors.BadBody, match="wake"):
        protocol.decode(msgpack.packb(body, use_bin_type=True))


def test_nested_types_are_checked():
    bad = _frame(
        type="record_proposal",
        body={
            "proposal_id": "p",
            "observation_id": "o",
            "action": None,
            "parameters": [],
            "reason": "r",
            "source": "s",
            "wish": "wait",
        },
    )
    with pytest.raises(errors.BadBody, match="'parameters': expected dict, got list"):
        protocol.decode(bad)
    ok = protocol.decode(
        _frame(
            type="record_proposal",
            body={
                "proposal_id": "p",
                "observation_id": "o",
                "action": None,
                "parameters": {},
                "reason": "r",
                "source": "s",
                "wish": "wait",
            },
        )
    )
    assert isinstance(ok.body, RecordProposal) and ok.body.action is None


def test_booleans_are_not_integers():
    with pytest.raises(errors.BadBody, match="pid"):
        protocol.decode(
            _frame(type="hello", body={"actor": "a", "pid": True, "protocol_major": 1, "protocol_minor": 0})
        )
    assert protocol.decode(
        _frame(type="hello", body={"actor": "a", "pid": 3, "protocol_major": 1, "protocol_minor": 0})
    ).body == Hello("a", 3, 1, 0)


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=512))
def test_arbitrary_bytes_never_raise_anything_but_protocol_errors(data):
    try:
        protocol.decode(data)
    except errors.ProtocolError:
        pass


@settings(max_examples=200, deadline=None)
@given(
    st.recursive(
        st.none()
        | st.booleans()
        | st.integers(-(2**63), 2**64 - 1)
        | st.floats(allow_nan=False)
        | st.text(max_size=20)
        | st.binary(max_size=20),
        lambda c: st.lists(c, max_size=5) | st.dictionaries(st.text(max_size=8), c, max_size=5),
        max_leaves=20,
    )
)
def test_arbitrary_msgpack_values_never_raise_anything_but_protocol_errors(value):
    try:
        protocol.decode(msgpack.packb(value, use_bin_type=True))
    except errors.ProtocolError:
        pass
