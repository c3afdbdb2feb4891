"""Fixtures: a started fake OpenAI server, and clients pointed at it with a test key.

The key lives only in the ``environ`` mapping handed to the client (never ``os.environ``), so
tests can prove it is sent on the wire and absent from every record.
"""

from __future__ import annotations

import dataclasses
import struct
import zlib

import pytest

from actors.model_client import CardRewardQuestion, ModelConfig
from actors.model_client.client import ModelClient
from tests.fakes.openai_server import FakeOpenAIServer

SECRET = "sk-test-9f3c2a7e-DO-NOT-LEAK-41b8"
KEY_ENV = "GAMERIG_TEST_MODEL_KEY"

CARDS = [
    {
        "index": 0,
        "id": "STRIKE",
        "name": "Strike",
        "type": "Attack",
        "cost": "1",
        "rarity": "Basic",
        "description": "Deal 6 damage.",
    },
    {
        "index": 1,
        "id": "INFLAME",
        "name": "Inflame",
        "type": "Power",
        "cost": "1",
        "rarity": "Uncommon",
        "description": "Gain 2 Strength.",
    },
    {
        "index": 2,
        "id": "CLEAVE",
        "name": "Cleave",
        "type": "Attack",
        "cost": "1",
        "rarity": "Common",
        "description": "Deal 8 damage to ALL enemies.",
    },
]


def card_question(**overrides) -> CardRewardQuestion:
    fields = {"cards": CARDS, "evidence": {"hp": 60, "max_hp": 80, "floor": 3}}
    fields.update(overrides)
    return CardRewardQuestion(**fields)


def card_answer(index, confidence=0.9, reason="strength scales") -> dict:
    return {"q0": {"card_index": index, "confidence": confidence, "reason": reason}}


def tiny_png() -> bytes:
    """A valid 1x1 grey PNG."""

    def chunk(tag: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + tag + data + struct.pack(">I", zlib.crc32(tag + data) & 0xFFFFFFFF)

    header = struct.pack(">IIBBBBB", 1, 1, 8, 0, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(b"\x00\x80")) + chunk(b"IEND", b"")
    )


@pytest.fixture
def server():
    with FakeOpenAIServer() as fake:
        yield fake


@pytest.fixture
def make_client():
    """``make_client(server, **config_overrides)``; every client is closed at teardown."""
    made = []

    def make(fake: FakeOpenAIServer, **overrides) -> ModelClient:
        config = ModelConfig(
            base_url=fake.base_url,
            model="test-model",
            api_key_env=KEY_ENV,
            timeout_s=2.0,
            max_retries=2,
            backoff_s=0.01,
            backoff_max_s=0.05,
        )
        environ = overrides.pop("environ", {KEY_ENV: SECRET})
        stop_event = overrides.pop("stop_event", None)
        client = ModelClient(dataclasses.replace(config, **overrides), environ=environ, stop_event=stop_event)
        made.append(client)
        return client

    yield make
    for client in made:
        client.close()
