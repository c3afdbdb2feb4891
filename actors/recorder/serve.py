"""The recorder's serving loop: sockets, group commit, batches, parked follows.

Two ROUTER sockets: the writers' endpoint (``recorder``: every request of ``rules.Recorder``
plus ``record_batch`` and ``follow``) and the read-only stream endpoint taps attach to
(``stream``: ``snapshot`` and ``follow``; a write there is refused and journalled as
``tap_write_refused``). Each request gets exactly one reply.

* **Group commit** — up to ``BATCH`` waiting writer requests are answered with one fsync for
  all the durable rows among them; no reply is sent before that fsync, and if it fails every
  reply that waited for it becomes ``journal_failed``. What no reply waits for (the
  ``decisions.jsonl`` lines, a due checkpoint: ``Recorder.after_group``) comes after the replies.
* **Batches** — each item of a ``record_batch`` is answered as if it had come alone.
* **Parked follows** — a ``follow`` with nothing to return waits until rows are appended or
  its ``wait_ms`` passes; one that names ``wake`` kinds waits until a row of such a kind is
  among them (or ``max_rows`` rows wait). Followers get rows as soon as they are written,
  before the group's fsync: writers' acknowledgements wait for the fsync, reads do not.
  (A follower acting on a row before it is durable is safe: whatever it records comes
  later in the same journal, so no fsync can keep its rows and lose the one it read.)
* **Standing intents** — an ``await_intent`` (the actuator's, on the writers' endpoint) waits
  until a proposal becomes executable, then gets that proposal's intent, recorded in the same
  group (so acknowledged after the same fsync); ``no_intent`` at its ``wait_ms``. One per
  sender: a newer one replaces it, and the sender's ``actor_exit`` row drops it, so an intent
  is not recorded for an actuator known to be gone (a replaced or dropped request is answered
  ``no_intent``; a withdrawal too, with the group's replies, after any intent it got before).
* **Errors** — ``RecorderServer.error_reply`` is the one place an exception becomes a
  ``recorder_error`` reply (a ``Refusal``'s own code, ``journal_failed``, ``storage_failed``,
  ``bad_request``); the journal and storage failures also ask the supervisor to stop.
"""

from __future__ import annotations

import dataclasses
import logging
import time
from collections.abc import Callable

import zmq

from actors.runtime.actor import ActorContext
from actors.runtime.transport import decode_or_count, send_envelope
from protocol import message
from protocol import to_recorder as req
from protocol.errors import ProtocolError
from protocol.events import ActorExit, Observation, TapWriteRefused
from protocol.from_recorder import BatchReplies, NoIntent, RecorderError, Rows

from .rules import Recorder, Refusal
from .writer import InjectedFailure, JournalError

log = logging.getLogger("recorder")

BATCH = 64  # requests taken off the socket before one group fsync and the replies
GROUPED = (
    req.StoreObservation,
    req.ReportObservationError,
    req.RecordProposal,
    req.RecordIntent,
    req.RecordResult,
    req.RecordEvent,
    req.AwaitIntent,
)  # and batches of them
MAX_WAIT_MS = 60_000
POLLIN = int(zmq.POLLIN)  # a plain int: ``&`` with the enum member builds an enum each time
MAX_ROWS = 1024
#: what ``error_reply`` turns into a reply; anything else is a bug and ends the actor
ANSWERED = (
    Refusal,
    ProtocolError,
    JournalError,
    OSError,
    ValueError,
    TypeError,
    OverflowError,
    RecursionError,
)  # (a state the wire carries nested deeper than JSON can write)


@dataclasses.dataclass
class Parked:
    sock: zmq.Socket
    routing: list[bytes]
    msg_id: str
    follow: req.Follow
    deadline: float
    wakes: Callable[[dict], bool] | None  # ``follow.wake`` as a test of one row (None: any row)
    checked: int = 0  # rows after the cursor already seen to hold no waking row


