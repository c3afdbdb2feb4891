"""The one HTTP adapter to any server that speaks the STS2MCP API (the real mod or ours).

    read_state()      GET /api/v1/singleplayer          -> dict, or raises ReadFailed
    read_identity()   GET /api/v1/compendium            -> dict, or raises ReadFailed
    send_action()     POST /api/v1/singleplayer, once   -> ActionOutcome, never raises

Outcome mapping (the request is never retried here or anywhere):

* HTTP 200 with ``status: "ok"`` → ``accepted`` ("ok" means queued, not done: every handler
  of ``McpMod.Actions.cs``);
* HTTP 200 with ``status: "error"`` (``McpMod.Helpers.cs``, ``Error``), or an HTTP 4xx/5xx
  answer with an ``error`` body (``McpMod.Helpers.cs``, ``SendError``; ``McpMod.cs``,
  ``HandlePostAction``) → ``rejected``: the game answered and refused (samples with their
  lines: ``vendor/sts2mcp/reply__*.json``, listed in ``vendor/sts2mcp/README.md``);
* a timeout, a dropped connection, a refused connection or an unreadable answer →
  ``unknown``: the request may or may not have taken effect.

Hostile answers are bounded: a body over ``MAX_BODY_BYTES`` (declared or received) is cut
off; the whole answer must come within ``timeout_s`` of the request's start (a drip-fed body,
each byte in time for a per-read timeout, is abandoned); a body that ends short of its
declared length, an interim ``1xx`` answer and anything that is not HTTP are transport
failures; JSON nested past the parser's recursion limit, NaN or Infinity is not JSON. Every
read of an answer — status line, headers, body, a chunked body's trailers — is given only the
time left (``_DeadlineReader``), so no run of interim answers, trailer lines or drip-fed
headers outlasts ``timeout_s`` (``http.client`` bounds the headers' size: 100, 64 KiB a
line). A read then fails with a ``ReadFailed`` of
kind ``size``, ``transport`` or ``decode``; an action's outcome is ``unknown`` with the
reason in ``error`` (the game may have taken it). Nothing here raises anything else, so
neither the observer nor the actuator can be crashed by an answer.

The mod answers each request with a ``Content-Length`` on a keep-alive connection of .NET's
``HttpListener`` (``McpMod.Helpers.cs``, ``SendJson``/``SendText``: ``ContentLength64``;
``McpMod.cs``, ``Initialize``). The client is ``http.client`` on one keep-alive connection,
not httpx: a request costs a third to a quarter of httpx's CPU (``bench/http_client.py``,
``docs/performance.md``), three requests a step in the observer and the actuator. A
connection the game closed while idle is replaced before a request goes out; after a request
went out nothing is ever sent again. Proxy variables (``HTTP_PROXY``...) are not consulted:
the game is reached directly at ``game.base_url``.
"""

from __future__ import annotations

import dataclasses
import functools
import http.client
import io
import json
import select
import time
import urllib.parse
from typing import Any

from actors.game_address import parse_base_url
from actors.runtime import hoplog

#: The largest answer read (a state is tens of KB; the wire's frame limit is 16 MiB).
MAX_BODY_BYTES = 8 * 1024 * 1024
STATE_PATH = "/api/v1/singleplayer"
IDENTITY_PATH = "/api/v1/compendium"
#: An action named ``profiles:<verb>`` is POSTed to the profiles route as ``{"action": <verb>, ...}``
#: (McpMod.Profile.cs ``HandlePostProfiles``: ``switch``, ``delete``); every other action goes to
#: the singleplayer route.
PROFILES_PATH = "/api/v1/profiles"
PROFILE_PREFIX = "profiles:"
ATTEMPT_HEADER = "X-Gamerig-Attempt"
READ_CHUNK = 64 * 1024


class ReadFailed(Exception):
    """A state read that produced no usable state; ``kind`` is
    transport|http|decode|shape|size."""

    def __init__(self, kind: str, message: str):
        super().__init__(message)
        self.kind = kind


class BadAnswer(Exception):
    """A request without a whole answer within the limits: ``kind`` is ``size`` (too
    large) or ``transport`` (no connection, no answer in time, an answer that is not HTTP,
    a body still arriving at the deadline)."""

    def __init__(self, kind: str, message: str):
        super().__init__(message)
        self.kind = kind


@dataclasses.dataclass(frozen=True)
class Answer:
    """A whole HTTP answer, read within the limits."""

    status_code: int
    content: bytes

    @property
    def text(self) -> str:
        return self.content.decode("utf-8", "replace")


@dataclasses.dataclass
class ActionOutcome:
    outcome: str  # accepted | rejected | unknown
    http_status: int | None
    response: Any
    error: str | None
    request_ms: float


class _DeadlineReader(io.RawIOBase):
    """The answer's bytes off the socket, each read given only the time left before the
    deadline: the status line, the headers, the body and a chunked body's trailers alike
    (``http.client`` loops over interim ``100`` answers and trailer lines itself)."""

    def __init__(self, sock, deadline: float):
        super().__init__()
        self.sock, self.deadline = sock, deadline
        self.raw = sock.makefile("rb", buffering=0)

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:
        left = self.deadline - time.monotonic()
        if left <= 0:
            raise TimeoutError("the answer's deadline passed")
        self.sock.settimeout(left)
        return self.raw.readinto(buffer)

    def close(self) -> None:
        self.raw.close()
        super().close()


