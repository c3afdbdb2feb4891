"""Fixtures for the built-in game's tests: a real server on 127.0.0.1:0 and httpx clients.

Helpers wait on conditions with deadlines (never sleep-and-hope):

    new_run(client)          main menu → singleplayer → standard → character → embark,
                             dismissing the tutorial prompt; returns the first run state
    drive(client, until)     let the test bot play until ``until(state)`` holds
    arrange(server, fn)      run ``fn(game)`` under the game lock (white-box set-up of a
                             screen; the assertions then go through HTTP)
"""

from __future__ import annotations

import ssl
import time
from collections.abc import Callable, Iterator

import httpx
import pytest

from actors.game.http import GameServer, start_server
from actors.game.knobs import Knobs

from .bot import Memory, decide

SP = "/api/v1/singleplayer"
_SSL = ssl.create_default_context()  # built once: httpx would load CA files per client


def http_client(url: str) -> httpx.Client:
    return httpx.Client(base_url=url, timeout=5.0, verify=_SSL)


@pytest.fixture
def make_server() -> Iterator[Callable[..., GameServer]]:
    servers: list[GameServer] = []

    def make(seed: int = 1, knobs: Knobs | None = None, journal_path: str | None = None) -> GameServer:
        srv = start_server("127.0.0.1", 0, seed, knobs, journal_path)
        servers.append(srv)
        return srv

    yield make
    for srv in servers:
        srv.shutdown()


@pytest.fixture
def server(make_server) -> GameServer:
    return make_server(1)


@pytest.fixture
def client(server) -> Iterator[httpx.Client]:
    with http_client(server.url) as c:
        yield c


def get(client: httpx.Client) -> dict:
    reply = client.get(SP)
    assert reply.status_code == 200, reply.text
    return reply.json()


def post(client: httpx.Client, **body) -> dict:
    reply = client.post(SP, json=body)
    assert reply.status_code == 200, reply.text
    return reply.json()


def ok(client: httpx.Client, **body) -> dict:
    """POST an action that must be accepted, then return the next state."""
    reply = post(client, **body)
    assert reply["status"] == "ok", reply
    return get(client)


def refused(client: httpx.Client, **body) -> str:
    reply = post(client, **body)
    assert reply["status"] == "error", reply
    assert set(reply) == {"status", "error"}
    return reply["error"]


def wait_for(client: httpx.Client, until: Callable[[dict], bool], reads: int = 20) -> dict:
    """Read until ``until(state)`` holds, at most ``reads`` reads."""
    for _ in range(reads):
        state = get(client)
        if until(state):
            return state
    raise AssertionError(f"condition not reached in {reads} reads; last: {state}")


def new_run(client: httpx.Client, character: str = "ironbound") -> dict:
    ok(client, action="menu_select", option="singleplayer")
    ok(client, action="menu_select", option="standard")
    ok(client, action="menu_select", option=character)
    state = ok(client, action="menu_select", option="embark")
    while state["state_type"] in ("menu", "unknown"):  # loading, then the tutorial prompt
        if state["state_type"] == "menu":  # "no": no first-time tutorials in these tests
            option = (
                "no"
                if state["menu_screen"] == "tutorial_prompt"
                else next(o["name"] for o in state["options"] if o["enabled"])
            )
            state = ok(client, action="menu_select", option=option)
        else:
            state = get(client)
    return state


def drive(
    client: httpx.Client,
    until: Callable[[dict], bool],
    style: str = "smart",
    max_actions: int = 400,
    deadline_s: float = 15.0,
    mem: Memory | None = None,
) -> dict:
    """Let the bot play until ``until(state)``; fail on budget or deadline."""
    mem = mem or Memory(style=style)
    end = time.monotonic() + deadline_s
    actions = 0
    while actions <= max_actions and time.monotonic() < end:
        state = get(client)
        if until(state):
            return state
        body = decide(state, mem)
        if body is not None:
            post(client, **body)
            actions += 1
    raise AssertionError(f"state not reached after {actions} actions")


def arrange(server: GameServer, fn: Callable) -> object:
    with server.game.lock:
        return fn(server.game)


def screen(name: str) -> Callable[[dict], bool]:
    return lambda s: s["state_type"] == name