def wake_test(wake: list[str]) -> Callable[[dict], bool]:
    """A follow's ``wake`` entries as a test of one row: ``kind`` (any row of it),
    ``kind.field`` (the field present and not null), ``kind.field=value`` (compared as text).
    ``ValueError`` naming the first malformed entry (or an empty list: null wakes on any row)."""
    if not wake:
        raise ValueError("wake names no row (null: every row wakes the follow)")
    by_kind: dict[str, list[tuple[str | None, str | None]]] = {}  # kind -> its (field, value)s
    for n, entry in enumerate(wake):
        kind, dot, condition = entry.partition(".")
        name, eq, value = condition.partition("=")
        if not kind or "=" in kind or (dot and not name):
            raise ValueError(f"wake[{n}] {entry!r}: expected 'kind', 'kind.field' or 'kind.field=value'")
        by_kind.setdefault(kind, []).append((name or None, value if eq else None))

    def wakes(row: dict) -> bool:  # most rows are of no kind named: one dict miss
        conditions = by_kind.get(row.get("event"))
        return conditions is not None and any(
            name is None or (row.get(name) is not None if value is None else str(row.get(name)) == value)
            for name, value in conditions
        )

    return wakes


@dataclasses.dataclass
class Awaiting:
    """A parked ``await_intent``."""

    sock: zmq.Socket
    routing: list[bytes]
    msg_id: str
    body: req.AwaitIntent
    sender: str
    deadline: float