class _DeadlineResponse(http.client.HTTPResponse):
    """``http.client``'s answer, read through a ``_DeadlineReader``."""

    def __init__(
        self, sock, debuglevel: int = 0, method: str | None = None, url: str | None = None, *, deadline: float
    ):
        super().__init__(sock, debuglevel, method, url)
        self.fp.close()  # (the plain reader it opened; the socket stays open)
        self.fp = io.BufferedReader(_DeadlineReader(sock, deadline))


class GameClient:
    """One keep-alive HTTP/1.1 connection to the game (``http.client``; a connection the
    game closed while idle is replaced before a request goes out, never after)."""

    def __init__(self, base_url: str, timeout_s: float = 5.0):
        self.base = parse_base_url(base_url)
        self.base_url = base_url.rstrip("/")
        self.timeout_s = timeout_s
        self.conn: http.client.HTTPConnection | None = None
        self.headers = {"Accept": "application/json", "User-Agent": "gamerig"}
        self.times = hoplog.open_log("http-client", buffered=False)  # bench/step_timeline.py only

    def close(self) -> None:
        if self.conn is not None:
            self.conn.close()
            self.conn = None

    def _connection(self) -> http.client.HTTPConnection:
        """The open connection if the game has not closed it (an idle keep-alive socket
        that reads as ready holds an end or bytes nobody asked for), else a new one."""
        conn = self.conn
        if conn is not None and conn.sock is not None:
            idle = select.poll()  # (not select(): file descriptors above 1024)
            idle.register(conn.sock, select.POLLIN)
            if not idle.poll(0):
                return conn
        self.close()
        kind = http.client.HTTPSConnection if self.base.scheme == "https" else http.client.HTTPConnection
        self.conn = kind(self.base.host, self.base.port, timeout=self.timeout_s)
        return self.conn

    def _exchange(self, method: str, path: str, body: bytes | None = None, headers: dict | None = None) -> Answer:
        """One request; the whole answer within ``MAX_BODY_BYTES`` and ``timeout_s``. With
        ``GAMERIG_HOPLOG`` set, its CPU time on this thread and its wall time are logged
        (``C <method> <path> <cpu ms> <wall ms>``, ``actors/runtime/hoplog.py``)."""
        if self.times is None:
            return self._exchange_once(method, path, body, headers)
        cpu, wall = time.thread_time(), time.perf_counter()
        try:
            return self._exchange_once(method, path, body, headers)
        finally:
            hoplog.write(
                self.times,
                f"C {method} {path} {(time.thread_time() - cpu) * 1000:.3f} "
                f"{(time.perf_counter() - wall) * 1000:.3f}\n",
            )

    def _exchange_once(self, method: str, path: str, body: bytes | None, headers: dict | None) -> Answer:
        deadline = time.monotonic() + self.timeout_s
        resp = None
        try:
            conn = self._connection()
            if conn.sock is not None:
                conn.sock.settimeout(self.timeout_s)  # (a reused one keeps its last read's)
            conn.response_class = functools.partial(_DeadlineResponse, deadline=deadline)
            conn.request(
                method,
                self.base.prefix + path,
                body=body,
                headers={**self.headers, **headers} if headers else self.headers,
            )
            resp = conn.getresponse()
            if resp.status < 200:  # an interim answer (http.client skips only 100): the final
                # one would follow on this connection and be read as the next request's answer
                raise BadAnswer("transport", f"an interim answer (HTTP {resp.status}) where the answer was due")
            answer = Answer(resp.status, self._body(resp))
        except (OSError, http.client.HTTPException, ValueError, OverflowError) as exc:
            self._drop(resp)  # its state is unknown: the next request opens a new one
            raise BadAnswer("transport", _transport_text(exc, self.timeout_s)) from None
        except BadAnswer:
            self._drop(resp)
            raise
        if resp.will_close:
            self.close()
        return answer

    def _drop(self, resp: http.client.HTTPResponse | None) -> None:
        """Close the connection after a failed request, and the answer's own hold on the
        socket (an answer that said ``Connection: close`` was handed it)."""
        if resp is not None:
            resp.close()
        self.close()

    def _body(self, resp: http.client.HTTPResponse) -> bytes:
        if resp.length is not None and resp.length > MAX_BODY_BYTES:  # (its Content-Length)
            raise BadAnswer("size", f"the answer declares {resp.length} bytes, over the limit of {MAX_BODY_BYTES}")
        chunks, size = [], 0
        while True:
            try:  # each read is given the time left (_DeadlineReader), and fails after it
                chunk = resp.read1(READ_CHUNK)
            except TimeoutError:
                raise BadAnswer(
                    "transport", f"the answer was still arriving after {self.timeout_s:g}s ({size} bytes so far)"
                ) from None
            if not chunk:
                if resp.length:  # read1 ends quietly where read() raises IncompleteRead
                    raise BadAnswer(
                        "transport", f"the answer ended {resp.length} bytes short of its declared length ({size} read)"
                    )
                resp.close()  # (the answer is whole: the connection can carry the next)
                return b"".join(chunks)
            size += len(chunk)
            if size > MAX_BODY_BYTES:
                raise BadAnswer("size", f"the answer exceeds the limit of {MAX_BODY_BYTES} bytes")
            chunks.append(chunk)

    def _get_json(self, path: str) -> dict:
        try:
            resp = self._exchange("GET", path)
        except BadAnswer as exc:
            raise ReadFailed(exc.kind, f"GET {self.base_url}{path}: {exc}") from None
        try:
            body = _json(resp)
        except (ValueError, UnicodeDecodeError):
            raise ReadFailed(
                "decode", f"GET {path}: HTTP {resp.status_code}, body is not JSON: {resp.text[:200]!r}"
            ) from None
        if resp.status_code != 200:
            raise ReadFailed("http", f"GET {path}: HTTP {resp.status_code}: {_error_text(body)}")
        if not isinstance(body, dict):
            raise ReadFailed("shape", f"GET {path}: expected a JSON object, got {type(body).__name__}")
        return body

    def read_state(self) -> dict:
        state = self._get_json(STATE_PATH)
        if not isinstance(state.get("state_type"), str):
            raise ReadFailed(
                "shape",
                f"GET {STATE_PATH}: the state has no string 'state_type' (keys: {', '.join(sorted(state)[:12])})",
            )
        return state

    def read_identity(self) -> dict:
        return self._get_json(IDENTITY_PATH)

    def read_text(self, path: str, query: dict | None = None) -> tuple[int | None, str]:
        """A read of one of the game's other routes (``GET path?query``) as (HTTP status, body
        text); (None, what went wrong) when no whole answer came. Never raises."""
        if query:
            path = f"{path}?{urllib.parse.urlencode(query)}"
        try:
            resp = self._exchange("GET", path)
        except BadAnswer as exc:
            return None, str(exc)
        return resp.status_code, resp.text

    def send_action(self, action: str, parameters: dict, attempt_id: str) -> ActionOutcome:
        path = STATE_PATH
        if action.startswith(PROFILE_PREFIX):
            path, action = PROFILES_PATH, action[len(PROFILE_PREFIX) :]
        body = {"action": action, **parameters}
        start = time.monotonic()
        try:
            resp = self._exchange(
                "POST",
                path,
                json.dumps(body).encode(),
                {"Content-Type": "application/json", ATTEMPT_HEADER: attempt_id},
            )
        except BadAnswer as exc:
            return ActionOutcome("unknown", None, None, str(exc), _ms(start))
        ms = _ms(start)
        try:
            payload = _json(resp)
        except (ValueError, UnicodeDecodeError):
            return ActionOutcome("unknown", resp.status_code, resp.text[:2000], "the answer is not JSON", ms)
        if resp.status_code == 200 and isinstance(payload, dict):
            if payload.get("status") == "ok":
                return ActionOutcome("accepted", 200, payload, None, ms)
            if payload.get("status") == "error":
                return ActionOutcome("rejected", 200, payload, _error_text(payload), ms)
            return ActionOutcome("unknown", 200, payload, "HTTP 200 without status ok or error", ms)
        if 400 <= resp.status_code < 600 and isinstance(payload, dict) and "error" in payload:
            return ActionOutcome("rejected", resp.status_code, payload, _error_text(payload), ms)
        return ActionOutcome("unknown", resp.status_code, payload, f"unexpected HTTP {resp.status_code} answer", ms)


