"""Exact JSON shape comparison of a live response against a ``vendor/sts2mcp`` sample.

``compare(actual, expected, variance)`` returns one line per mismatch, each naming its path
in the actual document (``$.player.potions[0].slot: missing key``); an empty list means the
shapes agree. Shape means: the keys of every object at every level (no missing key, no extra
key), each value's JSON type, null versus absent, and the shape of every list element.

Rules (see vendor/sts2mcp/README.md):

* a list in a sample holds one element per kind (shop item categories, reward types...);
  each element of an actual list must match one of them exactly, and the mismatches of the
  closest one are reported when none does. An empty sample list only matches an empty list.
* ``index_mismatches(doc)``: a list element's ``index`` must be its position (the source
  numbers every list it builds from 0).
* ``entity_id_mismatches(state)``: enemies are numbered per monster id in list order.
* ``variance`` says where the source legitimately varies (vendor/sts2mcp/variance.json): a
  key matched by a ``conditional`` pattern may be absent; a value matched by a ``nullable``
  pattern may be null (or, where the sample holds null, a value of the declared type).
  Patterns are ``fnmatch`` patterns over index-free paths such as
  ``$.player.relics[].counter`` (``*`` spans dots, so ``*.keywords[].name`` matches anywhere).
"""

from __future__ import annotations

import dataclasses
import fnmatch
import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

SAMPLES = Path(__file__).resolve().parents[2] / "vendor" / "sts2mcp"
VARIANCE_FILE = SAMPLES / "variance.json"

JSON_TYPES = ("null", "boolean", "integer", "number", "string", "array", "object")