class RecorderServer:
    def __init__(self, recorder: Recorder, ctx: ActorContext):
        self.recorder = recorder
        self.ctx = ctx
        self.parked: list[Parked] = []
        self.awaiting: list[Awaiting] = []
        self.writers = {**recorder.handlers(), req.RecordBatch: self.on_batch}
        self.readers = {req.Snapshot: recorder.on_snapshot}
        self.parked_seen = (-1, 0.0)  # (sequence, first deadline) after the last pass: nothing due before either

    def serve(self) -> None:
        """Serve both endpoints until the actor is asked to stop; then close the journal."""
        sock = self._bind("recorder")
        stream = self._bind("stream") if "stream" in self.ctx.endpoints else None
        poller = zmq.Poller()
        for s in (sock, stream):
            if s is not None:
                poller.register(s, zmq.POLLIN)
        self.ctx.status["sequence"] = self.recorder.writer.sequence
        try:
            while not self.ctx.stopping.is_set():
                ready = dict(poller.poll(self._poll_ms()))
                if sock in ready:
                    self._serve_writers(sock)
                if stream is not None and stream in ready:
                    self._serve_reader(stream)
                self._serve_parked()
                self._expire_awaiting()
                self.ctx.status["sequence"] = self.recorder.writer.sequence
        finally:
            for s in (sock, stream):
                if s is not None:
                    s.close(0)
            self.recorder.writer.close()

    def _poll_ms(self) -> int:
        if not self.parked and not self.awaiting:
            return 200
        first = min(p.deadline for p in [*self.parked, *self.awaiting])
        return max(1, min(200, int((first - time.monotonic()) * 1000)))

    def _bind(self, name: str) -> zmq.Socket:
        s = self.ctx.zctx.socket(zmq.ROUTER)
        s.setsockopt(zmq.LINGER, 0)
        s.bind(self.ctx.endpoints[name])
        return s

    def _reply(self, sock: zmq.Socket, routing: list[bytes], body) -> None:
        send_envelope(sock, body, session=self.recorder.sid, sender="recorder", routing=routing)

    # -- the one place errors become replies ------------------------------------------------
    def error_reply(self, exc: Exception, what: str) -> RecorderError:
        """The ``recorder_error`` for ``exc`` raised while answering ``what`` (a request type
        or a batch position). Journal and storage failures also ask the supervisor to stop."""
        if isinstance(exc, Refusal):
            return RecorderError(reply_to="", code=exc.code, message=str(exc))
        if isinstance(exc, JournalError):
            if not isinstance(exc, InjectedFailure):
                log.error("%s", exc)
            self.ctx.request_stop("journal_failed", str(exc))
            return RecorderError(reply_to="", code="journal_failed", message=str(exc))
        if isinstance(exc, OSError):
            self.ctx.request_stop("storage_failed", str(exc))
            return RecorderError(reply_to="", code="storage_failed", message=str(exc))
        return RecorderError(reply_to="", code="bad_request", message=f"{what}: {exc}")  # a value JSON cannot hold

    def answer(self, what: str, call: Callable[[], object]):
        """``call()``'s reply, or the ``recorder_error`` for what it raised."""
        try:
            return call()
        except ANSWERED as exc:
            return self.error_reply(exc, what)

    # -- the writers' endpoint: group commit ------------------------------------------------
    def _serve_writers(self, sock: zmq.Socket) -> None:
        """Answer up to ``BATCH`` waiting requests; one fsync, then the replies."""
        replies: list[tuple[list[bytes], object]] = []
        self.recorder.writer.begin_group()
        for _ in range(BATCH):
            if not sock.getsockopt(zmq.EVENTS) & POLLIN:  # (cheaper than recv raising Again)
                break
            try:
                frames = sock.recv_multipart(zmq.NOBLOCK)
            except zmq.Again:
                break
            env = self._decode(sock, frames, "recorder")
            if env is None or self._standing(env, sock, frames[:-1], replies):
                continue
            if not isinstance(env.body, (*GROUPED, req.RecordBatch)):
                replies = self._commit(replies)  # finalizing writes its files in order: no deferred fsync
            replies.append((frames[:-1], self._answer(env, self.writers)))
            self._after_request(env, replies)
        self._serve_parked()  # the rows go to their followers now; the writers wait for the fsync
        for routing, reply in self._commit(replies):
            self._reply(sock, routing, reply)
        self.recorder.after_group()  # the feed lines and a due checkpoint: no reply waits for them

    def _commit(self, replies: list[tuple[list[bytes], object]]) -> list[tuple[list[bytes], object]]:
        """fsync the group's durable rows; if that fails, none of ``replies`` (which waited
        for it) is acknowledged: each becomes the failure's ``recorder_error``."""
        failure = self.answer("commit", self.recorder.commit)
        if not isinstance(failure, RecorderError):
            return replies
        return [(routing, dataclasses.replace(failure, reply_to=reply.reply_to)) for routing, reply in replies]

    def _decode(self, sock: zmq.Socket, frames: list[bytes], endpoint: str):
        """The request's envelope, or None when there is nothing to answer now (an
        undecodable frame, counted; or a follow, parked until rows come)."""
        env = decode_or_count(frames[-1], self.ctx.counters, endpoint)
        if env is None or not isinstance(env.body, req.Follow) or env.body.after < 0:
            return env
        try:
            wakes = None if env.body.wake is None else wake_test(env.body.wake)
        except ValueError:
            return env  # refused by ``_answer``, naming the entry
        self.parked.append(Parked(sock, frames[:-1], env.id, env.body, _deadline(env.body.wait_ms), wakes))
        self.parked_seen = (-1, 0.0)
        return None

    # -- standing intents ---------------------------------------------------------------------
    def _standing(self, env, sock: zmq.Socket, routing: list[bytes], replies: list) -> bool:
        """Park an ``await_intent``, or take a withdrawal (``wait_ms`` 0, answered with the
        group's replies: after any intent it got before); True when done here. Not when a
        proposal waits to be taken or the journal is broken: the handler answers then."""
        body = env.body
        if (
            not isinstance(body, req.AwaitIntent)
            or self.recorder.writer.broken
            or (body.wait_ms > 0 and self.recorder.executable is not None)
        ):
            return False
        self._drop_awaiting(env.sender)  # one standing intent per sender: the newest
        if body.wait_ms <= 0:
            replies.append((routing, NoIntent(reply_to=env.id)))
        else:
            self.awaiting.append(Awaiting(sock, routing, env.id, body, env.sender, _deadline(body.wait_ms)))
        return True

    def _after_request(self, env, replies: list[tuple[list[bytes], object]]) -> None:
        """After each writer request: a proposal that became executable goes to the oldest
        parked ``await_intent`` (its reply joins the group's); an ``actor_exit`` row drops
        the exited actor's."""
        body = env.body
        if isinstance(body, req.RecordEvent) and body.event == ActorExit.KIND:
            self._drop_awaiting(body.fields.get("actor"))
        if self.awaiting and self.recorder.executable is not None:
            w = self.awaiting.pop(0)
            reply = self.answer(req.AwaitIntent.TYPE, lambda: self.writers[req.AwaitIntent](w.body))
            replies.insert(0, (w.routing, dataclasses.replace(reply, reply_to=w.msg_id)))  # the step's next hop: first

    def _drop_awaiting(self, sender) -> None:
        """Drop ``sender``'s parked ``await_intent``, answered ``no_intent`` (a live sender
        asks again at once; a dead one's answer goes nowhere)."""
        for w in [w for w in self.awaiting if w.sender == sender]:
            self.awaiting.remove(w)
            self._reply(w.sock, w.routing, NoIntent(reply_to=w.msg_id))

    def _expire_awaiting(self) -> None:
        """``no_intent`` to each parked ``await_intent`` whose ``wait_ms`` passed."""
        now = time.monotonic()
        for w in [w for w in self.awaiting if now >= w.deadline]:
            self.awaiting.remove(w)
            self._reply(w.sock, w.routing, NoIntent(reply_to=w.msg_id))

    def _answer(self, env, handlers: dict, read_only: bool = False):
        def call():
            body = env.body
            if isinstance(body, req.Follow):  # not parked: a negative cursor or a malformed wake
                if body.after < 0:
                    raise Refusal("bad_cursor", f"follow after {body.after}: must be >= 0")
                try:
                    wake_test(body.wake)
                except ValueError as exc:
                    raise Refusal("bad_wake", f"follow: {exc}") from None
            handler = handlers.get(type(body))
            if handler is None and read_only:
                self._refuse_write(env)
                raise Refusal("read_only", f"the stream endpoint is read-only; {env.type!r} refused")
            if handler is None:
                raise Refusal("unexpected_type", f"the recorder does not take {env.type!r}")
            return handler(body)

        return dataclasses.replace(self.answer(env.type, call), reply_to=env.id)

    def on_batch(self, m: req.RecordBatch) -> BatchReplies:
        """Each item answered as if sent alone, in order (see ``RecordBatch``)."""
        out = []
        for n, item in enumerate(m.items):
            body = self.answer(f"items[{n}]", lambda: _batch_item(n, item))
            if not isinstance(body, RecorderError):
                body = self.answer(body.TYPE, lambda: self.writers[type(body)](body))
            out.append(body.to_item())
        return BatchReplies(reply_to="", items=out)

    def _due(self, p: Parked) -> bool:
        """Whether a parked follow is answered now (before its deadline): rows wait after its
        cursor and, if it names ``wake`` entries, one of them wakes it or ``max_rows`` wait."""
        last = self.recorder.writer.sequence
        after, limit = p.follow.after, _limit(p.follow)
        if last <= after:
            return False
        if p.wakes is None or last - after >= limit:
            return True
        new = self.recorder.rows_after(after + p.checked, last - after - p.checked)
        p.checked = last - after
        return any(p.wakes(r) for r in new)

    # -- the read-only stream endpoint and parked follows -----------------------------------
    def _serve_reader(self, stream: zmq.Socket) -> None:
        frames = stream.recv_multipart()
        env = self._decode(stream, frames, "stream")
        if env is not None:
            self._reply(stream, frames[:-1], self._answer(env, self.readers, read_only=True))

    def _refuse_write(self, env) -> None:
        """Record a write attempted on the read-only endpoint (a tap overstepping)."""
        if self.recorder.finalized is None:
            try:
                self.recorder.append(TapWriteRefused(request=env.type, sender=env.sender))
            except JournalError as exc:  # the refusal is answered all the same
                log.error("%s", exc)

    def _serve_parked(self) -> None:
        """Answer each parked follow now due (``_due``) or at its deadline. Skipped when no
        row came, no follow was parked and no deadline passed since the last pass (which
        then answered every follow it could)."""
        now = time.monotonic()
        rec = self.recorder
        if rec.writer.sequence == self.parked_seen[0] and now < self.parked_seen[1]:
            return
        keep = []
        for p in self.parked:
            if now < p.deadline and not self._due(p):
                keep.append(p)
                continue
            rows = rec.rows_after(p.follow.after, _limit(p.follow))
            states = None
            if p.follow.with_states:
                states = {
                    r["observation_id"]: s
                    for r in rows
                    if r["event"] == Observation.KIND
                    for s in [rec.state_of(r["observation_id"])]
                    if s is not None
                }
            try:
                self._reply(
                    p.sock,
                    p.routing,
                    Rows(reply_to=p.msg_id, rows=rows, last_sequence=rec.writer.sequence, states=states),
                )
            except ProtocolError:  # too big for one frame: send the rows without states
                self._reply(
                    p.sock, p.routing, Rows(reply_to=p.msg_id, rows=rows[:1], last_sequence=rec.writer.sequence)
                )
        self.parked = keep
        self.parked_seen = (rec.writer.sequence, min((p.deadline for p in keep), default=float("inf")))


def _deadline(wait_ms: int) -> float:
    return time.monotonic() + min(max(wait_ms, 0), MAX_WAIT_MS) / 1000


def _limit(follow: req.Follow) -> int:
    return max(1, min(follow.max_rows, MAX_ROWS))


def _batch_item(n: int, item: dict):
    """A batch item's request; ``Refusal`` when its type cannot be batched."""
    cls = message.lookup(item.get("type"))
    if cls not in GROUPED or cls is req.AwaitIntent:
        raise Refusal("bad_batch_item", f"items[{n}]: {item.get('type')!r} cannot be batched")
    return cls.from_body(item.get("body"))
