"""The one HTTP adapter: both error shapes, and a transport failure is unknown, never retried.

The game is the real built-in server on 127.0.0.1; the dropping proxy stands in for a real
network fault at the outer edge (it forwards a POST to the game, then drops the connection).
"""

from __future__ import annotations

import http.server
import json
import os
import resource
import socket
import subprocess
import sys
import threading
import time

import httpx
import pytest

from actors.game.http import start_server
from actors.game_address import BaseUrl, parse_base_url
from actors.sts2mcp import GameClient, ReadFailed
from tests.fuzz.hostile_http import HostileGame
from tests.harness import REPO

pytestmark = pytest.mark.timeout(120)


@pytest.fixture
def game():
    server = start_server("127.0.0.1", 0, 1)
    yield server
    server.shutdown()


def test_ok_is_accepted_and_both_error_shapes_are_rejected(game):
    c = GameClient(game.url, 5)
    assert c.read_state()["state_type"] == "menu"
    ok = c.send_action("menu_select", {"option": "singleplayer"}, "a-1")
    assert ok.outcome == "accepted" and ok.http_status == 200 and ok.response["status"] == "ok"
    refused = c.send_action("end_turn", {}, "a-2")  # 200 with status: error
    assert refused.outcome == "rejected" and refused.http_status == 200 and refused.error
    typed = c.send_action("menu_select", {"option": 5}, "a-3")  # a 500 with {"error": ...}
    assert typed.outcome == "rejected" and typed.http_status == 500 and "error" in typed.response
    c.close()


def test_refused_connections_and_timeouts_are_unknown():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # nothing listens here once the socket is closed
    c = GameClient(f"http://127.0.0.1:{port}", 1)
    assert c.send_action("end_turn", {}, "a-1").outcome == "unknown"
    silent = socket.socket()
    silent.bind(("127.0.0.1", 0))
    silent.listen()  # accepts, never answers
    c = GameClient(f"http://127.0.0.1:{silent.getsockname()[1]}", 0.5)
    out = c.send_action("end_turn", {}, "a-2")
    assert out.outcome == "unknown" and "timed out" in out.error
    silent.close()


class DroppingProxy(http.server.ThreadingHTTPServer):
    """Forwards to the game; the POST number ``drop`` is forwarded, then its answer dropped."""

    def __init__(self, target: str, drop: int):
        self.target, self.drop, self.posts = target, drop, 0
        super().__init__(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.serve_forever, daemon=True).start()


class Handler(http.server.BaseHTTPRequestHandler):
    def log_message(self, *a):
        pass

    def _forward(self, method: str):
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0)) if method == "POST" else None
        r = httpx.request(
            method,
            self.server.target + self.path,
            content=body,
            timeout=5,
            headers={k: v for k, v in self.headers.items() if k.lower().startswith("x-")},
        )
        if method == "POST":
            self.server.posts += 1
            if self.server.posts == self.server.drop:
                self.close_connection = True
                self.connection.shutdown(socket.SHUT_RDWR)  # the game took it; the answer is lost
                return
        self.send_response(r.status_code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(r.content)))
        self.end_headers()
        self.wfile.write(r.content)

    def do_GET(self):
        self._forward("GET")

    def do_POST(self):
        self._forward("POST")


def test_a_dropped_answer_is_unknown_never_retried_and_the_next_read_follows_it(session_factory, game):
    proxy = DroppingProxy(game.url, drop=4)
    url = f"http://127.0.0.1:{proxy.server_address[1]}"
    s = session_factory("game.builtin=false", f"game.base_url={url}", args=("--max-steps", "12"))
    assert s.wait() == 0, s.stderr
    results = s.events("action_result")
    unknown = [r for r in results if r["outcome"] == "unknown"]
    assert len(unknown) == 1 and unknown[0]["attempt_id"] == "a-000004" and unknown[0]["error"]
    attempts = s.events("action_attempt")
    assert proxy.posts == len(attempts), "every attempt reached the game exactly once: no retry"
    assert game.stats()["posts"] == len(attempts)
    after = [r for r in s.events("observation") if r.get("after_attempt_id") == "a-000004"]
    assert len(after) == 1, "the next successful read carries the unknown attempt's id"
    proxy.shutdown()


# -- hostile answers: the real game behind a server that spoils answers --

