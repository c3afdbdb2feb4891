"""The live viewer: a small HTTP server on loopback over a ``Catalog``.

Standard library only (``http.server.ThreadingHTTPServer``): the viewer serves a handful of
read-only GET answers and its own static files, which a web framework would not make
shorter or safer. It

* answers ``GET``/``HEAD`` only; any other method is 405;
* answers only requests addressed to the host it listens on (the ``Host`` header must name
  that address, ``localhost`` or ``127.0.0.1``/``[::1]`` on loopback, or a name given with
  ``--allow-host``), so a web page elsewhere cannot read captures through DNS rebinding;
* serves files only from its own ``static/`` folder (by name, from a fixed list) and
  retained frames through ``api.py``, which resolves them inside a session it was given;
  every other path is a 404, and nothing outside the given paths is ever opened;
* sends ``Content-Security-Policy: default-src 'self'`` (no inline script, nothing from
  another origin) and ``X-Content-Type-Options: nosniff``.

Two background threads keep the catalog current (``Catalog.work`` and ``Verifier.run_one``);
a request never reads a whole journal.
"""

from __future__ import annotations

import http.server
import ipaddress
import logging
import os
import socket
import threading
import time
from importlib import resources

from . import routes
from .api import Api, error
from .catalog import Catalog, Verifier

log = logging.getLogger("view")
STATIC = resources.files("supervisor.view") / "static"
TYPES = {
    ".html": "text/html; charset=utf-8",
    ".js": "text/javascript; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".png": "image/png",
    ".svg": "image/svg+xml",
    ".txt": "text/plain; charset=utf-8",
}
CSP = (
    "default-src 'self'; img-src 'self' data: blob:; style-src 'self'; script-src 'self'; "
    "connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'"
)
SCAN_S = 1.0  # how often new session directories are looked for
IDLE_S = 0.25  # the background thread's pause when there is nothing to read


def static_files() -> dict[str, bytes]:
    """Every file under ``static/`` by its path relative to it, and ``api.js``: the API's
    description the page reads (``routes.script``)."""
    out: dict[str, bytes] = {"api.js": routes.script()}

    def walk(node, prefix: str) -> None:
        for child in node.iterdir():
            name = prefix + child.name
            if child.is_dir():
                walk(child, name + "/")
            elif not child.name.startswith("."):
                out[name] = child.read_bytes()

    walk(STATIC, "")
    return out


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def allowed_hosts(host: str, port: int, extra: list[str]) -> set[str]:
    names = {host.strip("[]")} | set(extra)
    if is_loopback(host):
        names |= {"localhost", "127.0.0.1", "::1"}
    return {f"{n}:{port}" if ":" not in n else f"[{n}]:{port}" for n in names} | names


class Background:
    """The threads that follow journals, read figures and verify settled sessions."""

    def __init__(self, catalog: Catalog):
        self.catalog = catalog
        self.verifier = Verifier(catalog)
        self.stop = threading.Event()
        self.threads = [
            threading.Thread(target=self._follow, name="view-follow", daemon=True),
            threading.Thread(target=self._verify, name="view-verify", daemon=True),
        ]

    def start(self) -> None:
        for t in self.threads:
            t.start()

    def _follow(self) -> None:
        last_scan = 0.0
        while not self.stop.is_set():
            try:
                if time.monotonic() - last_scan > SCAN_S:
                    self.catalog.scan()
                    last_scan = time.monotonic()
                busy = self.catalog.work()
            except Exception:  # keep serving what is known; say what broke
                log.exception("following the captures failed")
                busy = False
            if not busy:
                self.stop.wait(IDLE_S)

    def _verify(self) -> None:
        while not self.stop.is_set():
            try:
                busy = self.verifier.run_one()
            except Exception:
                log.exception("verifying failed")
                busy = False
            if not busy:
                self.stop.wait(IDLE_S * 2)


class Handler(http.server.BaseHTTPRequestHandler):
    server_version = "gamerig-view"
    protocol_version = "HTTP/1.1"

    def log_message(self, fmt, *args):  # the terminal shows the address, not every request
        if log.isEnabledFor(logging.DEBUG):
            log.debug("%s %s", self.address_string(), fmt % args)

    def do_HEAD(self):
        self._serve(head=True)

    def do_GET(self):
        self._serve(head=False)

    def _refuse_method(self):
        self._send(
            405,
            "text/plain; charset=utf-8",
            b"the viewer only reads: GET and HEAD\n",
            head=False,
            extra={"Allow": "GET, HEAD"},
        )

    do_POST = do_PUT = do_DELETE = do_PATCH = _refuse_method

    def _serve(self, head: bool) -> None:
        srv: ViewServer = self.server  # type: ignore[assignment]
        host = (self.headers.get("Host") or "").strip().lower()
        if host not in srv.hosts:
            self._send(
                403,
                "text/plain; charset=utf-8",
                f"refused: this viewer answers requests for {sorted(srv.hosts)[0]}, not {host!r}\n".encode(),
                head,
            )
            return
        path = self.path.split("?", 1)[0].split("#", 1)[0]
        if path in ("/", "/index.html"):
            self._file("index.html", head)
        elif path.startswith("/static/"):
            self._file(path[len("/static/") :], head)
        elif path.startswith("/api/"):
            answer = srv.api.answer(path)
            self._send(answer.status, answer.content_type, answer.body, head)
        else:
            a = error(404, f"no such page: {path}")
            self._send(a.status, a.content_type, a.body, head)

    def _file(self, name: str, head: bool) -> None:
        srv: ViewServer = self.server  # type: ignore[assignment]
        data = srv.static.get(name)
        if data is None:
            a = error(404, f"no such file: /static/{name}")
            self._send(a.status, a.content_type, a.body, head)
            return
        ctype = TYPES.get(os.path.splitext(name)[1], "application/octet-stream")
        self._send(200, ctype, data, head)

    def _send(self, status: int, ctype: str, body: bytes, head: bool, extra: dict | None = None) -> None:
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-store")
        self.send_header("Content-Security-Policy", CSP)
        self.send_header("X-Content-Type-Options", "nosniff")
        self.send_header("Referrer-Policy", "no-referrer")
        for k, v in (extra or {}).items():
            self.send_header(k, v)
        self.end_headers()
        if not head:
            try:
                self.wfile.write(body)
            except (BrokenPipeError, ConnectionResetError):
                pass


class ViewServer(http.server.ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, catalog: Catalog, host: str, port: int, allow_hosts: list[str] | None = None):
        self.address_family = socket.AF_INET6 if ":" in host else socket.AF_INET
        super().__init__((host.strip("[]"), port), Handler)
        self.catalog = catalog
        self.api = Api(catalog, "live")
        self.static = static_files()
        self.port = self.server_address[1]
        self.hosts = allowed_hosts(host, self.port, allow_hosts or [])
        self.background = Background(catalog)

    @property
    def url(self) -> str:
        host = self.server_address[0]
        shown = f"[{host}]" if ":" in host else host
        return f"http://{shown}:{self.port}/"

    def start_background(self) -> None:
        self.background.start()

    def server_close(self) -> None:
        self.background.stop.set()
        self.background.verifier.stop()
        super().server_close()