def _transport_text(exc: BaseException, timeout_s: float) -> str:
    """What went wrong on the wire, in words (the exception's class name in brackets)."""
    name = type(exc).__name__
    if isinstance(exc, TimeoutError):
        return f"timed out: no whole answer within {timeout_s:g}s ({name})"
    if isinstance(exc, http.client.RemoteDisconnected):
        return f"the game closed the connection without an answer ({name})"
    if isinstance(exc, http.client.BadStatusLine):
        return f"the answer is not HTTP: {str(exc)[:80]!r} ({name})"
    if isinstance(exc, http.client.IncompleteRead):
        return f"the answer ended before its end: a chunked body cut short or malformed ({name})"
    if isinstance(exc, ConnectionRefusedError):
        return f"connection refused ({name})"
    return f"{name}: {str(exc)[:200]}"


def _reject_constant(name: str):
    raise ValueError(f"{name} is not valid JSON")


def _json(resp: Answer) -> Any:
    """Strict JSON: NaN and Infinity (which Python's parser accepts) are refused, and so is
    nesting deeper than the parser's recursion limit."""
    try:
        return json.loads(resp.content, parse_constant=_reject_constant)
    except RecursionError:
        raise ValueError("the JSON nests too deeply") from None


def _error_text(body: Any) -> str:
    if isinstance(body, dict) and "error" in body:
        return str(body["error"])[:500]
    return str(body)[:200]


def _ms(start: float) -> float:
    return round((time.monotonic() - start) * 1000, 3)
