"""A scriptable OpenAI-compatible chat-completions server on 127.0.0.1, for tests.

    with FakeOpenAIServer() as server:
        server.script(Reply.answer({"q0": {...}}), Reply.status(429, retry_after="1"))
        client = ModelClient(ModelConfig(base_url=server.base_url, model="fake"))
        ...
        server.requests[0].body, server.requests[0].headers["authorization"]

A real ``ThreadingHTTPServer`` on an ephemeral port speaking the real wire format
(``POST /v1/chat/completions``, HTTP/1.1 keep-alive). Each request takes the next scripted
``Reply`` (or ``default``; with neither, a 500 saying the script ran out). Replies can be
slow (``delay_s``), ``held`` until ``release()``, drip-fed (``drip(every_s)``: one byte at a
time) or ``endless_body()`` (chunks until the client hangs up); all end at once when the
server stops. A body may be a dict (sent as JSON), a str or bytes (sent verbatim). With
``reject_response_format=True`` any request carrying ``response_format`` gets the 400 real
servers send, without consuming the script (or pass the ``Reply`` to send instead, e.g.
``LITELLM_REJECT_RESPONSE_FORMAT``).

Every request is recorded (headers — including ``Authorization`` — body, arrival time on
``time.monotonic()``), and the number of requests in flight is tracked (``max_inflight``).
Every reply body sent is kept as the bytes that went out (``sent``, in order): a test reads
the usage a reply reported from there, not from the client's records.
"""

from __future__ import annotations

import collections
import dataclasses
import json
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

CHAT_PATH = "/v1/chat/completions"


def completion_body(
    content: str | None,
    *,
    refusal: str | None = None,
    finish_reason: str = "stop",
    usage: dict | None = None,
    model: str = "fake-model-2024",
) -> dict:
    """A chat-completions reply body with one choice."""
    return {
        "id": "chatcmpl-fake",
        "object": "chat.completion",
        "created": 1_700_000_000,
        "model": model,
        "choices": [
            {
                "index": 0,
                "finish_reason": finish_reason,
                "message": {"role": "assistant", "content": content, "refusal": refusal},
            }
        ],
        "usage": usage if usage is not None else {"prompt_tokens": 100, "completion_tokens": 20, "total_tokens": 120},
    }


def usage(prompt: int, completion: int, cached: int | None = None) -> dict:
    """A reply's ``usage`` as OpenAI reports it, with ``prompt_tokens_details.cached_tokens``
    when ``cached`` is given: openai-python's ``CompletionUsage`` (prompt_tokens,
    completion_tokens, total_tokens, ``prompt_tokens_details: Optional[PromptTokensDetails]``)
    and ``PromptTokensDetails`` (``cached_tokens: Optional[int]``, "Cached tokens present in
    the prompt", so part of ``prompt_tokens``; ``audio_tokens``), src/openai/types/
    completion_usage.py."""
    out: dict = {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion}
    if cached is not None:
        out["prompt_tokens_details"] = {"cached_tokens": cached, "audio_tokens": 0}
    return out


@dataclasses.dataclass(frozen=True)
class RecordedRequest:
    method: str
    path: str
    headers: dict  # lower-cased names
    body: Any  # parsed JSON, or the raw text when it was not JSON
    received_at: float


@dataclasses.dataclass(frozen=True)
class Reply:
    """One scripted answer. ``body`` may be a callable taking the ``RecordedRequest``."""

    status: int = 200
    body: Any = None
    headers: tuple = ()
    delay_s: float = 0.0
    held: bool = False
    drip_s: float = 0.0  # send the body one byte at a time, this far apart
    endless: bool = False  # a 200 without a length that never ends (1 MiB chunks)

    @classmethod
    def answer(cls, payload: dict, **kwargs) -> Reply:
        """A 200 whose message content is ``payload`` as JSON."""
        return cls(body=completion_body(json.dumps(payload), **kwargs))

    @classmethod
    def text(cls, content: str | None, **kwargs) -> Reply:
        """A 200 whose message content is ``content`` verbatim."""
        return cls(body=completion_body(content, **kwargs))

    @classmethod
    def refusal(cls, why: str = "I can't help with that.") -> Reply:
        return cls(body=completion_body(None, refusal=why))

    @classmethod
    def truncated(cls, content: str = '{"q0": {"card_index": 1, "confid') -> Reply:
        return cls(body=completion_body(content, finish_reason="length"))

    @classmethod
    def status_code(cls, status: int, message: str = "fake error", *, retry_after: str | None = None) -> Reply:
        headers = (("Retry-After", retry_after),) if retry_after is not None else ()
        return cls(status=status, headers=headers, body={"error": {"message": message, "type": "fake_error"}})

    @classmethod
    def raw(cls, status: int, text: str) -> Reply:
        """A reply whose body is ``text`` verbatim (e.g. not JSON at all)."""
        return cls(status=status, body=text)

    def slow(self, delay_s: float) -> Reply:
        return dataclasses.replace(self, delay_s=delay_s)

    def hold(self) -> Reply:
        return dataclasses.replace(self, held=True)

    def drip(self, every_s: float) -> Reply:
        """Each byte in time for any per-read timeout; the whole far too slow."""
        return dataclasses.replace(self, drip_s=every_s)

    @classmethod
    def endless_body(cls) -> Reply:
        return cls(endless=True)


