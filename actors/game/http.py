"""The HTTP server: ``start_server(...) -> GameServer`` and the request handler.

Routes (the STS2MCP API, plus our ``/__gamerig/stats``):

    GET  /                              hello
    GET  /api/v1/singleplayer           state (``?format=markdown`` for text)
    POST /api/v1/singleplayer           action ("ok" means queued)
    GET|POST /api/v1/multiplayer        409 while a singleplayer run is active
    GET  /api/v1/profile, /api/v1/compendium, /api/v1/wiki
    GET|POST /api/v1/profiles
    GET  /__gamerig/stats               counters (see ``GameServer.stats``)
    OPTIONS *                           204;  unknown path 404;  wrong method 405

Game exceptions become HTTP replies in one place, ``Handler._post_action``.
"""

from __future__ import annotations

import json
import socket
import threading
import traceback
from collections import Counter
import socketserver
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

from . import endpoints, markdown
from .engine import Game
from .errors import ParamTypeError
from .intent_check import HEADER, IntentChecker
from .knobs import Knobs

SP = "/api/v1/singleplayer"
MP = "/api/v1/multiplayer"
ROUTES: dict[str, tuple[str, ...]] = {
    "/": ("GET",),
    SP: ("GET", "POST"),
    MP: ("GET", "POST"),
    "/api/v1/profile": ("GET",),
    "/api/v1/compendium": ("GET",),
    "/api/v1/wiki": ("GET",),
    "/api/v1/profiles": ("GET", "POST"),
    "/__gamerig/stats": ("GET",),
}


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def server_bind(self) -> None:
        # HTTPServer.server_bind resolves getfqdn(host): a slow reverse lookup, unneeded
        socketserver.TCPServer.server_bind(self)
        host, port = self.server_address[:2]
        self.server_name, self.server_port = host, port


