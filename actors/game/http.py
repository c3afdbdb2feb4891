"""The HTTP server: ``start_server(...) -> GameServer`` and the request handler.

Routing, codes and texts follow McpMod.cs ``HandleRequest`` / ``HandleGetState`` /
``HandlePostAction`` (and ``HandleGetMultiplayerState`` / ``HandlePostMultiplayerAction``):

    OPTIONS any path                    204 (every reply carries the three CORS headers)
    any method /                        hello
    GET  /api/v1/singleplayer           state (``?format=markdown`` for text); 500
                                        ``{error, exception_type, stack_trace}`` if it fails
    POST /api/v1/singleplayer           action ("ok" means queued)
    GET|POST /api/v1/multiplayer        409 unless a multiplayer run is active (and the
                                        singleplayer route 409 while one is: knob
                                        ``multiplayer_run``)
    GET  /api/v1/profile, /api/v1/compendium, /api/v1/wiki;  GET|POST /api/v1/profiles
    other method on a known path        405 "Method not allowed";  unknown path 404 "Not found"

Ours, not the mod's: ``GET /__gamerig/stats`` (counters, ``GameServer.stats``) and
``POST /__gamerig/manual`` (a person at the keyboard closes what needs manual interaction:
an unhandled overlay, the compendium or settings screen). JSON is written indented with
non-ASCII characters as they are, as the mod's serializer options say.
"""

from __future__ import annotations

import json
import socket
import socketserver
import threading
import time
import traceback
from collections import Counter
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

from actors.runtime import hoplog
from actors.sts2mcp import PROFILE_PREFIX, PROFILES_PATH

from . import endpoints, markdown, wiki
from .engine import Game
from .errors import ParamTypeError, read_error
from .intent_check import HEADER, IntentChecker
from .knobs import Knobs
from .screens import overlay

SP = "/api/v1/singleplayer"
MP = "/api/v1/multiplayer"
STATS = "/__gamerig/stats"
MANUAL = "/__gamerig/manual"
ROUTES: dict[str, tuple[str, ...]] = {
    SP: ("GET", "POST"),
    MP: ("GET", "POST"),
    "/api/v1/profiles": ("GET", "POST"),
    "/api/v1/profile": ("GET",),
    "/api/v1/compendium": ("GET",),
    "/api/v1/wiki": ("GET",),
    STATS: ("GET",),
    MANUAL: ("POST",),
}
CORS = (
    ("Access-Control-Allow-Origin", "*"),
    ("Access-Control-Allow-Methods", "GET, POST, OPTIONS"),
    ("Access-Control-Allow-Headers", "Content-Type"),
)
SP_IN_MP = "Multiplayer run is active. Use /api/v1/multiplayer instead."
MP_IN_SP = "Not in a multiplayer run. Use /api/v1/singleplayer instead."


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def server_bind(self) -> None:
        # HTTPServer.server_bind resolves getfqdn(host): a slow reverse lookup, unneeded
        socketserver.TCPServer.server_bind(self)
        host, port = self.server_address[:2]
        self.server_name, self.server_port = host, port


class GameServer:
    """A running built-in game: ``.port``, ``.url``, ``.stats()``, ``.shutdown()``;
    ``.quit_event`` is set once the game's ``quit`` button has closed it."""

    def __init__(self, host: str, port: int, seed: int, knobs: Knobs | None, journal_path: str | None) -> None:
        self.game = Game(seed, knobs)
        self.intent = IntentChecker(journal_path)
        self.actions_by_name: Counter[str] = Counter()
        self.httpd = _Server((host, port), Handler)
        self.httpd.game_server = self  # type: ignore[attr-defined]
        self.times = hoplog.open_log("game-http", buffered=False)  # bench/step_timeline.py only
        self.host = host
        self.port = self.httpd.server_address[1]
        self.url = f"http://{host}:{self.port}"
        self.quit_event = threading.Event()
        self.closed = False
        self.close_lock = threading.Lock()
        self.thread = threading.Thread(
            target=self.httpd.serve_forever, args=(0.05,), name="gamerig-game-http", daemon=True
        )

    def start(self) -> GameServer:
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
        out.update(
            {
                "actions_by_name": by_name,
                "duplicate_guarded_actions": g["duplicate_guarded_actions"],
                "screens_seen": g["screens_seen"],
                "runs_started": g["runs_started"],
                "seed": g["seed"],
                "reads": g["reads"],
                "dropped_effects": g["dropped_effects"],
            }
        )
        return out

    def quit(self) -> None:
        """The game's ``quit`` button: stop serving (from any thread)."""
        self.quit_event.set()
        threading.Thread(target=self.shutdown, name="gamerig-game-quit", daemon=True).start()

    def shutdown(self) -> None:
        with self.close_lock:
            if self.closed:
                return
            self.closed = True
        self.httpd.shutdown()
        self.httpd.server_close()
        if self.thread.is_alive() and threading.current_thread() is not self.thread:
            self.thread.join(timeout=5)


