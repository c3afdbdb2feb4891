"""The one HTTP adapter to any server that speaks the STS2MCP API (the real mod or ours).

    read_state()      GET /api/v1/singleplayer          -> dict, or raises ReadFailed
    read_identity()   GET /api/v1/compendium            -> dict, or raises ReadFailed
    send_action()     POST /api/v1/singleplayer, once   -> ActionOutcome, never raises

Outcome mapping (the request is never retried here or anywhere):

* HTTP 200 with ``status: "ok"`` → ``accepted`` ("ok" means queued, not done);
* HTTP 200 with ``status: "error"``, or an HTTP 4xx/5xx answer with an ``error`` body
  (either of the mod's two error shapes) → ``rejected``: the game answered and refused;
* a timeout, a dropped connection, a refused connection or an unreadable answer →
  ``unknown``: the request may or may not have taken effect.

Hostile answers are bounded: a body over ``MAX_BODY_BYTES`` (declared or received) is cut
off, a body still arriving ``timeout_s`` after the request began (a drip-fed answer: each
byte in time for httpx's per-read timeout, the whole never) is abandoned, and JSON nested
past the parser's recursion limit, NaN or Infinity is not JSON. A read then fails with a
``ReadFailed`` of kind ``size``, ``transport`` or ``decode``; an action's outcome is
``unknown`` with the reason in ``error`` (the game may have taken it). Nothing here raises
anything else, so neither the observer nor the actuator can be crashed by an answer.
"""
from __future__ import annotations

import dataclasses
import json
import time
from typing import Any

import httpx

from actors.runtime import hoplog

#: The largest answer read (a state is tens of KB; the wire's frame limit is 16 MiB).
MAX_BODY_BYTES = 8 * 1024 * 1024
STATE_PATH = "/api/v1/singleplayer"
IDENTITY_PATH = "/api/v1/compendium"
ATTEMPT_HEADER = "X-Gamerig-Attempt"


class ReadFailed(Exception):
    """A state read that produced no usable state; ``kind`` is
    transport|http|decode|shape|size."""

    def __init__(self, kind: str, message: str):
        super().__init__(message)
        self.kind = kind


class BadAnswer(Exception):
    """An answer that is cut off: too large, or too slow as a whole (``kind`` size|transport)."""

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


class GameClient:
    def __init__(self, base_url: str, timeout_s: float = 5.0):
        self.base_url = base_url.rstrip("/")
        self.timeout_s = timeout_s
        self.http = httpx.Client(base_url=self.base_url, timeout=timeout_s,
                                 headers={"Accept": "application/json"})
        self.times = hoplog.open_log("http-client", buffered=False)  # bench/step_timeline.py only

    def close(self) -> None:
        self.http.close()

    def _exchange(self, method: str, path: str, **kwargs) -> Answer:
        """One request; the whole answer within ``MAX_BODY_BYTES`` and ``timeout_s``. With
        ``GAMERIG_HOPLOG`` set, its CPU time on this thread and its wall time are logged
        (``C <method> <path> <cpu ms> <wall ms>``, ``actors/runtime/hoplog.py``)."""
        if self.times is None:
            return self._exchange_once(method, path, **kwargs)
        cpu, wall = time.thread_time(), time.perf_counter()
        try:
            return self._exchange_once(method, path, **kwargs)
        finally:
            hoplog.write(self.times, f"C {method} {path} {(time.thread_time() - cpu) * 1000:.3f} "
                                     f"{(time.perf_counter() - wall) * 1000:.3f}\n")

    def _exchange_once(self, method: str, path: str, **kwargs) -> Answer:
        deadline = time.monotonic() + self.timeout_s
        with self.http.stream(method, path, **kwargs) as resp:
            declared = resp.headers.get("content-length", "")
            if declared.isdigit() and int(declared) > MAX_BODY_BYTES:
                raise BadAnswer("size", f"the answer declares {int(declared)} bytes, over the "
                                        f"limit of {MAX_BODY_BYTES}")
            chunks, size = [], 0
            for chunk in resp.iter_bytes():
                size += len(chunk)
                if size > MAX_BODY_BYTES:
                    raise BadAnswer("size", f"the answer exceeds the limit of "
                                            f"{MAX_BODY_BYTES} bytes")
                if time.monotonic() > deadline:
                    raise BadAnswer("transport", f"the answer was still arriving after "
                                                 f"{self.timeout_s:g}s ({size} bytes so far)")
                chunks.append(chunk)
            return Answer(resp.status_code, b"".join(chunks))

    def _get_json(self, path: str) -> dict:
        try:
            resp = self._exchange("GET", path)
        except httpx.HTTPError as exc:
            raise ReadFailed("transport", f"GET {self.base_url}{path}: {type(exc).__name__}: {exc}") from exc
        except BadAnswer as exc:
            raise ReadFailed(exc.kind, f"GET {self.base_url}{path}: {exc}") from None
        try:
            body = _json(resp)
        except (ValueError, UnicodeDecodeError):
            raise ReadFailed("decode", f"GET {path}: HTTP {resp.status_code}, body is not JSON: "
                             f"{resp.text[:200]!r}") from None
        if resp.status_code != 200:
            raise ReadFailed("http", f"GET {path}: HTTP {resp.status_code}: "
                             f"{_error_text(body)}")
        if not isinstance(body, dict):
            raise ReadFailed("shape", f"GET {path}: expected a JSON object, got {type(body).__name__}")
        return body

    def read_state(self) -> dict:
        state = self._get_json(STATE_PATH)
        if not isinstance(state.get("state_type"), str):
            raise ReadFailed("shape", f"GET {STATE_PATH}: the state has no string 'state_type' "
                             f"(keys: {', '.join(sorted(state)[:12])})")
        return state

    def read_identity(self) -> dict:
        return self._get_json(IDENTITY_PATH)

    def send_action(self, action: str, parameters: dict, attempt_id: str) -> ActionOutcome:
        body = {"action": action, **parameters}
        start = time.monotonic()
        try:
            resp = self._exchange("POST", STATE_PATH, content=json.dumps(body).encode(),
                                  headers={"Content-Type": "application/json",
                                           ATTEMPT_HEADER: attempt_id})
        except httpx.HTTPError as exc:
            return ActionOutcome("unknown", None, None, f"{type(exc).__name__}: {exc}",
                                 _ms(start))
        except BadAnswer as exc:
            return ActionOutcome("unknown", None, None, str(exc), _ms(start))
        ms = _ms(start)
        try:
            payload = _json(resp)
        except (ValueError, UnicodeDecodeError):
            return ActionOutcome("unknown", resp.status_code, resp.text[:2000],
                                 "the answer is not JSON", ms)
        if resp.status_code == 200 and isinstance(payload, dict):
            if payload.get("status") == "ok":
                return ActionOutcome("accepted", 200, payload, None, ms)
            if payload.get("status") == "error":
                return ActionOutcome("rejected", 200, payload, _error_text(payload), ms)
            return ActionOutcome("unknown", 200, payload, "HTTP 200 without status ok or error", ms)
        if 400 <= resp.status_code < 600 and isinstance(payload, dict) and "error" in payload:
            return ActionOutcome("rejected", resp.status_code, payload, _error_text(payload), ms)
        return ActionOutcome("unknown", resp.status_code, payload,
                             f"unexpected HTTP {resp.status_code} answer", ms)


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
