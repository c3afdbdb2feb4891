"""Tolerant JSON extraction from model text."""

from __future__ import annotations

import pytest

from actors.model_client import MalformedAnswer
from actors.model_client.jsontext import extract_json

OBJ = {"q0": {"card_index": 1, "confidence": 0.5, "reason": "a {brace} inside"}}
TEXT = '{"q0": {"card_index": 1, "confidence": 0.5, "reason": "a {brace} inside"}}'


@pytest.mark.parametrize(
    "text",
    [
        TEXT,
        f"  {TEXT}\n",
        f"```json\n{TEXT}\n```",
        f"```\n{TEXT}\n```",
        f"Here is my answer:\n```JSON\n{TEXT}\n```\nHope it helps!",
        f"<think>maybe {{not json}} ... </think>\n{TEXT}",
        f"Answer: {TEXT} -- final.",
        f"Step {{1}}: think. Then {TEXT}",
    ],
)
def test_finds_the_object(text):
    assert extract_json(text) == OBJ


@pytest.mark.parametrize(
    "text",
    [
        "",
        "no json here",
        "[1, 2, 3]",
        '"just a string"',
        '{"q0": {"card_index": 1,',
        "```json\n{broken\n```",
    ],
)
def test_no_object_is_malformed(text):
    with pytest.raises(MalformedAnswer) as info:
        extract_json(text)
    assert info.value.kind == "malformed"