REJECT_RESPONSE_FORMAT = Reply.status_code(400, "Unrecognized request argument supplied: response_format")

#: How a LiteLLM proxy relays a backend's refusal of ``response_format``: an HTTP 500 in the
#: OpenAI error envelope with ``code`` as a string (BerriAI/litellm PR #1449 "Litellm Proxy
#: improve exception mapping" for the envelope, PR #4973 for ``code`` as ``str``, issue
#: #8698 for a 500 whose message is the relayed exception text).
LITELLM_REJECT_RESPONSE_FORMAT = Reply(
    status=500,
    body={
        "error": {
            "message": "litellm.InternalServerError: OpenAIException - Error code: 500 - "
            "{'error': 'response_format json_schema is not supported by this backend'}",
            "type": None,
            "param": None,
            "code": "500",
        }
    },
)


class FakeOpenAIServer:
    """See the module docstring."""

    def __init__(self, *, reject_response_format: bool | Reply = False, default: Reply | None = None):
        self.reject_response_format = reject_response_format
        self.default = default
        self.requests: list[RecordedRequest] = []
        self.sent: list[bytes] = []  # each reply body as sent (not for endless bodies)
        self.inflight = 0
        self.max_inflight = 0
        self._script: collections.deque[Reply] = collections.deque()
        self._cond = threading.Condition()
        self._stopping = threading.Event()
        self._released = threading.Event()
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), _make_handler(self))
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)

    @property
    def port(self) -> int:
        return self._httpd.server_address[1]

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def __enter__(self) -> FakeOpenAIServer:
        self._thread.start()
        return self

    def __exit__(self, *exc_info) -> None:
        self.stop()

    def stop(self) -> None:
        """Cancel slow and held replies, stop serving, close the socket."""
        self._stopping.set()
        self._released.set()
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(timeout=5)

    def script(self, *replies: Reply) -> None:
        with self._cond:
            self._script.extend(replies)

    def release(self) -> None:
        """Let every held reply (now and later) go out."""
        self._released.set()

    def wait_for(self, predicate: Callable[[FakeOpenAIServer], bool], timeout: float = 5.0) -> bool:
        """Block until ``predicate(server)`` holds (re-checked on every request change)."""
        with self._cond:
            return self._cond.wait_for(lambda: predicate(self), timeout=timeout)

    # -- called by the handler ----------------------------------------------------------------

    def _arrive(self, request: RecordedRequest) -> Reply:
        with self._cond:
            self.requests.append(request)
            self.inflight += 1
            self.max_inflight = max(self.max_inflight, self.inflight)
            self._cond.notify_all()
            if self.reject_response_format and isinstance(request.body, dict) and "response_format" in request.body:
                rejection = self.reject_response_format
                return rejection if isinstance(rejection, Reply) else REJECT_RESPONSE_FORMAT
            if self._script:
                return self._script.popleft()
        return self.default or Reply.status_code(500, "fake server: the script ran out")

    def _depart(self) -> None:
        with self._cond:
            self.inflight -= 1
            self._cond.notify_all()

    def _delay(self, reply: Reply) -> bool:
        """Wait as the reply asks; False if the server is stopping (send nothing)."""
        if reply.held:
            self._released.wait()
        if reply.delay_s:
            self._stopping.wait(reply.delay_s)
        return not self._stopping.is_set()


def _make_handler(server: FakeOpenAIServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, fmt: str, *args: Any) -> None:  # keep test output clean
            pass

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length).decode("utf-8", "replace")
            try:
                body = json.loads(raw)
            except ValueError:
                body = raw
            request = RecordedRequest(
                "POST", self.path, {k.lower(): v for k, v in self.headers.items()}, body, time.monotonic()
            )
            if self.path != CHAT_PATH:
                server._arrive(request)
                self._send(Reply.status_code(404, f"no route {self.path}"), request)
                server._depart()
                return
            reply = server._arrive(request)
            try:
                if server._delay(reply):
                    self._send(reply, request)
                else:
                    self.close_connection = True
            finally:
                server._depart()

        def _send(self, reply: Reply, request: RecordedRequest) -> None:
            body = reply.body(request) if callable(reply.body) else reply.body
            data = (
                body
                if isinstance(body, bytes)
                else (body if isinstance(body, str) else json.dumps(body)).encode("utf-8")
            )
            if not reply.endless:
                with server._cond:
                    server.sent.append(data)
            self.send_response(reply.status)
            self.send_header("Content-Type", "application/json")
            if reply.endless:
                self.send_header("Transfer-Encoding", "chunked")
            elif not any(name.lower() == "content-length" for name, _ in reply.headers):
                self.send_header("Content-Length", str(len(data)))
            for name, value in reply.headers:
                self.send_header(name, value)
            self.end_headers()
            try:
                self._write_body(reply, data)
            except OSError:
                self.close_connection = True

        def _write_body(self, reply: Reply, data: bytes) -> None:
            if reply.endless:
                chunk = b" " * (1 << 20)
                for _ in range(64):  # bounded: the client must hang up long before
                    if server._stopping.is_set():
                        break
                    self.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
                self.close_connection = True
            elif reply.drip_s:
                for byte in data:
                    if server._stopping.wait(reply.drip_s):
                        break
                    self.wfile.write(bytes([byte]))
                    self.wfile.flush()
            else:
                self.wfile.write(data)

    return Handler
