"""``ReplayBackend``: answers from the model evidence of an earlier capture, calls nothing.

    backend = ReplayBackend.from_events("run/capture/sessions/<id>/events.jsonl")
    backend.ask([...])   # same interface as ModelClient

It reads the journal rows in order:

* a row with a ``model_evidence`` field (a list of evidence dicts, as ``ModelClient``
  produced them) contributes those answers;
* a row with a ``model_error`` field (a dict) — or an ``event: "model_error"`` row carrying
  ``kind`` and ``request`` — contributes that failure, replayed as a ``ReplayedError`` of the
  recorded kind, so the policy falls back exactly where it did.

Entries are keyed by ``request_hash(question_kind, question states)``, recomputed from the
recorded request, and consumed in capture order: the n-th time a question is asked, the
n-th recorded outcome for it is given. A question the capture never asked, or asked fewer
times, raises ``ReplayDivergence`` — reported, never invented. A recorded answer that no
longer fits the question's schema is a divergence too. Duplicate rows carrying the same
``call_id`` count once. ``gated`` is recomputed with ``gate`` (default: the recorded gate).
A replayed answer reports ``null`` tokens and ``cost_usd: 0.0`` with a ``cost_note``: nothing
was spent (the original usage and cost stay in ``replay_of.usage``).
Truncated or unparseable journal lines are skipped and counted (``skipped_lines``).
"""

from __future__ import annotations

import collections
import time
from collections.abc import Iterable, Sequence
from pathlib import Path

from protocol import events
from protocol.journal import iter_lines

from .answers import check_batch, parse_answers, question_key
from .backend import ModelAnswer
from .errors import ModelError, ReplayDivergence, ReplayedError
from .evidence import UsageTotals, new_call_id, request_hash, success_evidence
from .questions import Question

#: why a replayed answer's ``cost_usd`` is 0.0
REPLAY_COST_NOTE = (
    "replayed from a capture: nothing was sent or spent; the original call's usage and cost are in replay_of.usage"
)


