"""Profiles: defaults, overrides and validation errors that name the key."""

from __future__ import annotations

import pytest

from supervisor import profile as prof
from tests.harness import DEMO


def write(tmp_path, text):
    p = tmp_path / "p.yaml"
    p.write_text(text)
    return str(p)


def test_the_demo_profile_is_valid_and_complete():
    p = prof.load(DEMO)
    assert p["game"]["builtin"] is True and p["actors"] and next(iter(p["actors"])) == "recorder"
    assert p["capture"]["root"] == "run/capture"


def test_set_overrides_are_typed_by_yaml():
    p = prof.load(
        DEMO,
        [
            "game.builtin=false",
            "game.base_url=http://127.0.0.1:9",
            "session.max_steps=5",
            "supervisor.heartbeat_s=0.25",
        ],
    )
    assert p["game"]["builtin"] is False and p["session"]["max_steps"] == 5
    assert p["supervisor"]["heartbeat_s"] == 0.25


@pytest.mark.parametrize(
    "text, words",
    [
        ("game: [1, 2]", "game: expected a mapping"),
        ("game:\n  backend: nes", "game.backend: 'nes' is not one of http, pyboy"),
        ("sesion: {}", "sesion: unknown key (did you mean 'session'?)"),
        ("session:\n  max_steps: -1", "session.max_steps: must not be negative"),
        ("session:\n  max_steps: 0", "session.max_steps: must be at least 1"),
        ("session:\n  dry_run: maybe", "session.dry_run: expected bool"),
        ("game:\n  seed: 1.5", "game.seed: expected a whole number"),
        ("actors:\n  policy: {}\n  recorder: {}", "the recorder must be the first actor"),
        ("actors:\n  recorder: {}\n  painter: {}", "actors.painter: unknown actor"),
        ("actors:\n  recorder: {max_restarts: many}", "actors.recorder.max_restarts: expected a whole number"),
        ("game:\n  builtin: false", "game.base_url: required when game.builtin is false"),
        (
            "game:\n  builtin: false\n  base_url: 127.0.0.1:15526",
            "game.base_url: '127.0.0.1:15526' is not an http:// or https:// address",
        ),
        ("game:\n  builtin: false\n  base_url: 'http://:15526'", "game.base_url: 'http://:15526' names no host"),
        ("game:\n  builtin: false\n  base_url: 'http://localhost:port'", "is not a valid address"),
        ("game:\n  builtin: false\n  base_url: 'http://game host:15526'", "a space or control character"),
        ("game:\n  timeout_s: 0", "game.timeout_s: must be more than 0 and at most 3600 s, got 0"),
        ("game:\n  timeout_s: 1.0e+300", "game.timeout_s: must be more than 0 and at most 3600 s"),
        ("game: {backend: http\n", "not valid YAML at line"),
        ("- a\n- b", "must be a mapping at the top level"),
    ],
)
def test_bad_profiles_name_the_key_and_the_problem(tmp_path, text, words):
    with pytest.raises(prof.ProfileError) as exc:
        prof.load(write(tmp_path, text))
    assert words in str(exc.value)
    assert str(tmp_path) in str(exc.value)


def test_a_missing_file_is_named(tmp_path):
    with pytest.raises(prof.ProfileError, match="no such profile file"):
        prof.load(str(tmp_path / "nope.yaml"))


def test_bad_override_syntax():
    with pytest.raises(prof.ProfileError, match="expected dotted.key=value"):
        prof.load(DEMO, ["session.max_steps"])
    with pytest.raises(prof.ProfileError, match="unknown key"):
        prof.load(DEMO, ["session.max_stepz=3"])


def test_good_game_addresses_pass_the_profile_check():
    for url in ("http://[::1]:8080", "http://localhost:15526/", "http://127.0.0.1:9/pre/fix"):
        assert prof.load(DEMO, ["game.builtin=false", f"game.base_url={url}"])["game"]["base_url"] == url


def test_yaml_off_means_the_string_off():
    assert prof.load(DEMO, ["supervisor.progress=off"])["supervisor"]["progress"] == "off"
