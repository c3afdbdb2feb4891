"""A validator for the small subset of JSON Schema the answer schemas use.

``validate(instance, schema)`` returns a list of problems, each naming a path such as
``$.answers[0].confidence``; an empty list means valid. ``check_schema(schema)`` raises
``SchemaDefinitionError`` for a keyword outside the subset, so a schema can never be
silently half-checked.

Supported: ``type`` (a name or a list of names), ``enum``, ``const``, ``properties``,
``required``, ``additionalProperties`` (boolean), ``items`` (one schema), ``minItems``,
``maxItems``, ``uniqueItems``, ``minimum``, ``maximum``, ``minLength``, ``maxLength``,
``anyOf`` (a list of schemas), and the annotations ``title`` and ``description``.

``anyOf`` alternatives that are objects told apart by a ``const`` or single-member ``enum``
property (``{"action": {"enum": ["play_card"]}, ...}``) are reported by that property: an
instance naming none of them gets "must be one of ..." for it, one naming some gets the
problems of the closest alternative it names, so an answer's error says what was wrong with
*its* choice rather than with every other one.

Booleans are not numbers here (``true`` does not match ``{"enum": [1]}``) and an integer is
a JSON number without a fraction that Python parsed as ``int``.
"""

from __future__ import annotations

import math
from typing import Any

from .errors import SchemaDefinitionError

_KEYWORDS = frozenset(
    {
        "type",
        "enum",
        "const",
        "properties",
        "required",
        "additionalProperties",
        "items",
        "minItems",
        "maxItems",
        "uniqueItems",
        "minimum",
        "maximum",
        "minLength",
        "maxLength",
        "title",
        "description",
        "anyOf",
    }
)

_TYPES = {
    "object": lambda v: isinstance(v, dict),
    "array": lambda v: isinstance(v, list),
    "string": lambda v: isinstance(v, str),
    "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
    "number": lambda v: (
        isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)
    ),  # NaN and infinity are not JSON numbers (and slip past bounds)
    "boolean": lambda v: isinstance(v, bool),
    "null": lambda v: v is None,
}


def check_schema(schema: dict, path: str = "$") -> None:
    """Raise ``SchemaDefinitionError`` if ``schema`` uses anything outside the subset."""
    for keyword in schema:
        if keyword not in _KEYWORDS:
            raise SchemaDefinitionError(keyword, path)
    names = schema.get("type", [])
    for name in [names] if isinstance(names, str) else names:
        if name not in _TYPES:
            raise SchemaDefinitionError(f"type:{name}", path)
    for name, sub in schema.get("properties", {}).items():
        check_schema(sub, f"{path}.{name}")
    if "items" in schema:
        check_schema(schema["items"], f"{path}[]")
    if "anyOf" in schema:
        if not isinstance(schema["anyOf"], list) or not schema["anyOf"]:
            raise SchemaDefinitionError("anyOf:empty", path)
        for i, sub in enumerate(schema["anyOf"]):
            check_schema(sub, f"{path}|{i}")
    if not isinstance(schema.get("additionalProperties", False), bool):
        raise SchemaDefinitionError("additionalProperties:schema", path)


def validate(instance: Any, schema: dict, path: str = "$") -> list[str]:
    """Every way ``instance`` breaks ``schema``; empty when it conforms."""
    problems: list[str] = []
    if "anyOf" in schema:
        problems += _any_of_problems(instance, schema["anyOf"], path)
        if problems:
            return problems
    if "type" in schema and not _type_ok(instance, schema["type"]):
        return [f"{path}: expected {_type_text(schema['type'])}, got {_describe(instance)}"]
    if "const" in schema and not json_equal(instance, schema["const"]):
        problems.append(f"{path}: must equal {schema['const']!r}, got {_describe(instance)}")
    if "enum" in schema and not any(json_equal(instance, e) for e in schema["enum"]):
        problems.append(f"{path}: must be one of {schema['enum']!r}, got {_describe(instance)}")
    if isinstance(instance, dict):
        problems += _object_problems(instance, schema, path)
    elif isinstance(instance, list):
        problems += _array_problems(instance, schema, path)
    elif isinstance(instance, str):
        problems += _bounds(len(instance), schema, "minLength", "maxLength", path, "length")
    elif _TYPES["number"](instance):
        problems += _bounds(instance, schema, "minimum", "maximum", path, "value")
    return problems


def json_equal(a: Any, b: Any) -> bool:
    """JSON equality: booleans never equal numbers, 1 equals 1.0, containers compared deeply."""
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(json_equal(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(json_equal(x, y) for x, y in zip(a, b))
    if _TYPES["number"](a) and _TYPES["number"](b):
        return a == b
    return type(a) is type(b) and a == b


def _object_problems(instance: dict, schema: dict, path: str) -> list[str]:
    problems = []
    properties = schema.get("properties", {})
    for name in schema.get("required", []):
        if name not in instance:
            problems.append(f"{path}: missing required property {name!r}")
    for name, value in instance.items():
        if name in properties:
            problems += validate(value, properties[name], f"{path}.{name}")
        elif schema.get("additionalProperties", True) is False:
            problems.append(f"{path}: unexpected property {name!r}")
    return problems


def _tag(schema: dict) -> tuple[str, Any] | None:
    """The (property, value) that tells an object alternative apart, if it has one."""
    for name, sub in (schema.get("properties") or {}).items():
        if "const" in sub:
            return name, sub["const"]
        if isinstance(sub.get("enum"), list) and len(sub["enum"]) == 1:
            return name, sub["enum"][0]
    return None


def _any_of_problems(instance: Any, options: list[dict], path: str) -> list[str]:
    found = [validate(instance, option, path) for option in options]
    if any(not problems for problems in found):
        return []
    tags = [_tag(option) for option in options]
    if isinstance(instance, dict) and tags and all(tags) and len({t[0] for t in tags}) == 1:
        name = tags[0][0]
        named = [
            problems for tag, problems in zip(tags, found) if name in instance and json_equal(instance[name], tag[1])
        ]
        if not named:
            allowed = list(dict.fromkeys(t[1] for t in tags))
            got = _describe(instance[name]) if name in instance else "nothing"
            return [f"{path}.{name}: must be one of {allowed!r}, got {got}"]
        return min(named, key=len)
    best = min(found, key=len)
    return [f"{path}: matches none of the {len(options)} alternatives; the closest: {best[0]}"]


def _array_problems(instance: list, schema: dict, path: str) -> list[str]:
    problems = _bounds(len(instance), schema, "minItems", "maxItems", path, "item count")
    if schema.get("uniqueItems"):
        for i, item in enumerate(instance):
            if any(json_equal(item, earlier) for earlier in instance[:i]):
                problems.append(f"{path}[{i}]: duplicate item {_describe(item)}")
    if "items" in schema:
        for i, item in enumerate(instance):
            problems += validate(item, schema["items"], f"{path}[{i}]")
    return problems


def _bounds(value: float, schema: dict, low_key: str, high_key: str, path: str, what: str) -> list[str]:
    if low_key in schema and value < schema[low_key]:
        return [f"{path}: {what} {value!r} is below the minimum {schema[low_key]!r}"]
    if high_key in schema and value > schema[high_key]:
        return [f"{path}: {what} {value!r} is above the maximum {schema[high_key]!r}"]
    return []


def _type_ok(instance: Any, names: str | list[str]) -> bool:
    return any(_TYPES[n](instance) for n in ([names] if isinstance(names, str) else names))


def _type_text(names: str | list[str]) -> str:
    return names if isinstance(names, str) else " or ".join(names)


def _describe(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."