class ReplayBackend:
    """The replaying ``ModelBackend``; see the module docstring."""

    def __init__(self, rows: Iterable[dict], *, gate: float | None = None):
        self._gate = gate
        self._queues: dict[str, collections.deque] = collections.defaultdict(collections.deque)
        self._asked: collections.Counter = collections.Counter()
        self._recorded: collections.Counter = collections.Counter()
        self._seen_ids: set[str] = set()
        self._totals = UsageTotals()
        self.skipped_lines = 0
        for row in rows:
            self._load_row(row)

    @classmethod
    def from_events(cls, path: str | Path, *, gate: float | None = None) -> ReplayBackend:
        """Load a session's ``events.jsonl`` (a missing file is an ``OSError``)."""
        rows, skipped = [], 0
        for line in iter_lines(str(path)):  # the one journal reader (protocol.journal)
            if isinstance(line.row, dict):
                rows.append(line.row)
            else:  # torn: not UTF-8, not JSON, nested too deep, or an unterminated last line
                skipped += 1
        backend = cls(rows, gate=gate)
        backend.skipped_lines = skipped
        return backend

    def recorded_calls(self) -> int:
        """Outcomes still available to replay."""
        return sum(len(q) for q in self._queues.values())

    def ask(self, questions: Question | Sequence[Question]) -> ModelAnswer:
        batch = (questions,) if isinstance(questions, Question) else tuple(questions)
        kind = check_batch(batch)
        states = [q.state() for q in batch]
        key = request_hash(kind, states)
        self._asked[key] += 1
        started = time.monotonic()
        request = {"question_kind": kind, "questions": states, "request_hash": key}
        try:
            if not self._queues.get(key):
                raise ReplayDivergence(kind, key, self._why_missing(key))
            tag, record = self._queues[key].popleft()
            if tag == "error":
                raise ReplayedError(record).bind(
                    request=record["request"], attempts=0, backend="replay", call_id=new_call_id()
                )
            return self._replay_answer(batch, key, record, started)
        except (TypeError, ValueError, AttributeError, KeyError) as exc:  # a damaged record
            err = ReplayDivergence(kind, key, f"the recorded evidence cannot be read ({type(exc).__name__}: {exc})")
            err.bind(request=request, attempts=0, backend="replay", call_id=new_call_id())
            self._totals.add_error(err.to_record())
            raise err from None
        except ModelError as err:
            if err.call_id is None:
                err.bind(request=request, attempts=0, backend="replay", call_id=new_call_id())
            self._totals.add_error(err.to_record())
            raise

    def usage(self) -> dict:
        return self._totals.to_dict()

    def close(self) -> None:
        """Nothing to release; present for the ``ModelBackend`` interface."""

    # -- loading ------------------------------------------------------------------------------

    def _load_row(self, row: dict) -> None:
        evidences = row.get("model_evidence")
        for evidence in evidences if isinstance(evidences, list) else ():
            if isinstance(evidence, dict) and _answers_are_records(evidence):
                self._add("evidence", evidence)
        error = row.get("model_error")
        if isinstance(error, dict):
            self._add("error", error)
        elif row.get("event") == events.ModelError.KIND and "request" in row and "kind" in row:
            self._add("error", row)

    def _add(self, tag: str, record: dict) -> None:
        request = record.get("request")
        if (
            not isinstance(request, dict)
            or not isinstance(request.get("question_kind"), str)
            or not isinstance(request.get("questions") or [], list)
        ):
            return  # not a record this library wrote: skipped, never guessed at
        call_id = record.get("call_id")
        if call_id is not None:
            if call_id in self._seen_ids:
                return
            self._seen_ids.add(call_id)
        key = request_hash(request["question_kind"], request.get("questions") or [])
        self._queues[key].append((tag, record))
        self._recorded[key] += 1

    # -- answering ----------------------------------------------------------------------------

    def _replay_answer(self, batch: tuple[Question, ...], key: str, evidence: dict, started: float) -> ModelAnswer:
        gate = self._gate if self._gate is not None else evidence.get("confidence_gate", 0.0)
        payload = {}
        for record in evidence.get("answers") or ():
            answer = dict(record.get("answer") or {})
            answer.update(confidence=record.get("confidence"), reason=record.get("reason"))
            payload[question_key(record.get("question_index", 0))] = answer
        try:
            answers = parse_answers(payload, batch, gate)
        except ModelError as exc:
            raise ReplayDivergence(batch[0].kind, key, f"the recorded answer no longer fits: {exc}") from exc
        recorded_usage = evidence.get("usage") or {}
        usage = {
            "prompt_tokens": None,
            "completion_tokens": None,
            "total_tokens": None,
            "cached_tokens": None,
            "model": recorded_usage.get("model"),
            "latency_ms": round((time.monotonic() - started) * 1000, 3),
            "cost_usd": 0.0,
            "cost_unknown": None,
            "price": None,
            "cost_note": REPLAY_COST_NOTE,
        }
        result = success_evidence(
            evidence["request"], answers, usage, gate=gate, attempts=0, call_id=new_call_id(), backend="replay"
        )
        result["replay_of"] = {"call_id": evidence.get("call_id"), "usage": recorded_usage}
        self._totals.add_evidence(result)
        return ModelAnswer(tuple(answers), result)

    def _why_missing(self, key: str) -> str:
        recorded = self._recorded[key]
        if recorded == 0:
            return "the capture never asked this question"
        return f"asked {self._asked[key]} times, the capture recorded it {recorded} times"


def _answers_are_records(evidence: dict) -> bool:
    """Evidence whose ``answers`` is a list of answer records (dicts), as the client wrote."""
    answers = evidence.get("answers")
    return isinstance(answers, list) and all(
        isinstance(a, dict) and isinstance(a.get("answer") or {}, dict) for a in answers
    )
