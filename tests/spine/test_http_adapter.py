"""The one HTTP adapter: both error shapes, and a transport failure is unknown, never retried.

The game is the real built-in server on 127.0.0.1; the dropping proxy stands in for a real
network fault at the outer edge (it forwards a POST to the game, then drops the connection).
"""
from __future__ import annotations

import http.server
import socket
import threading

import httpx
import pytest

from actors.game.http import start_server
from actors.sts2mcp import GameClient

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
    assert out.outcome == "unknown" and "Timeout" in out.error
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
        r = httpx.request(method, self.server.target + self.path, content=body, timeout=5,
                          headers={k: v for k, v in self.headers.items() if k.lower().startswith("x-")})
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