TIMEOUT_S = 1.0
#: fault -> (the failed read's kind, words in its message)
READ_FAULTS = {
    "not_json": ("decode", "not JSON"),
    "not_utf8": ("decode", "not JSON"),
    "nan": ("decode", "not JSON"),
    "deep": ("decode", "not JSON"),
    "list": ("shape", "expected a JSON object"),
    "wrong_types": ("shape", "'state_type'"),
    "empty": ("decode", "not JSON"),
    "declared_huge": ("size", "declares"),
    "endless": ("size", "exceeds the limit"),
    "drip": ("transport", "still arriving"),
    "slow": ("transport", "timed out"),
    "teapot": ("decode", "HTTP 418"),
    "redirect": ("decode", "HTTP 302"),
    "unavailable": ("http", "HTTP 503"),
    "no_answer": ("transport", "closed the connection without an answer"),
    "garbage_http": ("transport", "not HTTP"),
    "short": ("transport", "1 bytes short of its declared length"),
    "interim": ("transport", "an interim answer (HTTP 102)"),
}
#: fault -> (the action's outcome, words in its error)
POST_FAULTS = {
    "not_json": ("unknown", "not JSON"),
    "nan": ("unknown", "not JSON"),
    "deep": ("unknown", "not JSON"),
    "list": ("unknown", "unexpected HTTP 200"),
    "wrong_types": ("unknown", "without status ok or error"),
    "empty": ("unknown", "not JSON"),
    "declared_huge": ("unknown", "declares"),
    "endless": ("unknown", "exceeds the limit"),
    "drip": ("unknown", "still arriving"),
    "teapot": ("unknown", "not JSON"),
    "redirect": ("unknown", "not JSON"),
    "unavailable": ("rejected", "Service Unavailable"),
    "no_answer": ("unknown", "closed the connection without an answer"),
    "garbage_http": ("unknown", "not HTTP"),
    "short": ("unknown", "1 bytes short of its declared length"),
    "interim": ("unknown", "an interim answer (HTTP 102)"),
}


@pytest.mark.parametrize("fault", sorted(READ_FAULTS))
def test_a_hostile_answer_to_a_read_is_a_named_failed_read_and_the_next_read_works(game, fault):
    hostile = HostileGame(game.url, {("GET", 1): fault}, slow_s=TIMEOUT_S + 2)
    client = GameClient(hostile.url, TIMEOUT_S)
    started = time.monotonic()
    with pytest.raises(ReadFailed) as info:
        client.read_state()
    took = time.monotonic() - started
    kind, words = READ_FAULTS[fault]
    assert (info.value.kind, words in str(info.value)) == (kind, True), str(info.value)[:300]
    assert took < 2 * TIMEOUT_S + 1, f"{fault}: the read took {took:.1f}s"
    assert client.read_state()["state_type"] == "menu", "the adapter recovers at once"
    client.close()
    hostile.shutdown()


@pytest.mark.parametrize("fault", sorted(POST_FAULTS))
def test_a_hostile_answer_to_an_action_is_unknown_or_rejected_and_never_resent(game, fault):
    hostile = HostileGame(game.url, {("POST", 1): fault})
    client = GameClient(hostile.url, TIMEOUT_S)
    started = time.monotonic()
    out = client.send_action("menu_select", {"option": "singleplayer"}, "a-1")
    took = time.monotonic() - started
    outcome, words = POST_FAULTS[fault]
    assert (out.outcome, words in (out.error or "")) == (outcome, True), out
    assert took < 2 * TIMEOUT_S + 1, f"{fault}: the action took {took:.1f}s"
    assert len(json.dumps(out.response)) < 4096, "a hostile body is not carried into the record"
    assert hostile.forwarded_posts == 1 and game.stats()["posts"] == 1, "sent exactly once"
    assert client.read_state()["menu_screen"] == "singleplayer", "the game took it"
    client.close()
    hostile.shutdown()


