"""Body checks compiled once per annotation (protocol.fields): every annotation kind a message
uses passes, converts and refuses with the class, field path and words pinned here, through
``decode`` as an actor meets them and through ``check_value``."""

from __future__ import annotations

import typing

import msgpack
import pytest

import protocol
from protocol import errors
from protocol.fields import body_to_fields, check_value
from protocol.from_recorder import Recorded, Rows
from protocol.policy_to_model import AskModel
from protocol.supervisor_to_actor import Welcome
from protocol.to_recorder import Follow, RecordProposal, RecordResult, StoreObservation

ROW = {"event": "proposal_status", "proposal_id": "p-000001", "sequence": 10, "status": "execute"}
WELCOME = {
    "actor": "a",
    "session_id": "s",
    "session_dir": "d",
    "capture_root": "c",
    "endpoints": {"recorder": "ipc://r"},
    "profile": {},
    "heartbeat_s": 1.5,
}
PROPOSAL = {
    "proposal_id": "p",
    "observation_id": "o",
    "action": "end_turn",
    "parameters": {},
    "reason": "r",
    "source": "policy",
    "wish": "execute",
}


def frame(cls, body) -> bytes:
    return msgpack.packb(
        ["gamerig", 1, 0, cls.TYPE, cls.VERSION, "id", "session", "test", 1.0, body], use_bin_type=True
    )


def refusal(cls, body) -> errors.BadBody:
    with pytest.raises(errors.BadBody) as exc:
        protocol.decode(frame(cls, body))
    return exc.value


@pytest.mark.parametrize(
    "cls, body, field, problem",
    [
        # list[dict]: the item's index in the path
        (
            Rows,
            {"reply_to": "r", "rows": [ROW, ROW, ROW, "x"], "last_sequence": 3},
            "rows[3]",
            "expected dict, got str",
        ),
        (Rows, {"reply_to": "r", "rows": [ROW, [ROW]], "last_sequence": 3}, "rows[1]", "expected dict, got list"),
        (Rows, {"reply_to": "r", "rows": "x", "last_sequence": 3}, "rows", "expected a list, got str"),
        (Rows, {"reply_to": "r", "rows": {"0": ROW}, "last_sequence": 3}, "rows", "expected a list, got dict"),
        # dict[str, X]: the key in the path
        (Welcome, {**WELCOME, "endpoints": {"recorder": "ipc://r", "x": 5}}, "endpoints.x", "expected str, got int"),
        (Welcome, {**WELCOME, "endpoints": {"x": None}}, "endpoints.x", "expected str, got NoneType"),
        (Welcome, {**WELCOME, "endpoints": {b"x": "ipc://r"}}, "endpoints", "map key b'x' is not a string"),
        (Welcome, {**WELCOME, "endpoints": ["ipc://r"]}, "endpoints", "expected a map, got list"),
        # X | None: the inner annotation's words, under the field's own name (a union reports
        # its members' problems, not their paths)
        (Rows, {"reply_to": "r", "rows": [], "last_sequence": 3, "states": [1]}, "states", "expected dict, got list"),
        (StoreObservation, {"read_id": "r", "state": {}, "read_ms": "5"}, "read_ms", "expected a number, got str"),
        (StoreObservation, {"read_id": "r", "state": {}, "read_ms": False}, "read_ms", "expected a number, got bool"),
        (
            RecordResult,
            {"attempt_id": "a", "outcome": "accepted", "http_status": 200.0},
            "http_status",
            "expected an integer, got float",
        ),
        (Follow, {"after": 1, "wake": ["observation", 3]}, "wake", "expected str, got int"),
        (Follow, {"after": 1, "wake": "observation"}, "wake", "expected a list, got str"),
        (AskModel, {"kind": "k", "questions": [], "images": [b"png", "png"]}, "images", "expected bytes, got str"),
        # missing and null
        (Recorded, {"reply_to": "r"}, "sequence", "missing"),
        (Rows, {"reply_to": "r", "last_sequence": 3}, "rows", "missing"),
        (Recorded, {"reply_to": None, "sequence": 1}, "reply_to", "expected str, got NoneType"),
        (Rows, {"reply_to": "r", "rows": None, "last_sequence": 3}, "rows", "expected a list, got NoneType"),
        # bool is not an integer nor a number; a plain type's words
        (Recorded, {"reply_to": "r", "sequence": True}, "sequence", "expected an integer, got bool"),
        (Welcome, {**WELCOME, "heartbeat_s": True}, "heartbeat_s", "expected a number, got bool"),
        (Follow, {"after": 1, "with_states": 1}, "with_states", "expected bool, got int"),
        (RecordProposal, {**PROPOSAL, "action": 3}, "action", "expected str, got int"),
    ],
)
def test_a_wrong_value_is_refused_with_its_field_path_and_words(cls, body, field, problem):
    exc = refusal(cls, body)
    assert (exc.type_name, exc.field, exc.problem) == (cls.TYPE, field, problem)
    assert str(exc) == f"message {cls.TYPE!r}: field {field!r}: {problem}"


def test_the_first_wrong_field_in_declared_order_is_the_one_named():
    exc = refusal(RecordProposal, {**PROPOSAL, "observation_id": 1, "reason": 2})
    assert exc.field == "observation_id"
    exc = refusal(Recorded, {"sequence": "x"})
    assert (exc.field, exc.problem) == ("reply_to", "missing")


