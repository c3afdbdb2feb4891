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
"""
from __future__ import annotations

import dataclasses
import json
import time
from typing import Any

import httpx

STATE_PATH = "/api/v1/singleplayer"
IDENTITY_PATH = "/api/v1/compendium"
ATTEMPT_HEADER = "X-Gamerig-Attempt"


class ReadFailed(Exception):
    """A state read that produced no usable state; ``kind`` is transport|http|decode|shape."""

    def __init__(self, kind: str, message: str):
        super().__init__(message)
        self.kind = kind


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
        self.http = httpx.Client(base_url=self.base_url, timeout=timeout_s,
                                 headers={"Accept": "application/json"})

    def close(self) -> None:
        self.http.close()

    def _get_json(self, path: str) -> dict:
        try:
            resp = self.http.get(path)
        except httpx.HTTPError as exc:
            raise ReadFailed("transport", f"GET {self.base_url}{path}: {type(exc).__name__}: {exc}") from exc
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
            resp = self.http.post(STATE_PATH, content=json.dumps(body).encode(),
                                  headers={"Content-Type": "application/json",
                                           ATTEMPT_HEADER: attempt_id})
        except httpx.HTTPError as exc:
            return ActionOutcome("unknown", None, None, f"{type(exc).__name__}: {exc}",
                                 _ms(start))
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


def _json(resp: httpx.Response) -> Any:
    """Strict JSON: NaN and Infinity (which Python's parser accepts) are refused."""
    return json.loads(resp.content, parse_constant=_reject_constant)


def _error_text(body: Any) -> str:
    if isinstance(body, dict) and "error" in body:
        return str(body["error"])[:500]
    return str(body)[:200]


def _ms(start: float) -> float:
    return round((time.monotonic() - start) * 1000, 3)
