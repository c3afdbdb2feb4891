"""The one boundary where httpx is used: POST a JSON body, get an ``HttpReply`` back.

    HttpTransport.post_json(url, body, headers) -> HttpReply
    map_httpx_error(exc, timeout_s) -> ModelError     (every httpx exception has a mapping)

Every exception httpx (or the socket layer under it) can raise leaves this module as a
``ModelTimeout`` or ``ModelTransportError`` raised ``from`` the original; nothing above this
module imports httpx. HTTP status codes are *not* errors here: the reply carries the status
and the client decides. Headers are passed per request, so the API key is never stored on a
long-lived object.

A reply is read whole within ``timeout_s`` from the request's start (a drip-fed body, each
byte in time for httpx's per-read timeout, is a ``ModelTimeout`` of phase ``body``) and
within ``MAX_REPLY_BYTES`` (more is a ``MalformedAnswer``: nothing usable, and no usage to
record). JSON nested past the parser's recursion limit is not JSON.
"""

from __future__ import annotations

import dataclasses
import json
import time
from collections.abc import Mapping
from typing import Any, Protocol

import httpx

from .errors import MalformedAnswer, ModelError, ModelTimeout, ModelTransportError

#: The largest reply read; a chat completion of ``max_output_tokens`` is far smaller.
MAX_REPLY_BYTES = 4 * 1024 * 1024

_TIMEOUT_PHASES = (
    (httpx.ConnectTimeout, "connect"),
    (httpx.ReadTimeout, "read"),
    (httpx.WriteTimeout, "write"),
    (httpx.PoolTimeout, "pool"),
)
#: Everything httpx can raise from a request, plus what may escape from below it.
#: (RuntimeError: httpx's "the client has been closed", when ``close()`` races a request.)
WRAPPED_ERRORS = (
    httpx.HTTPError,
    httpx.InvalidURL,
    httpx.StreamError,
    httpx.CookieConflict,
    OSError,
    UnicodeError,
    RuntimeError,
)


@dataclasses.dataclass(frozen=True)
class HttpReply:
    """An HTTP answer: status, the few headers the client reads, the JSON body (or None)."""

    status: int
    retry_after: str | None
    json: Any
    text: str


class Transport(Protocol):
    """What the client needs from HTTP (tests may pass their own)."""

    def post_json(self, url: str, body: dict, headers: Mapping[str, str]) -> HttpReply: ...

    def close(self) -> None: ...


class HttpTransport:
    """``Transport`` over one ``httpx.Client`` sized to the concurrency limit."""

    def __init__(self, timeout_s: float, max_connections: int):
        self._timeout_s = timeout_s
        self._client = httpx.Client(
            timeout=httpx.Timeout(timeout_s),
            limits=httpx.Limits(max_connections=max_connections, max_keepalive_connections=max_connections),
            follow_redirects=False,
        )

    def post_json(self, url: str, body: dict, headers: Mapping[str, str]) -> HttpReply:
        deadline = time.monotonic() + self._timeout_s
        try:
            with self._client.stream("POST", url, json=body, headers=dict(headers)) as response:
                content = self._read_body(response, deadline)
                text = content.decode(response.encoding or "utf-8", "replace")
        except WRAPPED_ERRORS as exc:
            raise map_httpx_error(exc, self._timeout_s) from exc
        return HttpReply(
            status=response.status_code,
            retry_after=response.headers.get("retry-after"),
            json=_json_or_none(text),
            text=text,
        )

    def _read_body(self, response: httpx.Response, deadline: float) -> bytes:
        declared = response.headers.get("content-length", "")
        if declared.isdigit() and int(declared) > MAX_REPLY_BYTES:
            raise MalformedAnswer(f"the reply declares {int(declared)} bytes, over the limit of {MAX_REPLY_BYTES}")
        chunks, size = [], 0
        for chunk in response.iter_bytes():
            size += len(chunk)
            if size > MAX_REPLY_BYTES:
                raise MalformedAnswer(f"the reply exceeds the limit of {MAX_REPLY_BYTES} bytes")
            if time.monotonic() > deadline:
                raise ModelTimeout("body", self._timeout_s)
            chunks.append(chunk)
        return b"".join(chunks)

    def close(self) -> None:
        self._client.close()

    def __repr__(self) -> str:
        return f"HttpTransport(timeout_s={self._timeout_s:g})"


def map_httpx_error(exc: BaseException, timeout_s: float) -> ModelError:
    """The ``ModelError`` for an exception raised by httpx or the socket layer."""
    for cls, phase in _TIMEOUT_PHASES:
        if isinstance(exc, cls):
            return ModelTimeout(phase, timeout_s)
    if isinstance(exc, httpx.TimeoutException):
        return ModelTimeout("request", timeout_s)
    detail = str(exc) or exc.__class__.__name__
    return ModelTransportError(type(exc).__name__, detail[:300])


def _json_or_none(text: str) -> Any:
    try:
        return json.loads(text)
    except (ValueError, RecursionError):
        return None