def test_a_session_under_hostile_answers_records_every_one_and_no_actor_dies(session_factory, game):
    """Whole processes: the observer and the actuator against spoiled answers. Every failed
    read is an observation_error naming its kind, every spoiled action answer an unknown
    result (sent once), no actor exits unexpectedly, and the capture verifies intact."""
    reads = {3: "not_json", 5: "deep", 7: "endless", 9: "drip", 11: "wrong_types"}
    posts = {2: "deep", 4: "endless", 6: "drip", 8: "garbage_http"}
    hostile = HostileGame(
        game.url, {**{("GET", n): f for n, f in reads.items()}, **{("POST", n): f for n, f in posts.items()}}
    )
    s = session_factory(
        "game.builtin=false",
        f"game.base_url={hostile.url}",
        "game.timeout_s=1",
        "game.identity=false",
        args=("--max-steps", "14"),
    )
    assert s.wait() == 0, s.stderr
    failed = s.events("observation_error")
    assert [r["error_type"] for r in failed] == ["decode", "decode", "size", "transport", "shape"]
    results = {r["attempt_id"]: r for r in s.events("action_result")}
    spoiled = [results[f"a-{n:06d}"] for n in sorted(posts)]
    assert [r["outcome"] for r in spoiled] == ["unknown"] * 4 and all(r["error"] for r in spoiled)
    assert all(len(json.dumps(r["response"])) < 4096 for r in spoiled)
    attempts = s.events("action_attempt")
    assert len(results) == len(attempts), "every attempt has its result"
    assert hostile.forwarded_posts == game.stats()["posts"] == len(attempts), "none resent"
    assert not [r for r in s.events("actor_exit") if not r["expected"]], "no actor died"
    verify = subprocess.run(
        [sys.executable, "-m", "supervisor", "capture", "verify", s.session_dir],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert verify.returncode == 0, verify.stdout
    hostile.shutdown()


class ClosesIdle(http.server.ThreadingHTTPServer):
    """A game that closes every connection once it has answered, without saying so (no
    ``Connection: close``): what a server's idle keep-alive timeout does between two steps.
    The real mod serves with .NET's ``HttpListener`` (``McpMod.cs``, ``Initialize``), which
    closes connections idle past ``HttpListenerTimeoutManager.IdleConnection``."""

    daemon_threads = True

    def __init__(self):
        self.posts, self.closed = 0, threading.Semaphore(0)
        super().__init__(("127.0.0.1", 0), ClosesIdleHandler)
        threading.Thread(target=self.serve_forever, daemon=True).start()

    def shutdown_request(self, request):
        super().shutdown_request(request)
        self.closed.release()  # the connection is gone on this side


class ClosesIdleHandler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *a):
        pass

    def _answer(self, body: dict):
        data = json.dumps(body).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)
        self.close_connection = True

    def do_GET(self):
        self._answer({"state_type": "menu"})

    def do_POST(self):
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        self.server.posts += 1
        self._answer({"status": "ok"})


def test_a_connection_the_game_closed_while_idle_is_replaced_before_the_action_goes():
    """Without the check before reuse, the POST goes out on the dead connection and comes
    back ``unknown`` (the game closed it without an answer) although the game never saw it."""
    server = ClosesIdle()
    client = GameClient(f"http://127.0.0.1:{server.server_address[1]}", 5)
    assert client.read_state()["state_type"] == "menu"
    for n in range(1, 4):
        assert server.closed.acquire(timeout=10), "the game closed the connection"
        out = client.send_action("end_turn", {}, f"a-{n}")
        assert out.outcome == "accepted", out
        assert server.posts == n, "each action reached the game exactly once"
    client.close()
    server.shutdown()


class RawGame:
    """A server on 127.0.0.1 that takes each connection's request and then runs ``script(conn,
    stop)`` — HTTP as a broken server might write it, byte for byte. ``close()`` ends it."""

    def __init__(self, script):
        self.listener = socket.socket()
        self.listener.bind(("127.0.0.1", 0))
        self.listener.listen()
        self.url = f"http://127.0.0.1:{self.listener.getsockname()[1]}"
        self.stop = threading.Event()
        threading.Thread(target=self._serve, args=(script,), daemon=True).start()

    def _serve(self, script):
        while not self.stop.is_set():
            try:
                conn, _ = self.listener.accept()
            except OSError:
                return
            with conn:
                conn.recv(65536)
                try:
                    script(conn, self.stop)
                except OSError:  # the client hung up: its right
                    pass

    def close(self):
        self.stop.set()
        self.listener.close()


