"""The metrics tap: live numbers about a running session, from its snapshot and its stream.

``Metrics`` turns rows into numbers (thread-safe: the Prometheus server reads ``sample()``
from its own thread):

* steps (``observation`` rows — or ``proposal`` rows when there are more of them, i.e. the
  policy pipelines its steps) and steps per second over the last ``window_s`` seconds of
  journal time (``recorded_at``; a remote tap with a skewed clock sees a skewed rate);
* action results (accepted / rejected / unknown), from the snapshot on;
* latency percentiles (p50, p90, p99 over the last ``SAMPLES`` values) per stage, from rows
  seen since attaching: ``read`` (observation.read_ms), ``decide`` (proposal.decide_ms),
  ``model`` (proposal model_evidence usage.latency_ms), ``intent_ack`` (attempt.recorded_at −
  execute status.recorded_at), ``request`` (result.request_ms), ``result``
  (result.recorded_at − attempt.recorded_at);
* model tokens and errors (snapshot ``model_usage`` plus proposal ``model_usage`` or, when a
  proposal has none, its evidence ``usage``; ``model_error`` rows);
* per-actor RSS, CPU, pid, liveness and restarts (``starts − 1``) from the supervisor's status;
* rows dropped by the tap itself (see ``runtime.py``, ``max_lag``).

``MetricsTap`` is the attachable actor; its outputs live in ``metrics_view.py``.
"""

from __future__ import annotations

import collections
import datetime as dt
import threading
import time

from .runtime import AttachedTap

STAGES = ("read", "decide", "model", "intent_ack", "request", "result")
QUANTILES = {"p50": 0.5, "p90": 0.9, "p99": 0.99}
SAMPLES = 1024
PENDING_LIMIT = 4096
TOKEN_KEYS = ("prompt_tokens", "completion_tokens", "total_tokens")


def epoch(recorded_at) -> float | None:
    try:
        return dt.datetime.fromisoformat(recorded_at).timestamp()
    except (TypeError, ValueError):
        return None


def percentiles(values) -> dict:
    data = sorted(values)
    if not data:
        return {"n": 0, **dict.fromkeys(QUANTILES)}
    out = {"n": len(data)}
    for name, q in QUANTILES.items():
        out[name] = round(data[min(len(data) - 1, int(q * len(data)))], 3)
    return out


def _num(v) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


