"""The observation file's bytes (``actors.recorder.files``): ``observation_text`` is
``json.dumps(state, ensure_ascii=False, indent=1, allow_nan=False)`` character for character
(the file's SHA-256 is in the journal, so one byte of difference would change every row
after it), and a value it does not encode itself gives ``json``'s own text or error."""

from __future__ import annotations

import enum
import glob
import hashlib
import json
import os
import random

import pytest

from actors.recorder.files import observation_text

from .conftest import observe, rows

SAMPLES = os.path.join(os.path.dirname(__file__), "..", "..", "vendor", "sts2mcp")


def reference(value) -> str:
    return json.dumps(value, ensure_ascii=False, indent=1, allow_nan=False)


def outcome(encode, value):
    """What ``encode(value)`` gives: ("text", text) or (error type, message)."""
    try:
        return "text", encode(value)
    except Exception as exc:  # noqa: BLE001 - the comparison is of whatever each raises
        return type(exc), str(exc)


def test_every_game_sample_is_encoded_as_json_dumps_encodes_it():
    # the samples are the mod's answers (provenance: vendor/sts2mcp/README.md)
    paths = sorted(glob.glob(os.path.join(SAMPLES, "*.json")))
    assert len(paths) > 30
    for path in paths:
        with open(path, encoding="utf-8") as fh:
            state = json.load(fh)
        assert observation_text(state) == reference(state), path


def random_value(rnd: random.Random, depth: int = 0):
    roll = rnd.random()
    if depth > 5 or roll < 0.5:
        return rnd.choice(
            [
                0,
                -1,
                2**70,
                1.5,
                -0.0,
                1e300,
                5e-324,
                True,
                False,
                None,
                "",
                'quote " backslash \\ newline \n tab \t',
                "\u2028 é \x00 \U0001f600",
                "x" * 50,
            ]
        )
    if roll < 0.75:
        return [random_value(rnd, depth + 1) for _ in range(rnd.randint(0, 4))]
    return {
        rnd.choice(["a", "é", 'k"', "", "a key"]) + str(n): random_value(rnd, depth + 1)
        for n in range(rnd.randint(0, 4))
    }


def test_random_json_values_are_encoded_as_json_dumps_encodes_them():
    rnd = random.Random(14)
    for _ in range(3000):
        value = random_value(rnd)
        assert observation_text(value) == reference(value), value


class Level(enum.IntEnum):
    HIGH = 3


@pytest.mark.parametrize(
    "value",
    [
        (1, [2, "x"]),
        {1: "int key", None: "null key", 1.5: "float key"},
        {True: "bool key", False: "false key"},  # apart: True and 1 are one dict key
        Level.HIGH,
        {"level": Level.HIGH},
        float("nan"),
        [float("inf")],
        {"x": -float("inf")},
        {"raw": b"bytes"},
        {b"key": 1},
        [object()],
        "lone \ud800 surrogate",
    ],
    ids=[
        "tuple",
        "odd_keys",
        "bool_keys",
        "int_enum",
        "int_enum_value",
        "nan",
        "inf",
        "minus_inf",
        "bytes",
        "bytes_key",
        "object",
        "surrogate",
    ],
)
def test_a_value_encoded_by_json_itself_gives_its_text_or_its_error(value):
    assert outcome(observation_text, value) == outcome(reference, value)


def test_nesting_too_deep_raises_as_json_does():
    deep: list = []
    inner = deep
    for _ in range(100_000):
        inner.append([])
        inner = inner[0]
    for encode in (observation_text, reference):
        with pytest.raises(RecursionError):
            encode(deep)


def test_the_stored_file_holds_exactly_those_bytes_and_its_digest(make_recorder):
    rec = make_recorder()
    with open(os.path.join(SAMPLES, "monster.json"), encoding="utf-8") as fh:
        state = json.load(fh)
    stored = observe(rec, "r1", state)
    with open(os.path.join(rec.root, rows(rec)[-1]["path"]), "rb") as fh:
        data = fh.read()
    assert data == reference(state).encode("utf-8")
    assert stored.sha256 == hashlib.sha256(data).hexdigest() == rows(rec)[-1]["sha256"]