def json_type(value: Any) -> str:
    """The JSON type name of a decoded value (booleans are not integers)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    if isinstance(value, dict):
        return "object"
    raise TypeError(f"not a JSON value: {value!r}")


@dataclasses.dataclass(frozen=True)
class Variance:
    """Where one sample may legitimately differ: absent keys and null values."""

    conditional: tuple[str, ...] = ()
    nullable: tuple[tuple[str, str], ...] = ()  # (pattern, JSON type when not null)

    def may_be_absent(self, pattern_path: str) -> bool:
        return any(fnmatch.fnmatchcase(pattern_path, p) for p in self.conditional)

    def nullable_type(self, pattern_path: str) -> str | None:
        for pattern, kind in self.nullable:
            if fnmatch.fnmatchcase(pattern_path, pattern):
                return kind
        return None


NO_VARIANCE = Variance()


def load_variance_file(path: Path = VARIANCE_FILE) -> dict:
    """The parsed variance file; raises ValueError naming a malformed entry."""
    doc = json.loads(path.read_text())
    for section in ("conditional", "nullable"):
        for i, entry in enumerate(doc.get(section, [])):
            missing = {"path", "samples", "source", "why"} - set(entry)
            if missing:
                raise ValueError(f"{path.name}: {section}[{i}] lacks {sorted(missing)}")
            if section == "nullable" and entry.get("type") not in JSON_TYPES:
                raise ValueError(
                    f"{path.name}: nullable[{i}] has no valid 'type' (one of {JSON_TYPES}): {entry.get('type')!r}"
                )
    return doc


def variance_for(sample_name: str, doc: dict) -> Variance:
    """The variance entries of ``doc`` whose ``samples`` patterns match ``sample_name``."""

    def applies(entry: dict) -> bool:
        return any(fnmatch.fnmatchcase(sample_name, p) for p in entry["samples"])

    return Variance(
        conditional=tuple(e["path"] for e in doc.get("conditional", []) if applies(e)),
        nullable=tuple((e["path"], e["type"]) for e in doc.get("nullable", []) if applies(e)),
    )


def compare(actual: Any, expected: Any, variance: Variance = NO_VARIANCE) -> list[str]:
    """Every shape mismatch of ``actual`` against the sample ``expected``."""
    out: list[str] = []
    _compare(actual, expected, variance, "$", "$", out)
    return out


def _compare(actual: Any, expected: Any, variance: Variance, path: str, pattern: str, out: list[str]) -> None:
    have, want = json_type(actual), json_type(expected)
    if have == "null" and want != "null":
        if variance.nullable_type(pattern) is None:
            out.append(f"{path}: null, the sample has {want} (not nullable here)")
        return
    if want == "null":
        declared = variance.nullable_type(pattern)
        if have != "null" and have != declared:
            out.append(f"{path}: {have}, the sample has null" + (f" (nullable {declared})" if declared else ""))
        return
    if have != want:
        out.append(f"{path}: {have}, the sample has {want}")
    elif want == "object":
        _compare_object(actual, expected, variance, path, pattern, out)
    elif want == "array":
        _compare_list(actual, expected, variance, path, pattern, out)


def _compare_object(actual: dict, expected: dict, variance: Variance, path: str, pattern: str, out: list[str]) -> None:
    for key, value in expected.items():
        if key not in actual:
            if not variance.may_be_absent(f"{pattern}.{key}"):
                out.append(f"{path}.{key}: missing key")
            continue
        _compare(actual[key], value, variance, f"{path}.{key}", f"{pattern}.{key}", out)
    for key in actual:
        if key not in expected:
            out.append(f"{path}.{key}: extra key (the sample has no {key!r} here)")


def _compare_list(actual: list, expected: list, variance: Variance, path: str, pattern: str, out: list[str]) -> None:
    if not expected:
        if actual:
            out.append(f"{path}: {len(actual)} element(s), the sample's list is always empty")
        return
    kinds = _distinct(expected)
    for i, item in enumerate(actual):
        best: list[str] | None = None
        for kind in kinds:
            found: list[str] = []
            _compare(item, kind, variance, f"{path}[{i}]", f"{pattern}[]", found)
            if best is None or len(found) < len(best):
                best = found
            if not found:
                break
        out.extend(best or [])


def _distinct(items: Iterable[Any]) -> list[Any]:
    seen: set[str] = set()
    kinds = []
    for item in items:
        key = json.dumps(skeleton(item), sort_keys=True)
        if key not in seen:
            seen.add(key)
            kinds.append(item)
    return kinds


def index_mismatches(value: Any, path: str = "$") -> list[str]:
    """Lists whose elements carry ``index`` must number them 0, 1, 2... in list order.

    Every builder of McpMod.StateBuilder.cs sets ``index`` from a counter it increments per
    element it adds (options, items, cards, relics, bundles, selected cards), and the actions
    take that index back.
    """
    out: list[str] = []
    if isinstance(value, dict):
        for key, item in value.items():
            out += index_mismatches(item, f"{path}.{key}")
    elif isinstance(value, list):
        for i, item in enumerate(value):
            if isinstance(item, dict) and "index" in item and item["index"] != i:
                out.append(f"{path}[{i}].index: {item['index']!r}, its position is {i}")
            out += index_mismatches(item, f"{path}[{i}]")
    return out


def entity_id_mismatches(state: Any) -> list[str]:
    """``battle.enemies[].entity_id`` is ``<monster id>_<n>``, n counting the living enemies of
    that id before it in the list (SB ``BuildBattleState`` 1079-1086, ``BuildEnemyState``
    1290-1296): ids are renumbered when an enemy dies."""
    battle = state.get("battle") if isinstance(state, dict) else None
    enemies = battle.get("enemies") if isinstance(battle, dict) else None
    if not isinstance(enemies, list):
        return []
    out, counts = [], {}
    for i, enemy in enumerate(enemies):
        eid = enemy.get("entity_id") if isinstance(enemy, dict) else None
        base, _, number = str(eid).rpartition("_")
        want = f"{base}_{counts.get(base, 0)}"
        counts[base] = counts.get(base, 0) + 1
        if eid != want:
            out.append(f"$.battle.enemies[{i}].entity_id: {eid!r}, the source numbers it {want!r}")
    return out


def skeleton(value: Any) -> Any:
    """A value with every scalar replaced by its JSON type (lists keep their distinct kinds)."""
    if isinstance(value, dict):
        return {k: skeleton(v) for k, v in value.items()}
    if isinstance(value, list):
        kinds = {json.dumps(skeleton(v), sort_keys=True) for v in value}
        return ["array", sorted(kinds)]
    return json_type(value)
