"""The built-in game's responses have exactly the key structure of vendor/sts2mcp/."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from actors.game.combat import Combat
from actors.game.model import Card
from actors.game.screens.battle import CombatRoom

from .conftest import SP, arrange, get, new_run, ok, post

pytestmark = pytest.mark.timeout(30)

SAMPLES = Path(__file__).resolve().parents[2] / "vendor" / "sts2mcp"


def sample(name: str):
    return json.loads((SAMPLES / name).read_text())


def shape(value):
    """Keys at every level; lists are represented by the union shape of their items."""
    if isinstance(value, dict):
        return {k: shape(v) for k, v in value.items()}
    if isinstance(value, list):
        merged: dict = {}
        for item in value:
            s = shape(item)
            if isinstance(s, dict):
                merged.update(s)
            else:
                merged.setdefault("<scalar>", s)
        return ["list", merged]
    return "null" if value is None else type(value).__name__


def assert_same_shape(actual, expected, path="$"):
    sa, se = shape(actual), shape(expected)
    assert sa == se, f"shape differs at {path}: {json.dumps(sa)[:400]} != {json.dumps(se)[:400]}"


def test_menu_samples(client):
    assert_same_shape(client.get("/").json(), sample("root.json"))
    assert_same_shape(get(client), sample("menu_main.json"))
    ok(client, action="menu_select", option="singleplayer")
    assert_same_shape(ok(client, action="menu_select", option="standard"),
                      sample("menu_character_select.json"))


def test_combat_rewards_and_error_samples(server, client):
    new_run(client)

    def setup(game):
        run = game.run
        run.room = CombatRoom("monster")
        run.combat = Combat(run, "monster", ("GNAT", "GNAT"), random.Random(5))
        run.combat.hand = [Card(1, "STRIKE"), Card(2, "DEFEND"), Card(3, "CYCLONE"),
                           Card(4, "DOUBT"), Card(5, "CRUSH")]
    arrange(server, setup)
    assert_same_shape(get(client), sample("state_monster.json"))
    assert_same_shape(post(client, action="play_card", card_index=0, target="GNAT_0"),
                      sample("action_ok.json"))
    get(client)
    arrange(server, lambda g: [setattr(e, "hp", 1) for e in g.run.combat.enemies])
    rewards = ok(client, action="play_card", card_index=1)
    assert rewards["state_type"] == "rewards"
    assert_same_shape(rewards, sample("state_rewards.json"))
    assert_same_shape(client.get("/api/v1/compendium").json()["current_run"],
                      sample("compendium_current_run.json"))
    assert_same_shape(post(client, action="claim_reward", index=9),
                      sample("error_action.json"))
    reply = client.post(SP, content=b"{")
    assert reply.status_code == 400
    assert_same_shape(reply.json(), sample("error_transport_400.json"))
    reply = client.post(SP, json={"action": "claim_reward", "index": "0"})
    assert reply.status_code == 500
    assert_same_shape(reply.json(), sample("error_typed_param_500.json"))
    reply = client.get("/api/v1/multiplayer")
    assert reply.status_code == 409
    assert_same_shape(reply.json(), sample("error_multiplayer_409.json"))
