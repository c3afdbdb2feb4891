"""The policy's journaled keys keep their definitions: ``state_digest`` is the SHA-256 of
``json.dumps(state, sort_keys=True)``, an action key is ``json.dumps([action, params],
sort_keys=True)``, a ``situation`` the first 16 hex digits of the SHA-256 of
``json.dumps([flow, action, target], sort_keys=True, default=str)`` — however they are
computed, and whichever candidate or way out a proposal came from.
"""

from __future__ import annotations

import copy
import hashlib
import json
import os

import pytest

from actors.policy.context import action_key, digest, flow_of, situation_of, target_of
from tests.policy.driver import VENDOR, Clock, Driver, sample

STATES = sorted(
    f[:-5]
    for f in os.listdir(VENDOR)
    if f.endswith(".json") and not f.startswith(("reply__", "compendium", "variance"))
)


def sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def odd_state() -> dict:
    """What a state may hold that JSON encoders differ on: non-ASCII text, escapes, floats,
    booleans, nulls, empty containers, keys out of order."""
    return {
        "state_type": "event",
        "z": [1.5, 2.0, -0.0, 1e21, True, None, [], {}],
        "event": {
            "title": "L'Ancien — « Néo »",
            "body": 'quote " backslash \\ tab\t',
            "options": [{"index": 1, "title": "☃"}, {"title": "x", "index": 0}],
        },
        "a": {"b": {"c": "\u0000"}},
    }


@pytest.mark.parametrize("name", STATES)
def test_a_state_digest_is_the_sha256_of_its_sorted_json(name):
    st = sample(name)
    assert digest(st) == sha(json.dumps(st, sort_keys=True))


def test_digests_of_odd_values_and_of_a_changed_copy():
    st = odd_state()
    assert digest(st) == sha(json.dumps(st, sort_keys=True))
    changed = copy.deepcopy(st)
    changed["event"]["options"][0]["title"] = "☃☃"
    assert digest(changed) == sha(json.dumps(changed, sort_keys=True)) != digest(st)


def test_action_keys_and_situations_are_their_sorted_json():
    st = odd_state()
    cases = [
        ("choose_event_option", {"index": 1}),
        ("proceed", {}),
        (None, {}),
        ("menu_select", {"option": "Néo", "z": [2, 1], "a": 1.0}),
    ]
    for action, params in cases:
        assert action_key(action, params) == json.dumps([action, params], sort_keys=True)
    assert action_key("proceed", None) == json.dumps(["proceed", {}], sort_keys=True)
    for action, params in cases + [("custom", {"odd": {3, 1}})]:  # a set is not JSON: ``default=str``
        raw = json.dumps([flow_of(st), action, target_of(action, params, st)], sort_keys=True, default=str)
        assert situation_of(action, params, st) == sha(raw)[:16]


def assert_own_situation(p, st):
    assert p.wish == "execute"
    assert p.extra["situation"] == situation_of(p.action, p.parameters, st), p.action


@pytest.mark.parametrize("name", STATES)
def test_an_executed_proposal_carries_the_situation_of_its_own_action(name):
    st = sample(name)
    p = Driver().see(st)
    if p.wish == "execute":
        assert_own_situation(p, st)
    else:
        assert "situation" not in p.extra


def test_a_proposal_after_refused_candidates_carries_its_own_situation():
    d = Driver()
    st = sample("monster")
    first = d.see(st)
    for _ in range(3):  # the game refuses the first candidate until the memory stops it
        d.answer("rejected", "refused")
        nxt = d.see(st)
        if (nxt.action, nxt.parameters) != (first.action, first.parameters):
            break
    assert (nxt.action, nxt.parameters) != (first.action, first.parameters)
    assert_own_situation(nxt, st)


def test_a_way_out_carries_its_own_situation(monkeypatch):
    clock = Clock(monkeypatch)
    d = Driver(stuck_seconds=20)
    st = sample("overlay")
    for _ in range(80):
        p = d.see(st)
        if p.wish == "execute":
            break
        clock.advance(0.5)
    assert p.extra.get("escape") is True
    assert_own_situation(p, st)