class GameServer:
    """A running built-in game: ``.port``, ``.url``, ``.stats()``, ``.shutdown()``."""

    def __init__(self, host: str, port: int, seed: int, knobs: Knobs | None,
                 journal_path: str | None) -> None:
        self.game = Game(seed, knobs)
        self.intent = IntentChecker(journal_path)
        self.actions_by_name: Counter[str] = Counter()
        self.httpd = _Server((host, port), Handler)
        self.httpd.game_server = self  # type: ignore[attr-defined]
        self.host = host
        self.port = self.httpd.server_address[1]
        self.url = f"http://{host}:{self.port}"
        self.thread = threading.Thread(target=self.httpd.serve_forever, args=(0.05,),
                                       name="gamerig-game-http", daemon=True)

    def start(self) -> "GameServer":
        self.thread.start()
        return self

    def stats(self) -> dict:
        """Counters for tests and the supervisor.

        ``duplicate_guarded_actions`` counts POSTs a careful bot never sends: a toggle that
        would deselect an already selected card (or overfill a hand selection), a purchase
        of an already-bought shop slot, a click on an already-revealed crystal cell, a
        second treasure claim or rest choice in the same room. They are answered as usual
        (an error, or for grid toggles ``ok``) and counted when the POST arrives.
        """
        with self.game.lock:
            g = self.game.stats()
            by_name = dict(sorted(self.actions_by_name.items()))
        out = self.intent.stats()
        out.update({"actions_by_name": by_name,
                    "duplicate_guarded_actions": g["duplicate_guarded_actions"],
                    "screens_seen": g["screens_seen"], "runs_started": g["runs_started"],
                    "seed": g["seed"], "reads": g["reads"],
                    "dropped_effects": g["dropped_effects"]})
        return out

    def shutdown(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
        if self.thread.is_alive():
            self.thread.join(timeout=5)


def start_server(host: str, port: int, seed: int, knobs: Knobs | None = None,
                 journal_path: str | None = None) -> GameServer:
    """Bind (port 0 = any free port) and serve in a background thread."""
    return GameServer(host, port, seed, knobs, journal_path).start()


class Handler(BaseHTTPRequestHandler):
    server_version = "gamerig-game/1"
    protocol_version = "HTTP/1.1"

    @property
    def gs(self) -> GameServer:
        return self.server.game_server  # type: ignore[attr-defined]

    def setup(self) -> None:
        super().setup()
        # headers and body go out as two writes; without NODELAY, Nagle plus delayed
        # ACKs add ~40 ms to every keep-alive request
        self.request.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
        pass

    # ----- plumbing ----------------------------------------------------------------
    def _send(self, status: int, body: Any, content_type: str = "application/json") -> None:
        data = body.encode() if isinstance(body, str) else json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", content_type + "; charset=utf-8")
        self.send_header("Content-Length", str(len(data)))
        self.send_header("Access-Control-Allow-Origin", "*")
        self._headers_buffer.append(b"\r\n" + data)  # one write: headers and body
        self.flush_headers()

    def _route(self, method: str) -> tuple[str, dict[str, str]] | None:
        parts = urlsplit(self.path)
        path = parts.path.rstrip("/") or "/"
        query = {k: v[-1] for k, v in parse_qs(parts.query).items()}
        if path not in ROUTES:
            self._drain()
            self._send(404, {"error": f"Not found: {path}"})
            return None
        if method not in ROUTES[path]:
            self._drain()
            self._send(405, {"error": f"Method {method} not allowed on {path}"})
            return None
        return path, query

    def _drain(self) -> bytes:
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(length) if length > 0 else b""

    # ----- verbs -------------------------------------------------------------------
    def do_OPTIONS(self) -> None:  # noqa: N802
        self._drain()
        self.send_response(204)
        self.send_header("Access-Control-Allow-Origin", "*")
        self.send_header("Access-Control-Allow-Methods", "GET, POST, OPTIONS")
        self.send_header("Access-Control-Allow-Headers", "Content-Type")
        self.send_header("Content-Length", "0")
        self.end_headers()

    def do_PUT(self) -> None:  # noqa: N802
        self._route("PUT")

    def do_DELETE(self) -> None:  # noqa: N802
        self._route("DELETE")

    def do_PATCH(self) -> None:  # noqa: N802
        self._route("PATCH")

    def do_GET(self) -> None:  # noqa: N802
        routed = self._route("GET")
        if routed is None:
            return
        path, query = routed
        game = self.gs.game
        with game.lock:
            if path == "/":
                status, body = endpoints.root()
            elif path == SP:
                return self._get_state(query)
            elif path == MP:
                if game.run is None:
                    return self._get_state(query)
                status, body = 409, {"error": "A singleplayer run is in progress"}
            elif path == "/api/v1/profile":
                status, body = endpoints.profile(game)
            elif path == "/api/v1/compendium":
                status, body = endpoints.compendium(game)
            elif path == "/api/v1/wiki":
                status, body = endpoints.wiki(game, query)
            elif path == "/api/v1/profiles":
                status, body = endpoints.profiles_get(game)
            else:
                status, body = 200, None
        if path == "/__gamerig/stats":
            body = self.gs.stats()
        self._send(status, body)

    def _get_state(self, query: dict[str, str]) -> None:
        try:
            state = self.gs.game.state()
        except Exception as exc:  # a state-building failure is a 500 with its trace
            self._send(500, {"error": f"Failed to build state: {exc}",
                             "exception_type": type(exc).__name__,
                             "stack_trace": traceback.format_exc()})
            return
        if query.get("format") == "markdown":
            self._send(200, markdown.render(state), "text/markdown")
        else:
            self._send(200, state)

    def do_POST(self) -> None:  # noqa: N802
        routed = self._route("POST")
        if routed is None:
            return
        path, _ = routed
        raw = self._drain()
        if path == SP:
            self.gs.intent.check(self.headers.get(HEADER), _loads(raw))
        try:
            body = json.loads(raw)
        except ValueError:
            self._send(400, {"error": "Invalid JSON"})
            return
        if not isinstance(body, dict):
            self._send(400, {"error": "Invalid JSON: expected an object"})
            return
        if path == "/api/v1/profiles":
            with self.gs.game.lock:
                status, reply = endpoints.profiles_post(self.gs.game, body)
            self._send(status, reply)
            return
        self._post_action(path, body)

    def _post_action(self, path: str, body: dict) -> None:
        """The one place where game exceptions become HTTP replies."""
        if "action" not in body:
            self._send(400, {"error": "Missing 'action' field"})
            return
        name = body["action"]
        if not isinstance(name, str):
            self._send(500, {"error": f"Internal error: 'action' must be a string, "
                                      f"got {type(name).__name__}"})
            return
        game = self.gs.game
        with game.lock:
            if path == MP:
                if game.run is not None:
                    status, reply = 409, {"error": "A singleplayer run is in progress"}
                else:
                    status, reply = 200, {"status": "error",
                                          "error": "No multiplayer run in progress"}
                self._send(status, reply)
                return
            self.gs.actions_by_name[name] += 1
            try:
                status, reply = game.act(body)
            except ParamTypeError as exc:
                status, reply = 500, {"error": f"Action failed: {exc}"}
            except Exception as exc:  # pragma: no cover - a bug; keep serving
                status, reply = 500, {"error": f"Internal error: {exc}"}
        self._send(status, reply)


def _loads(raw: bytes) -> Any:
    try:
        return json.loads(raw)
    except ValueError:
        return None
