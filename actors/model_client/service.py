"""``ModelService``: how the model-client actor answers ``AskModel``, apart from its socket.

    service = ModelService(backend, workers=settings.max_concurrent)
    service.submit(request_id, ask)      # starts answering on the thread pool; never blocks
    service.wake_fd                      # readable once a reply is ready (poll it beside the socket)
    for request_id, reply in service.finished(): ...   # protocol ModelAnswer / ModelFailure
    service.close()                      # cancels queued work; calls in flight end at once

One ask is one ``backend.ask`` of the questions built from the message. Every outcome is a
reply, never a crash: a ``ModelError`` becomes ``ModelFailure(error=err.to_record())`` (the
library has already redacted the key and bound the request); a question that cannot be built
is ``bad_question``; anything unexpected is ``internal`` (type name only, so no message
can carry a secret into a capture). A repeated request id is answered once: while it is in
flight the repeat is ignored, afterwards the kept reply is sent again.

Without a backend (``backend=None``) every ask is answered at once with ``failure_kind``
(``no_model_configured``, or ``config`` when the configured backend could not be opened).

Late answers. An ask submitted with the policy's ``sent_at`` has a deadline: ``sent_at`` +
``deadline_ms`` (the policy stops waiting then, records a ``policy_deadline`` timeout and
discards whatever comes later). A reply finished after it is still sent, and
``late_outcomes()`` also hands over the fields of a ``model_late_answer`` journal row —
the call's id, usage, attempts and its evidence (or error) — so tokens spent after the
deadline are recorded even though no proposal uses them.
"""

from __future__ import annotations

import collections
import logging
import os
import queue
import threading
import time
from concurrent.futures import ThreadPoolExecutor

from protocol.message import Message
from protocol.model_to_policy import ModelAnswer as AnswerMessage
from protocol.model_to_policy import ModelFailure
from protocol.policy_to_model import AskModel

from .backend import ModelBackend
from .errors import ModelError, QuestionError
from .questions import build_questions

log = logging.getLogger("model_client")

NO_MODEL = {
    "kind": "no_model_configured",
    "message": "no model is configured (set model.base_url and model.model, or model.replay)",
}
_KEEP_REPLIES = 64


class ModelService:
    """See the module docstring."""

    def __init__(self, backend: ModelBackend | None, *, workers: int = 2, failure: dict | None = None):
        self.backend = backend
        self.failure = dict(failure or NO_MODEL)
        self._pool = (
            ThreadPoolExecutor(max_workers=workers, thread_name_prefix="model-ask") if backend is not None else None
        )
        self._done: queue.Queue = queue.Queue()
        # a pool thread writes a byte here after each reply, so the actor's loop wakes at once
        # (a poll timeout kept every answer waiting up to 10 ms: bench/agent.py)
        self._wake_r, self._wake_w = os.pipe()
        os.set_blocking(self._wake_r, False)
        os.set_blocking(self._wake_w, False)
        self._wake_lock = threading.Lock()  # no write after close: the fd may be reused
        self._wake_open = True
        self._inflight: set[str] = set()
        self._replies: collections.OrderedDict[str, Message] = collections.OrderedDict()
        self._deadlines: dict[str, tuple[float, AskModel]] = {}
        self._late: list[dict] = []
        self.asked = 0
        self.late = 0

    @property
    def wake_fd(self) -> int:
        """A file descriptor that is readable while a reply may wait in ``finished``."""
        return self._wake_r

    def submit(self, request_id: str, ask: AskModel, sent_at: float | None = None) -> None:
        """Start answering ``ask``; ``sent_at`` (the asker's wall clock) starts its deadline."""
        if request_id in self._inflight:
            return
        kept = self._replies.get(request_id)
        if kept is not None:
            self._done.put((request_id, kept))
            return
        self.asked += 1
        if sent_at is not None:
            self._deadlines[request_id] = (sent_at + ask.deadline_ms / 1000, ask)
        if self._pool is None:
            self._done.put((request_id, ModelFailure(reply_to="", error=dict(self.failure))))
            return
        self._inflight.add(request_id)
        self._pool.submit(self._answer, request_id, ask)

    def finished(self) -> list[tuple[str, Message]]:
        """Replies ready to send (request id, message without ``reply_to``)."""
        out = []
        with self._wake_lock:
            try:
                while self._wake_open and os.read(self._wake_r, 4096):  # drained before the queue:
                    pass  # no wake-up is lost
            except BlockingIOError:
                pass
        while True:
            try:
                request_id, reply = self._done.get_nowait()
            except queue.Empty:
                return out
            self._inflight.discard(request_id)
            self._check_deadline(request_id, reply)
            self._replies[request_id] = reply
            while len(self._replies) > _KEEP_REPLIES:
                self._replies.popitem(last=False)
            out.append((request_id, reply))

    def late_outcomes(self) -> list[dict]:
        """``model_late_answer`` row fields for replies finished past their deadline (once)."""
        out, self._late = self._late, []
        return out

    def _check_deadline(self, request_id: str, reply: Message) -> None:
        deadline, ask = self._deadlines.pop(request_id, (None, None))
        now = time.time()
        if deadline is not None and now > deadline:
            self.late += 1
            self._late.append(late_fields(request_id, ask, reply, now - deadline))

    def usage(self) -> dict:
        return self.backend.usage() if self.backend is not None else {}

    def close(self) -> None:
        if self.backend is not None:
            self.backend.close()
        if self._pool is not None:
            self._pool.shutdown(wait=False, cancel_futures=True)
        with self._wake_lock:
            if self._wake_open:
                self._wake_open = False
                os.close(self._wake_r)
                os.close(self._wake_w)

    # -- on a pool thread ---------------------------------------------------------------------

    def _answer(self, request_id: str, ask: AskModel) -> None:
        self._done.put((request_id, answer_one(self.backend, ask)))
        with self._wake_lock:
            try:
                if self._wake_open:
                    os.write(self._wake_w, b"!")
            except BlockingIOError:  # the pipe is full: the loop is awake already
                pass


