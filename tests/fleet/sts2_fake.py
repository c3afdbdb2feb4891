"""A game machine running STS2 with the STS2MCP mod, faked: a real HTTP server on 127.0.0.1
whose answers can be held, so a test decides what is in flight when it kills a Ray worker.

Wire format as the mod sends it (Gennadiyev/STS2MCP @ 2fb5390):

* ``GET /api/v1/singleplayer`` answers the state: here always the main menu,
  ``vendor/sts2mcp/menu__main.json`` (McpMod.StateBuilder.cs ``BuildGameState``);
* ``POST /api/v1/singleplayer`` answers ``vendor/sts2mcp/reply__ok.json`` (McpMod.Actions.cs,
  every handler: HTTP 200 ``{status: "ok", message}``);
* both as ``application/json; charset=utf-8`` with a Content-Length (McpMod.Helpers.cs
  ``SendJson``).

``hold_gets`` / ``hold_posts`` keep those requests unanswered until ``release()`` (or the
server stops); ``gets`` and ``posts`` count what arrived, ``held`` what is waiting now.
"""

from __future__ import annotations

import json
import os
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

SAMPLES = os.path.join(
    os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "vendor", "sts2mcp"
)
STATE_PATH = "/api/v1/singleplayer"


def _sample(name: str) -> bytes:
    with open(os.path.join(SAMPLES, name), encoding="utf-8") as fh:
        return json.dumps(json.load(fh)).encode("utf-8")


class FakeSts2Game:
    def __init__(self) -> None:
        self.state, self.ok = _sample("menu__main.json"), _sample("reply__ok.json")
        self.hold_gets = self.hold_posts = False
        self.gets = self.posts = self.held = 0
        self._lock = threading.Lock()
        self._release = threading.Event()
        self._stopping = threading.Event()
        game = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args) -> None:
                pass

            def do_GET(self) -> None:
                game._answer(self, "gets", game.hold_gets, game.state)

            def do_POST(self) -> None:
                self.rfile.read(int(self.headers.get("Content-Length") or 0))
                game._answer(self, "posts", game.hold_posts, game.ok)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.base_url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self._thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self._thread.start()

    def _answer(self, handler: BaseHTTPRequestHandler, counter: str, hold: bool, body: bytes) -> None:
        if handler.path != STATE_PATH:
            handler.send_error(404)
            return
        with self._lock:
            setattr(self, counter, getattr(self, counter) + 1)
        if hold:
            with self._lock:
                self.held += 1
            self._release.wait()
            with self._lock:
                self.held -= 1
            if self._stopping.is_set():
                return
        try:
            handler.send_response(200)
            handler.send_header("Content-Type", "application/json; charset=utf-8")
            handler.send_header("Content-Length", str(len(body)))
            handler.end_headers()
            handler.wfile.write(body)
        except OSError:
            pass  # the asker is gone (its process was killed)

    def release(self) -> None:
        self.hold_gets = self.hold_posts = False
        self._release.set()

    def reset(self, *, hold_gets: bool = False, hold_posts: bool = False) -> None:
        self._release.set()
        with self._lock:
            self.gets = self.posts = 0
        self._release = threading.Event()
        self.hold_gets, self.hold_posts = hold_gets, hold_posts

    def stop(self) -> None:
        self._stopping.set()
        self._release.set()
        self.server.shutdown()
        self.server.server_close()