class Metrics:
    def __init__(self, window_s: float = 10.0):
        self.window_s = window_s
        self.lock = threading.Lock()
        self.session_id = self.tap_id = ""
        self.sequence = self.steps = self.dropped = self.model_errors = 0
        self.observations = self.decisions = 0
        self.outcomes = {"accepted": 0, "rejected": 0, "unknown": 0}
        self.tokens = dict.fromkeys(TOKEN_KEYS, 0)
        self.restarts: dict[str, int] = {}
        self.actors: dict[str, dict] = {}
        self.latency = {s: collections.deque(maxlen=SAMPLES) for s in STAGES}
        self._obs = collections.deque()
        self._decided = collections.deque()
        self._since = time.time()
        self._status_at: dict[str, float] = {}
        self._attempt_at: dict[str, float] = {}

    # -- input ----------------------------------------------------------------------------
    def snapshot(self, last_sequence: int, summary: dict) -> None:
        with self.lock:
            self.session_id = summary.get("session") or self.session_id
            self.sequence, self.observations = last_sequence, int(summary.get("steps") or 0)
            self.decisions = sum(v for v in (summary.get("dispositions") or {}).values() if _num(v))
            self.steps = max(self.observations, self.decisions)
            self.outcomes.update(summary.get("action_results") or {})
            usage = summary.get("model_usage") or {}
            self.tokens = {k: usage.get(k, 0) if _num(usage.get(k)) else 0 for k in TOKEN_KEYS}
            self.model_errors = int(usage.get("errors") or 0)
            self.restarts = dict(summary.get("actor_restarts") or {})

    def row(self, row: dict) -> None:
        with self.lock:
            self.sequence = row.get("sequence", self.sequence)
            handler = getattr(self, "_on_" + str(row.get("event")), None)
            if handler is not None:
                handler(row, epoch(row.get("recorded_at")))

    def status(self, status: dict) -> None:
        with self.lock:
            self.actors = {
                name: {
                    "pid": a.get("pid"),
                    "alive": bool(a.get("alive")),
                    "rss_bytes": a.get("rss_bytes", 0),
                    "cpu_percent": a.get("cpu_percent", 0.0),
                    "restarts": max(0, int(a.get("starts") or 1) - 1),
                }
                for name, a in (status.get("actors") or {}).items()
            }

    def drop(self, n: int) -> None:
        with self.lock:
            self.dropped += n

    # -- per event ------------------------------------------------------------------------
    def _lat(self, stage: str, value) -> None:
        if _num(value) and value >= 0:
            self.latency[stage].append(float(value))

    def _on_observation(self, row: dict, t: float | None) -> None:
        self.observations = row.get("step", self.observations + 1)
        self.steps = max(self.observations, self.decisions)
        self._lat("read", row.get("read_ms"))
        if t is not None:
            self._obs.append(t)

    def _on_proposal(self, row: dict, t) -> None:
        self.decisions += 1
        self.steps = max(self.observations, self.decisions)
        if t is not None:
            self._decided.append(t)
        self._lat("decide", row.get("decide_ms"))
        evidence = [e for e in row.get("model_evidence") or [] if isinstance(e, dict)]
        for ev in evidence:
            self._lat("model", (ev.get("usage") or {}).get("latency_ms"))
        usage = row.get("model_usage")
        sources = [usage] if isinstance(usage, dict) else [ev.get("usage") or {} for ev in evidence]
        for u in sources:
            for k in TOKEN_KEYS:
                if _num(u.get(k)):
                    self.tokens[k] += u[k]

    def _on_proposal_status(self, row: dict, t) -> None:
        if row.get("status") == "execute" and t is not None:
            self._remember(self._status_at, row.get("proposal_id"), t)

    def _on_action_attempt(self, row: dict, t) -> None:
        start = self._status_at.pop(row.get("proposal_id"), None)
        if t is not None:
            if start is not None:
                self._lat("intent_ack", (t - start) * 1000)
            self._remember(self._attempt_at, row.get("attempt_id"), t)

    def _on_action_result(self, row: dict, t) -> None:
        if row.get("outcome") in self.outcomes:
            self.outcomes[row["outcome"]] += 1
        self._lat("request", row.get("request_ms"))
        start = self._attempt_at.pop(row.get("attempt_id"), None)
        if start is not None and t is not None:
            self._lat("result", (t - start) * 1000)

    def _on_model_error(self, row: dict, t) -> None:
        self.model_errors += 1

    def _on_actor_restart(self, row: dict, t) -> None:
        actor = row.get("actor", "?")
        self.restarts[actor] = self.restarts.get(actor, 0) + 1

    @staticmethod
    def _remember(table: dict, key, t: float) -> None:
        if key is not None:
            table[key] = t
            while len(table) > PENDING_LIMIT:
                table.pop(next(iter(table)))

    # -- output ---------------------------------------------------------------------------
    def _rate(self, now: float) -> float:
        rates = []
        for times in (self._obs, self._decided):
            end = max(now, times[-1]) if times else now
            while times and times[0] < end - self.window_s:
                times.popleft()
            rates.append(len(times) / min(self.window_s, max(end - self._since, 1e-3)))
        # steps are observations, or decisions where a pipelining policy makes more of them
        return round(rates[1] if self.decisions > self.observations else rates[0], 2)

    def sample(self) -> dict:
        """One JSON-ready sample of everything above."""
        with self.lock:
            now = time.time()
            actors = {n: {**a, "restarts": max(a["restarts"], self.restarts.get(n, 0))} for n, a in self.actors.items()}
            return {
                "time": round(now, 3),
                "session_id": self.session_id,
                "tap_id": self.tap_id,
                "sequence": self.sequence,
                "steps": self.steps,
                "steps_per_s": self._rate(now),
                "actions": dict(self.outcomes),
                "latency_ms": {s: percentiles(self.latency[s]) for s in STAGES},
                "model": {**self.tokens, "errors": self.model_errors},
                "actors": actors,
                "dropped": self.dropped,
            }


class MetricsTap(AttachedTap):
    """Feeds ``Metrics`` and lets its outputs (``metrics_view``) run on every tick."""

    name = "metrics-tap"
    max_lag = 20000  # fresher numbers beat completeness: skip to a snapshot beyond this

    def __init__(self, outputs=(), metrics: Metrics | None = None):
        self.metrics = metrics or Metrics()
        self.outputs = list(outputs)
        self.ended = ""

    def on_attach(self, info: dict) -> None:
        self.metrics.tap_id, self.metrics.session_id = info["tap_id"], info["session_id"]

    def on_snapshot(self, last_sequence: int, summary: dict) -> None:
        self.metrics.snapshot(last_sequence, summary)

    def on_row(self, row: dict) -> None:
        self.metrics.row(row)

    def on_drop(self, n: int) -> None:
        self.metrics.drop(n)

    def on_status(self, status: dict) -> None:
        self.metrics.status(status)

    def on_tick(self) -> None:
        for out in self.outputs:
            out.tick(self.metrics)

    def on_detach(self, reason: str) -> None:
        self.ended = reason
        for out in self.outputs:
            out.close(self.metrics, reason)