def answer_one(backend: ModelBackend, ask: AskModel) -> Message:
    """The reply to one ask (``reply_to`` left empty for the sender to fill)."""
    try:
        questions = build_questions(ask.kind, ask.questions, ask.images or ())
        result = backend.ask(questions)
    except ModelError as err:
        record = err.to_record()
        log.info("model_error %s on %s: %s", record.get("kind"), ask.kind, record.get("message"))
        return ModelFailure(reply_to="", error=record)
    except QuestionError as err:
        return ModelFailure(
            reply_to="", error={"kind": "bad_question", "message": str(err), "request": None, "attempts": 0}
        )
    except Exception as err:  # noqa: BLE001 - a reply, never a dead actor
        log.error("internal error answering a %s question: %s", ask.kind, type(err).__name__)
        return ModelFailure(
            reply_to="",
            error={
                "kind": "internal",
                "message": f"model client failed: {type(err).__name__}",
                "request": None,
                "attempts": 0,
            },
        )
    return AnswerMessage(reply_to="", answers=[a.to_record() for a in result.answers], evidence=result.evidence)


def late_fields(request_id: str, ask: AskModel, reply: Message, late_by_s: float) -> dict:
    """The ``model_late_answer`` row for a reply the asker had stopped waiting for.

    Its evidence (or error) is kept under ``evidence`` (``error``), never ``model_evidence``
    (``model_error``): replay must not offer an answer the session never used.
    """
    fields = {
        "ask_id": request_id,
        "question_kind": ask.kind,
        "deadline_ms": ask.deadline_ms,
        "late_by_ms": round(late_by_s * 1000, 3),
    }
    if isinstance(reply, AnswerMessage):
        record, outcome = dict(reply.evidence), "answered"
        fields["evidence"] = record
    else:
        record = dict(getattr(reply, "error", {}) or {})
        outcome = str(record.get("kind", "model_error"))
        fields["error"] = record
    request = record.get("request") if isinstance(record.get("request"), dict) else {}
    fields.update(
        outcome=outcome,
        call_id=record.get("call_id"),
        request_hash=request.get("request_hash"),
        usage=record.get("usage"),
        attempts=record.get("attempts", 0),
    )
    return fields