def late_headers_then_nothing(conn, stop):
    stop.wait(1.0)  # half the client's timeout
    conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 40\r\nConnection: close\r\n\r\n{")
    stop.wait(30)


def endless_continue(conn, stop):
    """``100 Continue`` after ``100 Continue``, each at once: http.client skips them in a loop
    of its own, every read answered, so no per-read timeout ever fires."""
    end = time.monotonic() + 8  # (a client without the bound fails in 8 s, not at the test's timeout)
    while not stop.wait(0.01) and time.monotonic() < end:
        conn.sendall(b"HTTP/1.1 100 Continue\r\n\r\n" * 50)


def endless_trailers(conn, stop):
    conn.sendall(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n")
    end = time.monotonic() + 8
    while not stop.wait(0.01) and time.monotonic() < end:
        conn.sendall(b"X-Trailer: 1\r\n" * 50)


@pytest.mark.parametrize("script", [late_headers_then_nothing, endless_continue, endless_trailers])
def test_the_whole_answer_is_bounded_by_the_timeout(script):
    """Each read of the answer — status line, headers, body, trailers — gets only the time
    left of ``timeout_s`` (2 s here): headers sent late with ``Connection: close`` and then no
    body (``http.client`` hands such an answer its own socket), an endless run of interim
    answers, endless trailers. Before, these took 3 s, and the last two as long as the game
    kept sending."""
    game = RawGame(script)
    client = GameClient(game.url, 2.0)
    started = time.monotonic()
    with pytest.raises(ReadFailed) as info:
        client.read_state()
    read_took = time.monotonic() - started
    started = time.monotonic()
    out = client.send_action("end_turn", {}, "a-1")
    post_took = time.monotonic() - started
    game.close()
    text = str(info.value)
    assert info.value.kind == "transport" and ("within 2s" in text or "after 2s" in text), text
    assert out.outcome == "unknown" and out.error, out
    assert read_took < 2.6 and post_took < 2.6, f"{read_took:.2f}s, {post_took:.2f}s with timeout_s 2"


def test_a_failed_answer_lets_go_of_its_connection_at_once():
    """An answer that said ``Connection: close`` holds the socket itself; when its body then
    fails, the connection is closed at once — not whenever the error is collected."""
    closed = threading.Event()

    def half_an_answer(conn, stop):
        conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 40\r\nConnection: close\r\n\r\n{")
        conn.settimeout(10)
        if conn.recv(1) == b"":
            closed.set()  # the client's end of the connection is closed

    game = RawGame(half_an_answer)
    client = GameClient(game.url, 0.5)
    with pytest.raises(ReadFailed) as info:
        client.read_state()
    assert closed.wait(5), f"the connection stays open while the error is held: {info.value}"
    game.close()


def test_a_connection_on_a_descriptor_above_1024_is_checked_and_reused(game):
    """The idle check before reuse works whatever the descriptor's number (``select()`` refuses
    one above 1024: a long session with many files open would lose every second request)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard != resource.RLIM_INFINITY and hard < 1200:
        pytest.skip(f"the open-files limit is {hard}: no descriptor above 1024 to test")
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, 1200), hard))
    held = []
    try:
        while len(held) < 1100:
            held.append(os.open(os.devnull, os.O_RDONLY))
        client = GameClient(game.url, 5)
        assert client.read_state()["state_type"] == "menu"
        assert client.conn.sock.fileno() > 1024
        assert client.read_state()["state_type"] == "menu", "the second request on the same connection"
        assert client.send_action("end_turn", {}, "a-1").outcome == "rejected"
        client.close()
    finally:
        for fd in held:
            os.close(fd)
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))


@pytest.mark.parametrize(
    "url,words",
    [
        ("127.0.0.1:15526", "is not an http:// or https:// address"),
        ("http://:15526", "names no host"),
        ("http://h:0", "port 0 is not an address"),
        ("http://:secret@h:1", "no query, fragment or credentials"),
        ("http://h:1/?x=1", "no query, fragment or credentials"),
        ("http://game host:15526", "a space or control character"),
        ("http://h:1/a b", "a space or control character"),
        ("http://[::1:8080", "'http://[::1:8080' is not a valid address"),
        ("http://h:port", "is not a valid address"),
    ],
)
def test_a_bad_game_address_is_refused_naming_it(url, words):
    with pytest.raises(ValueError) as info:
        GameClient(url, 1.0)
    assert words in str(info.value) and url in str(info.value), str(info.value)


def test_good_game_addresses_are_taken_apart():
    assert parse_base_url("http://[::1]:8080") == BaseUrl("http", "::1", 8080, "")
    assert parse_base_url("http://localhost:15526/") == BaseUrl("http", "localhost", 15526, "")
    assert parse_base_url("https://game.example/pre/fix/") == BaseUrl("https", "game.example", 443, "/pre/fix")
    assert parse_base_url("http://127.0.0.1") == BaseUrl("http", "127.0.0.1", 80, "")
