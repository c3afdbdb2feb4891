"""The profile loader under hostile profiles: raw bytes, random YAML trees over the real
keys, and ``--set`` overrides. ``supervisor.profile.load`` returns an effective profile or
raises ``ProfileError`` naming the file (and the key, when one is at fault) — nothing else.
Whatever it accepts has only finite numbers (a NaN heartbeat or timeout would pass every
``<`` check and then misbehave)."""

from __future__ import annotations

import math
import os
import tempfile

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from supervisor.profile import SCHEMA, ProfileError, load

from .strategies import HOSTILE_LEAVES, deep_nesting, trees

FUZZ = settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _keys(schema: dict) -> set[str]:
    out = set(schema)
    for spec in schema.values():
        if isinstance(spec, dict):
            out |= _keys(spec)
    return out


#: The profile's own key names (and a few of the model's and the actors'), so random trees
#: reach the validators instead of stopping at "unknown key".
KEYS = sorted(
    _keys(SCHEMA)
    | {"base_url", "model", "structured", "timeout_s", "replay", "settings", "recorder", "policy", "restart", "module"}
)
PROFILE_TREES = trees(keys=st.sampled_from(KEYS) | st.text(max_size=6), max_leaves=30)


def load_text(data: bytes, overrides: tuple[str, ...] = ()):
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "fuzz.yaml")
        with open(path, "wb") as fh:
            fh.write(data)
        try:
            profile = load(path, list(overrides))
        except ProfileError as exc:
            assert path in str(exc) or str(exc).startswith("--set"), exc
            return None
    _all_numbers_finite(profile)
    return profile


def _all_numbers_finite(node) -> None:
    if isinstance(node, float):
        assert math.isfinite(node), "an accepted profile holds a non-finite number"
    elif isinstance(node, dict):
        for key, value in node.items():
            if key not in (
                "knobs",
                "settings",
                "inject_failure",
                "memory_regions",
                "recording_limits",
            ):  # passed through to their owners
                _all_numbers_finite(value)
    elif isinstance(node, list):
        for value in node:
            _all_numbers_finite(value)


@FUZZ
@given(st.binary(max_size=300))
def test_any_bytes_load_or_are_refused_naming_the_file(data):
    load_text(data)


@FUZZ
@given(st.dictionaries(st.sampled_from(KEYS), PROFILE_TREES, max_size=6))
def test_random_trees_over_the_real_keys_load_or_are_refused(tree):
    load_text(yaml.safe_dump(tree, allow_unicode=True).encode())


def _leaf_paths(schema: dict, prefix: str = "") -> list[str]:
    out = []
    for key, spec in schema.items():
        out += _leaf_paths(spec, f"{prefix}{key}.") if isinstance(spec, dict) else [prefix + key]
    return out


NASTY = st.sampled_from(
    [math.nan, math.inf, -math.inf, True, False, -1, 2**70, "", [], {}, "off", "on", [1], {"a": 1}, None]
)
LEAF_PATHS = _leaf_paths(SCHEMA) + [
    "model.timeout_s",
    "model.structured",
    "model.temperature",
    "actors.recorder.period_s",
    "actors.mine.module",
]


@FUZZ
@given(st.sampled_from(LEAF_PATHS) | st.text(max_size=12), NASTY | HOSTILE_LEAVES | trees())
def test_any_override_is_applied_or_refused(key, value):
    text = yaml.safe_dump(value, default_flow_style=True).strip().removesuffix("...").strip()
    base = b"model:\n  base_url: http://127.0.0.1:9/v1\n  model: m\n"
    load_text(base, (f"{key}={text}",))


@pytest.mark.parametrize(
    "data, words",
    [
        (b"name: \xff\xfe\n", "is not UTF-8 text (byte 0xff at offset 6)"),
        (("game: " + deep_nesting(20_000)).encode(), "nests too deeply"),
        (b"supervisor:\n  heartbeat_s: .nan\n", "supervisor.heartbeat_s: expected a finite number"),
        (b"game:\n  timeout_s: .inf\n", "game.timeout_s: expected a finite number"),
        (b"actors:\n  recorder: {}\n  mine: [1]\n", "actors.mine: expected a mapping"),
        (
            b"model:\n  base_url: http://127.0.0.1:9/v1\n  model: m\n  timeout_s: .nan\n",
            "model.timeout_s: must be a finite number",
        ),
    ],
)
def test_each_finding_is_a_clear_profile_error(data, words):
    with pytest.raises(ProfileError, match=None) as info:
        with tempfile.TemporaryDirectory() as folder:
            path = os.path.join(folder, "p.yaml")
            with open(path, "wb") as fh:
                fh.write(data)
            load(path)
    assert words in str(info.value)


def test_a_directory_is_refused_as_unreadable(tmp_path):
    with pytest.raises(ProfileError, match="cannot be read"):
        load(str(tmp_path))


def _number_paths(schema: dict, prefix: str = "") -> list[str]:
    out = []
    for key, spec in schema.items():
        if isinstance(spec, dict):
            out += _number_paths(spec, f"{prefix}{key}.")
        elif isinstance(spec, tuple) and float in (spec[0] if isinstance(spec[0], tuple) else (spec[0],)):
            out.append(prefix + key)
    return out


NUMBER_PATHS = _number_paths(SCHEMA) + [
    "actors.recorder.period_s",
    "model.timeout_s",
    "model.temperature",
    "model.backoff_s",
]


@pytest.mark.parametrize("key", NUMBER_PATHS)
@pytest.mark.parametrize("value", [".nan", ".inf", "-.inf"])
def test_every_number_refuses_nan_and_infinity_naming_the_key(key, value):
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "p.yaml")
        with open(path, "wb") as fh:
            fh.write(b"model:\n  base_url: http://127.0.0.1:9/v1\n  model: m\n")
        with pytest.raises(ProfileError) as info:
            load(path, [f"{key}={value}"])
    assert key in str(info.value) and "finite" in str(info.value)