def start_server(
    host: str, port: int, seed: int, knobs: Knobs | None = None, journal_path: str | None = None
) -> GameServer:
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
        data = (body if isinstance(body, str) else json.dumps(body, indent=2, ensure_ascii=False)).encode()
        self.send_response(status)
        self.send_header("Content-Type", content_type + "; charset=utf-8")
        self.send_header("Content-Length", str(len(data)))
        for name, value in CORS:
            self.send_header(name, value)
        if self.command == "HEAD":  # headers only
            data = b""
        self._headers_buffer.append(b"\r\n" + data)  # one write: headers and body
        self.flush_headers()

    def _drain(self) -> bytes:
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(length) if length > 0 else b""

    def _mp_run(self) -> bool:
        """McpMod.cs ``IsMultiplayerRun``: a run in progress that is a multiplayer run."""
        game = self.gs.game
        with game.lock:
            return game.run is not None and bool(game.knobs.multiplayer_run)

    def _handle(self, method: str) -> None:
        """``HandleRequest``: route by exact path, then by method (timed when
        ``GAMERIG_HOPLOG`` is set: ``hoplog``)."""
        began = time.time()
        self._route(method)
        if self.gs.times is not None:
            hoplog.write(self.gs.times, f"H {method} {urlsplit(self.path).path} {began:.6f} {time.time():.6f}\n")

    def _route(self, method: str) -> None:
        parts = urlsplit(self.path)
        path = parts.path
        query = {k: v[-1] for k, v in parse_qs(parts.query).items()}
        raw = self._drain()
        if path == "/":
            self._send(200, endpoints.root()[1])
        elif path not in ROUTES:
            self._send(404, {"error": "Not found"})
        elif path == SP and self._mp_run():
            self._send(409, {"error": SP_IN_MP})
        elif path == MP and not self._mp_run():
            self._send(409, {"error": MP_IN_SP})
        elif method not in ROUTES[path]:
            self._send(405, {"error": "Method not allowed"})
        elif method == "GET":
            self._get(path, query)
        else:
            self._post(path, raw)
        if self.gs.game.quit_requested and not self.gs.quit_event.is_set():
            self.gs.quit()

    # ----- verbs -------------------------------------------------------------------
    def do_OPTIONS(self) -> None:
        self._drain()
        self.send_response(204)
        for name, value in CORS:
            self.send_header(name, value)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def do_GET(self) -> None:
        self._handle("GET")

    def do_POST(self) -> None:
        self._handle("POST")

    def do_PUT(self) -> None:
        self._handle("PUT")

    def do_DELETE(self) -> None:
        self._handle("DELETE")

    def do_PATCH(self) -> None:
        self._handle("PATCH")

    def do_HEAD(self) -> None:
        self._handle("HEAD")

    # ----- GET ---------------------------------------------------------------------
    def _get(self, path: str, query: dict[str, str]) -> None:
        game = self.gs.game
        if path in (SP, MP):
            return self._get_state(query, multiplayer=path == MP)
        if path == STATS:
            return self._send(200, self.gs.stats())
        with game.lock:
            if path == "/api/v1/profile":
                status, body = endpoints.profile(game)
            elif path == "/api/v1/compendium":
                status, body = endpoints.compendium(game)
            elif path == "/api/v1/wiki":
                status, body = wiki.search(game, query)
            else:
                status, body = endpoints.profiles_get(game)
        self._send(status, body)

    def _get_state(self, query: dict[str, str], multiplayer: bool) -> None:
        """``HandleGetState`` (``HandleGetMultiplayerState`` on the multiplayer route)."""
        game = self.gs.game
        try:
            with game.lock:
                state = game.state()
        except Exception as exc:  # noqa: BLE001 - a state-building failure is a 500 with its trace
            what = "multiplayer game state" if multiplayer else "game state"
            self._send(
                500,
                {
                    "error": f"Failed to read {what}: {exc}",
                    "exception_type": f"{type(exc).__module__}.{type(exc).__name__}",
                    "stack_trace": traceback.format_exc(),
                },
            )
            return
        if multiplayer:
            state = endpoints.multiplayer_view(state)
        if query.get("format") == "markdown":
            try:
                return self._send(200, markdown.render(state), "text/markdown")
            except Exception:  # noqa: BLE001 - the mod falls back to JSON when markdown fails
                pass
        self._send(200, state)

    # ----- POST --------------------------------------------------------------------
    def _post(self, path: str, raw: bytes) -> None:
        if path in (SP, PROFILES_PATH):  # every action POST (a profile action's is ``profiles:<verb>``)
            parsed = _loads(raw)
            if path == PROFILES_PATH and isinstance(parsed, dict) and isinstance(parsed.get("action"), str):
                parsed = {**parsed, "action": PROFILE_PREFIX + parsed["action"]}
            self.gs.intent.check(self.headers.get(HEADER), None if parsed is _INVALID else parsed)
        if path == MANUAL:
            return self._manual()
        body = _loads(raw)
        if body is _INVALID or (body is not None and not isinstance(body, dict)):
            return self._send(400, {"error": "Invalid JSON"})
        if path == PROFILES_PATH:
            with self.gs.game.lock:
                status, reply = endpoints.profiles_post(self.gs.game, body)
            return self._send(status, reply)
        if body is None or "action" not in body:
            return self._send(400, {"error": "Missing 'action' field"})
        problem = read_error("String", body["action"])
        if problem:  # GetString() throws; HandleRequest's catch-all answers
            return self._send(500, {"error": f"Internal error: {problem}"})
        body["action"] = body["action"] or ""
        self._post_action(body, multiplayer=path == MP)

    def _post_action(self, body: dict, multiplayer: bool) -> None:
        """``HandlePostAction``: the one place where game exceptions become replies."""
        name = body["action"]
        game = self.gs.game
        if name == "menu_select":
            prefix = "Menu action failed"
        else:
            prefix = "Multiplayer action failed" if multiplayer else "Action failed"
        with game.lock:
            self.gs.actions_by_name[name] += 1
            try:
                status, reply = game.act(body)
            except Exception as exc:  # noqa: BLE001 - the mod answers every exception so
                status, reply = 500, {"error": f"{prefix}: {_message(exc)}"}
        self._send(status, reply)

    def _manual(self) -> None:
        with self.gs.game.lock:
            closed = overlay.manual(self.gs.game)
        if closed is None:
            self._send(200, {"status": "error", "error": "Nothing needs manual interaction"})
        else:
            self._send(200, {"status": "ok", "message": f"Closed {closed}"})


_INVALID = object()


def _loads(raw: bytes) -> Any:
    """The body as System.Text.Json would parse it, or ``_INVALID`` (NaN and Infinity are
    not JSON there)."""
    try:
        return json.loads(raw, parse_constant=_reject)
    except ValueError:
        return _INVALID


def _reject(token: str) -> Any:
    raise ValueError(f"invalid JSON token {token}")


def _message(exc: Exception) -> str:
    return str(exc) if isinstance(exc, ParamTypeError) or str(exc) else type(exc).__name__
