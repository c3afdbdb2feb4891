"""A hostile game in front of the real one: a real HTTP server on 127.0.0.1 that forwards to
the built-in game (``actors.game.http``) and answers chosen requests badly.

    game = start_server("127.0.0.1", 0, 1)
    hostile = HostileGame(game.url, {("GET", 3): "drip", ("POST", 2): "not_json"})
    GameClient(hostile.url, 1.0)...
    hostile.gets, hostile.posts, hostile.forwarded_posts; hostile.shutdown()

A POST that is to be answered badly is forwarded first — the game takes the action, only
its answer is spoiled, as a real network or a buggy mod would — so the adapter must call it
``unknown`` (or ``rejected`` when the answer is a well-formed refusal) and never send it
again. A GET to be answered badly is not forwarded. ``FAULTS`` names every misbehaviour.
The shapes imitate no particular server: they are what HTTP permits a broken one to send.
"""

from __future__ import annotations

import http.server
import threading

import httpx

HUGE = 20 * 1024 * 1024
WHOLE = b'{"state_type": "menu", "status": "ok"}'  # a state and an acceptance alike, if whole


def _body(
    handler,
    status: int,
    data: bytes,
    content_type: str = "application/json",
    length: int | None = None,
    extra: tuple = (),
) -> None:
    handler.send_response(status)
    handler.send_header("Content-Type", content_type)
    handler.send_header("Content-Length", str(len(data) if length is None else length))
    for name, value in extra:
        handler.send_header(name, value)
    if getattr(handler, "fault", None):  # a spoiled answer ends its connection, as HTTP says
        handler.send_header("Connection", "close")
    handler.end_headers()
    handler.wfile.write(data)


def _drip(
    handler, data: bytes = b'{"state_type": "menu", "message": "' + b"x" * 200 + b'"}', every_s: float = 0.1
) -> None:
    handler.send_response(200)
    handler.send_header("Content-Type", "application/json")
    handler.send_header("Content-Length", str(len(data)))
    handler.send_header("Connection", "close")
    handler.end_headers()
    for byte in data:  # each byte well inside any per-read timeout; the whole far too slow
        if handler.server.stopping.wait(every_s):
            return
        handler.wfile.write(bytes([byte]))
        handler.wfile.flush()


def _endless(handler) -> None:
    """A 200 without a length, streamed in 1 MiB chunks until the client hangs up."""
    handler.send_response(200)
    handler.send_header("Content-Type", "application/json")
    handler.send_header("Transfer-Encoding", "chunked")
    handler.send_header("Connection", "close")
    handler.end_headers()
    chunk = b" " * (1 << 20)
    sent = 0
    while sent < HUGE * 2 and not handler.server.stopping.is_set():
        handler.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
        sent += len(chunk)


def _slow(handler) -> None:
    handler.server.stopping.wait(handler.server.slow_s)
    handler.forward()


FAULTS = {
    "not_json": lambda h: _body(h, 200, b'{"state_type": "menu", "options": ["contin'),
    "not_utf8": lambda h: _body(h, 200, b'{"state_type": "\xff\xfe"}'),
    "nan": lambda h: _body(h, 200, b'{"state_type": "menu", "status": "ok", "hp": NaN}'),
    "deep": lambda h: _body(h, 200, b"[" * 200_000 + b"]" * 200_000),
    "list": lambda h: _body(h, 200, b"[1, 2, 3]"),
    "wrong_types": lambda h: _body(h, 200, b'{"state_type": 7, "status": 7}'),
    "empty": lambda h: _body(h, 200, b""),
    "declared_huge": lambda h: _body(h, 200, b"{}", length=HUGE * 4),
    "endless": _endless,
    "drip": _drip,
    "slow": _slow,
    "teapot": lambda h: _body(h, 418, b"<html>I'm a teapot</html>", "text/html"),
    "redirect": lambda h: _body(h, 302, b"", extra=(("Location", "/elsewhere"),)),
    "unavailable": lambda h: _body(h, 503, b'{"error": "Service Unavailable"}'),
    "short": lambda h: _body(h, 200, WHOLE, length=len(WHOLE) + 1),  # a byte short, then closed
    "interim": lambda h: (h.wfile.write(b"HTTP/1.1 102 Processing\r\n\r\n"), _body(h, 200, WHOLE)),
    "no_answer": lambda h: setattr(h, "close_connection", True),
    "garbage_http": lambda h: h.wfile.write(b"HELLO THERE\r\n\r\n"),
}


class HostileGame(http.server.ThreadingHTTPServer):
    """See the module docstring. ``faults`` maps ``(method, n)`` (1-based) to a fault name."""

    daemon_threads = True

    def __init__(self, target: str, faults: dict[tuple[str, int], str], slow_s: float = 3.0):
        self.target, self.faults, self.slow_s = target, dict(faults), slow_s
        self.gets = self.posts = self.forwarded_posts = 0
        self.stopping = threading.Event()
        self.lock = threading.Lock()
        self.forwarder = httpx.Client(base_url=target, timeout=10)
        super().__init__(("127.0.0.1", 0), _Handler)
        threading.Thread(target=self.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"

    def shutdown(self) -> None:
        self.stopping.set()
        super().shutdown()
        self.server_close()
        self.forwarder.close()


class _Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args) -> None:
        pass

    def do_GET(self) -> None:
        self._serve("GET")

    def do_POST(self) -> None:
        self.body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        self._serve("POST")

    def _serve(self, method: str) -> None:
        server: HostileGame = self.server  # type: ignore[assignment]
        with server.lock:
            if method == "GET":
                server.gets += 1
            else:
                server.posts += 1
            fault = server.faults.get((method, server.gets if method == "GET" else server.posts))
        self.fault = fault
        try:
            if fault is None:
                self.forward()
                return
            if method == "POST" and fault != "slow":
                self.forward(answer=False)  # the game takes it; only the answer is spoiled
            FAULTS[fault](self)
        except OSError:  # the client hung up on a fault: that is its right
            pass
        self.close_connection = True if fault else self.close_connection

    def forward(self, answer: bool = True) -> None:
        server: HostileGame = self.server  # type: ignore[assignment]
        method = self.command
        headers = {k: v for k, v in self.headers.items() if k.lower().startswith("x-")}
        if method == "POST":
            headers["Content-Type"] = "application/json"
        reply = server.forwarder.request(method, self.path, headers=headers, content=getattr(self, "body", None))
        if method == "POST":
            with server.lock:
                server.forwarded_posts += 1
        if answer:
            _body(self, reply.status_code, reply.content)