def test_a_body_that_is_not_a_map_is_refused_as_before():
    exc = refusal(Recorded, ["r", 1])
    assert (exc.field, exc.problem) == ("<body>", "expected a map, got list")


def test_an_integer_is_accepted_as_a_number_and_becomes_a_float():
    env = protocol.decode(frame(Welcome, {**WELCOME, "heartbeat_s": 2}))
    assert env.body.heartbeat_s == 2.0 and type(env.body.heartbeat_s) is float
    env = protocol.decode(frame(RecordResult, {"attempt_id": "a", "outcome": "accepted", "request_ms": 7}))
    assert env.body.request_ms == 7.0 and type(env.body.request_ms) is float
    assert check_value("t", "f", list[float], [1, 2.5]) == [1.0, 2.5]
    assert [type(v) for v in check_value("t", "f", list[float], [1, 2.5])] == [float, float]


def test_values_inside_a_map_are_checked_but_not_converted():
    """``dict[str, X]`` hands back the map as it came: an int under ``dict[str, float]``
    passes and stays an int."""
    value = {"a": 1, "b": 2.5}
    assert check_value("t", "f", dict[str, float], value) is value
    assert type(value["a"]) is int
    with pytest.raises(errors.BadBody, match=r"field 'f\.b': expected a number, got str"):
        check_value("t", "f", dict[str, float], {"a": 1, "b": "x"})
    with pytest.raises(errors.BadBody, match="map key 3 is not a string"):
        check_value("t", "f", dict[str, str], {3: "x"})


def test_lists_come_back_as_new_lists_of_the_same_items():
    rows = [dict(ROW), dict(ROW)]
    out = body_to_fields(Rows, {"reply_to": "r", "rows": rows, "last_sequence": 1})
    assert out["rows"] == rows and out["rows"] is not rows
    assert all(a is b for a, b in zip(out["rows"], rows))


def test_nested_annotations_name_the_nested_path():
    with pytest.raises(errors.BadBody) as exc:
        check_value("t", "f", list[list[str]], [["a"], ["b", 2]])
    assert (exc.value.field, exc.value.problem) == ("f[1][1]", "expected str, got int")
    with pytest.raises(errors.BadBody) as exc:
        check_value("t", "f", dict[str, list[int]], {"k": [1, True]})
    assert (exc.value.field, exc.value.problem) == ("f.k[1]", "expected an integer, got bool")
    assert check_value("t", "f", list[list[str]], [["a"], []]) == [["a"], []]


def test_unions_of_two_types_try_each_in_turn_and_join_their_words():
    assert check_value("t", "f", typing.Union[float, int], 3) == 3.0
    assert type(check_value("t", "f", typing.Union[float, int], 3)) is float
    assert (
        check_value("t", "f", typing.Union[int, float], 3) == 3 and type(check_value("t", "f", int | float, 3)) is int
    )
    with pytest.raises(errors.BadBody) as exc:
        check_value("t", "f", int | str | None, 1.5)
    assert exc.value.problem == "expected an integer, got float; expected str, got float"


def test_subclasses_the_fast_path_does_not_know_are_still_judged_as_before():
    class Text(str):
        pass

    class Flag(int):
        pass

    assert type(check_value("t", "f", str, Text("x"))) is Text
    assert check_value("t", "f", int, Flag(3)) == 3
    assert check_value("t", "f", list[str], [Text("x")]) == ["x"]
    with pytest.raises(errors.BadBody, match="expected str, got bool"):
        check_value("t", "f", str, True)


def test_an_unsupported_annotation_still_raises_type_error_when_a_value_meets_it():
    with pytest.raises(TypeError, match="unsupported annotation"):
        check_value("t", "f", typing.Literal["a"], "a")


def test_decoded_messages_equal_constructed_ones_defaults_included():
    env = protocol.decode(frame(Follow, {"after": 7}))
    assert env.body == Follow(after=7)
    assert repr(env.body) == repr(Follow(after=7))
    assert vars(env.body) == vars(Follow(after=7))  # the defaults are the instance's own too
    assert (env.body.max_rows, env.body.wait_ms, env.body.with_states, env.body.wake) == (256, 1000, False, None)
    sent = protocol.wrap(Follow(after=7, wake=["observation"]), session="s", sender="t", sent_at=2.0)
    back = protocol.decode(protocol.encode(sent))
    assert back == sent and repr(back) == repr(sent)
    with pytest.raises(AttributeError):
        back.body.after = 8  # still frozen
    with pytest.raises(AttributeError):
        back.id = "other"


def test_to_body_lists_every_field_in_declared_order():
    msg = RecordResult(attempt_id="a", outcome="accepted", http_status=200)
    assert list(msg.to_body()) == ["attempt_id", "outcome", "http_status", "response", "error", "request_ms"]
    assert Recorded(reply_to="r", sequence=3).to_body() == {"reply_to": "r", "sequence": 3}
    assert protocol.from_recorder.NoIntent(reply_to="r").to_body() == {"reply_to": "r"}
    assert protocol.to_recorder.Snapshot().to_body() == {}
