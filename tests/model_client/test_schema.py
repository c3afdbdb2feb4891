"""The JSON Schema subset validator."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from actors.model_client import SchemaDefinitionError
from actors.model_client.schema import check_schema, json_equal, validate

ANSWER = {
    "type": "object",
    "properties": {
        "pick": {"type": ["integer", "null"], "enum": [0, 2, None]},
        "confidence": {"type": "number", "minimum": 0, "maximum": 1},
        "keys": {
            "type": "array",
            "items": {"type": "string", "enum": ["a", "b"]},
            "minItems": 1,
            "maxItems": 2,
            "uniqueItems": True,
        },
        "note": {"type": "string", "maxLength": 5},
    },
    "required": ["pick", "confidence"],
    "additionalProperties": False,
}


def test_valid_instances():
    assert validate({"pick": 2, "confidence": 1}, ANSWER) == []
    assert validate({"pick": None, "confidence": 0.0, "keys": ["a", "b"], "note": "ok"}, ANSWER) == []


@pytest.mark.parametrize(
    "instance, fragment",
    [
        ([], "$: expected object"),
        ({"confidence": 0.5}, "missing required property 'pick'"),
        ({"pick": 1, "confidence": 0.5}, "$.pick: must be one of"),
        ({"pick": True, "confidence": 0.5}, "$.pick: expected integer or null, got True"),
        ({"pick": 2.0, "confidence": 0.5}, "$.pick: expected integer or null"),
        ({"pick": 0, "confidence": -0.1}, "$.confidence: value -0.1 is below the minimum 0"),
        ({"pick": 0, "confidence": "high"}, "$.confidence: expected number"),
        ({"pick": 0, "confidence": 0.5, "extra": 1}, "unexpected property 'extra'"),
        ({"pick": 0, "confidence": 0.5, "keys": []}, "$.keys: item count 0 is below"),
        ({"pick": 0, "confidence": 0.5, "keys": ["a", "a"]}, "$.keys[1]: duplicate item"),
        ({"pick": 0, "confidence": 0.5, "keys": ["c"]}, "$.keys[0]: must be one of"),
        ({"pick": 0, "confidence": 0.5, "note": "toolong"}, "$.note: length 7 is above"),
    ],
)
def test_problems_name_the_path(instance, fragment):
    problems = validate(instance, ANSWER)
    assert any(fragment in p for p in problems), problems


def test_booleans_are_not_numbers():
    assert not json_equal(True, 1) and not json_equal(0, False)
    assert json_equal(1, 1.0) and json_equal({"a": [1]}, {"a": [1.0]})
    assert validate(True, {"enum": [1]}) != []


def test_unsupported_keywords_are_refused():
    check_schema(ANSWER)
    with pytest.raises(SchemaDefinitionError, match="'pattern' at \\$.x"):
        check_schema({"type": "object", "properties": {"x": {"type": "string", "pattern": "^a"}}})
    with pytest.raises(SchemaDefinitionError):
        check_schema({"type": "tuple"})


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda children: st.lists(children) | st.dictionaries(st.text(), children),
    max_leaves=20,
)


@given(json_values)
def test_validate_never_raises_and_reports_problems_as_text(value):
    problems = validate(value, ANSWER)
    assert all(isinstance(p, str) for p in problems)
    json.dumps(problems)


@pytest.mark.parametrize("value", [float("nan"), float("inf"), float("-inf")])
def test_non_finite_numbers_are_not_numbers(value):
    """NaN compares false with every bound, so it would pass minimum/maximum unchecked."""
    assert validate(value, {"type": "number", "minimum": 0, "maximum": 1}) == [f"$: expected number, got {value}"]
