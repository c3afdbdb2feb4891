"""``RecorderClient``: every request to the recorder is built and sent here.

    recorder = RecorderClient(zctx, endpoint, session=..., sender=..., counters=...,
                              should_stop=ctx.stopping.is_set)      # or ctx.recorder()
    recorder.store_observation(read_id, state, phase=..., read_ms=..., identity=...)
    recorder.report_observation_error(read_id, error, error_type)   # logs, never raises
    recorder.record_proposals([RecordProposal, ...])   # one request, or one record_batch
    recorder.record_intent(proposal_id, requester)     # -> IntentAck (after the fsync)
    recorder.record_intents(proposal_ids, requester)   # -> [IntentAck | RecorderError]
    recorder.standing_intent(requester, wait_ms)       # -> StandingIntent (the actuator's)
    recorder.record_result(RecordResult)               # a response that cannot travel: kept
    recorder.record_results([RecordResult, ...])       #   without it; a batch item by item
    recorder.record(Event(...), key=None)              # a typed journal event (protocol.events)
    recorder.record_event(kind, fields, key=None)      # an event given as its fields
    recorder.finalize(reason, exit_code)               # -> the summary
    recorder.finalize_nowait(reason, exit_code)        # -> Pending (the supervisor's loop)
    recorder.snapshot()                                # -> SnapshotReply (on the stream)
    recorder.send_nowait(body) -> Pending              # for loops that never block
    follow_message(after, ...)                         # the follow request (follow.py)
    read_observation(capture_root, relpath)            # an observation file's state

Deadlines are the ones each caller has always used: an observation or a proposal 60 s, an
intent 3600 s (no acknowledgement, no request — the actuator waits out a recorder restart),
a result 30 s, an event 10 s unless the caller says otherwise. Every request is idempotent
(``protocol.to_recorder``), so the Lazy Pirate client may send it again on a fresh socket.

Failures: ``PeerRefused`` (the recorder answered with its ``recorder_error``),
``PeerUnavailable`` (no answer in time) and ``NotEncodable`` (nothing was sent) come from
``actors.runtime.transport``; each method's docstring says which it raises and which it
handles itself.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable

import zmq

from protocol import ProtocolError, obspack
from protocol.events import Event
from protocol.from_recorder import BatchReplies, IntentAck, SnapshotReply
from protocol.message import Message, from_item
from protocol.to_recorder import (
    AwaitIntent,
    Finalize,
    Follow,
    RecordBatch,
    RecordEvent,
    RecordIntent,
    RecordProposal,
    RecordResult,
    ReportObservationError,
    Snapshot,
    StoreObservation,
)

from .transport import (
    Client,
    Counters,
    DropWatch,
    NotEncodable,
    PeerRefused,
    RequestFailed,
    connect_dealer,
    decode_or_count,
    send_envelope,
)

log = logging.getLogger("gamerig.recorder_client")

OBSERVATION_S = 60.0
OBSERVATION_ERROR_S = 30.0
PROPOSAL_S = 60.0
INTENT_S = 3600.0
RESULT_S = 30.0
EVENT_S = 10.0
SNAPSHOT_S, SNAPSHOT_TRY_S = 15.0, 2.5


def follow_message(
    after: int, *, max_rows: int = 256, wait_ms: int = 1000, with_states: bool = False, wake: list[str] | None = None
) -> Follow:
    """The ``follow`` request: rows after sequence ``after`` (``actors.runtime.follow``),
    answered when a row of a ``wake`` kind is among them (None: any row)."""
    return Follow(
        after=after,
        max_rows=max_rows,
        wait_ms=wait_ms,
        with_states=with_states,
        wake=list(wake) if wake is not None else None,
    )


def read_observation(capture_root: str, relpath: str) -> dict:
    """The state stored in an observation file (``relpath`` is the row's ``path``), from the
    file or the session's pack (``protocol.obspack``)."""
    return obspack.read_state(capture_root, relpath)


class Pending:
    """One request sent without waiting for its reply, on a socket of its own (register
    ``socket`` with a poller; ``reply()`` never blocks; ``close()`` drops it)."""

    def __init__(self, sock: zmq.Socket, msg_id: str, counters: Counters, endpoint: str):
        self.socket, self.id, self.counters, self.endpoint = sock, msg_id, counters, endpoint
        self.sent_at = time.monotonic()

    def reply(self) -> Message | None:
        """The reply if it has come (replies to anything else are dropped), else None."""
        while self.socket is not None and self.socket.poll(0):
            env = decode_or_count(self.socket.recv(), self.counters, self.endpoint)
            if env is not None and getattr(env.body, "reply_to", None) == self.id:
                return env.body
        return None

    def age_s(self) -> float:
        return time.monotonic() - self.sent_at

    def close(self) -> None:
        if self.socket is not None:
            self.socket.close(0)
            self.socket = None


class StandingIntent:
    """The actuator's standing intent, kept on one socket for the actor's life.

    ``park()`` sends an ``await_intent`` (the recorder keeps the newest per sender, so a
    re-sent one replaces the last); ``replies()`` reads whatever came: every ``IntentAck``,
    whichever request it answers (each is an intent recorded for this requester: it must be
    sent once), and the answer that ends the current request (``NoIntent`` or a
    ``RecorderError``). ``withdraw()`` takes the parked request back before the actor stops
    and returns what the recorder answered before it (it answers in order)."""

    def __init__(
        self,
        sock: zmq.Socket,
        requester: str,
        wait_ms: int,
        *,
        session: str,
        sender: str,
        counters: Counters,
        endpoint: str,
    ):
        self.socket, self.requester, self.wait_ms = sock, requester, wait_ms
        self.session, self.sender, self.counters, self.endpoint = session, sender, counters, endpoint
        self.watch = DropWatch(sock)
        self.current: str | None = None  # the parked request's id
        self.sent_at = 0.0

    @property
    def parked(self) -> bool:
        return self.current is not None

    def park(self, wait_ms: int | None = None) -> str:
        body = AwaitIntent(requester=self.requester, wait_ms=self.wait_ms if wait_ms is None else wait_ms)
        self.current = send_envelope(self.socket, body, session=self.session, sender=self.sender)
        self.sent_at = time.monotonic()
        return self.current

    def overdue(self, grace_s: float) -> bool:
        """No answer ``grace_s`` past the request's ``wait_ms``, or the connection dropped
        while it was parked (the recorder died with it: it restarts)."""
        return self.parked and (time.monotonic() - self.sent_at > self.wait_ms / 1000 + grace_s or self.watch.dropped())

    def replies(self) -> list[Message]:
        out = []
        while self.socket.poll(0):
            env = decode_or_count(self.socket.recv(), self.counters, self.endpoint)
            body = getattr(env, "body", None)
            reply_to = getattr(body, "reply_to", None)
            if isinstance(body, IntentAck) or (reply_to is not None and reply_to == self.current):
                out.append(body)
            if reply_to is not None and reply_to == self.current:
                self.current = None
        return out

    def withdraw(self, deadline_s: float = 0.5) -> list[Message]:
        """Withdraw the parked request (``wait_ms`` 0); the replies that came before the
        confirmation (act on its ``IntentAck``s). Waits up to ``deadline_s``."""
        out = self.replies()
        if self.parked:
            withdrawal = self.park(0)
            end = time.monotonic() + deadline_s
            while self.current == withdrawal and time.monotonic() < end:
                if self.socket.poll(max(1, int((end - time.monotonic()) * 1000))):
                    out += [r for r in self.replies() if isinstance(r, IntentAck)]
        self.current = None
        return out

    def close(self) -> None:
        self.watch.close()
        self.socket.close(0)


class RecorderClient:
    """The recorder's requests (see the module docstring); wraps one ``transport.Client``."""

    def __init__(
        self,
        zctx: zmq.Context,
        endpoint: str,
        *,
        session: str,
        sender: str,
        counters: Counters,
        should_stop: Callable[[], bool] = lambda: False,
    ):
        self.client = Client(zctx, endpoint, session=session, sender=sender, counters=counters)
        self.zctx, self.endpoint, self.session, self.sender = zctx, endpoint, session, sender
        self.counters = counters
        self.should_stop = should_stop

    # -- the step path --------------------------------------------------------------------
    def store_observation(
        self,
        read_id: str,
        state: dict,
        *,
        phase: str = "run",
        read_ms: float | None = None,
        identity: dict | None = None,
        after_send: Callable[[], object] | None = None,
    ) -> Message:
        """Store one read state. Raises ``NotEncodable`` (a state that cannot travel: a
        failed read for the caller) or ``RequestFailed`` (not stored). ``after_send``: see
        ``Client.request``."""
        msg = StoreObservation(read_id=read_id, state=state, phase=phase, read_ms=read_ms, identity=identity)
        return self.request(msg, deadline_s=OBSERVATION_S, after_send=after_send)

    def report_observation_error(self, read_id: str, error: str, error_type: str = "") -> bool:
        """Record a failed read; False (logged) if the recorder did not take it."""
        try:
            self.request(
                ReportObservationError(read_id=read_id, error=error, error_type=error_type),
                deadline_s=OBSERVATION_ERROR_S,
            )
        except RequestFailed as exc:
            log.error("could not record a failed read: %s", exc)
            return False
        return True

    def record_proposals(
        self, msgs: list[RecordProposal], *, after_send: Callable[[], object] | None = None
    ) -> list[Message | PeerRefused]:
        """Record decisions: one request, or one ``record_batch`` for several. Returns one
        reply per proposal (``ProposalRecorded``, a batch item's ``RecorderError``, or the
        ``PeerRefused`` that refused them all); raises ``RequestFailed`` if not recorded."""
        try:
            if len(msgs) == 1:
                return [self.request(msgs[0], deadline_s=PROPOSAL_S, after_send=after_send)]
            return self.request_batch(list(msgs), deadline_s=PROPOSAL_S, after_send=after_send)
        except PeerRefused as exc:
            log.error("proposal refused: %s", exc)
            return [exc] * len(msgs)

    def record_intent(self, proposal_id: str, requester: str) -> IntentAck:
        """The intent to act on an executed proposal; the ack comes only after its
        ``action_attempt`` row is fsynced. Raises ``PeerRefused`` / ``RequestFailed``."""
        return self.request(RecordIntent(proposal_id=proposal_id, requester=requester), deadline_s=INTENT_S)

    def record_intents(self, proposal_ids: list[str], requester: str) -> list[Message]:
        """Several intents in one ``record_batch`` (one fsync): an ``IntentAck`` or a
        ``RecorderError`` each. Raises ``PeerRefused`` / ``RequestFailed``."""
        intents = [RecordIntent(proposal_id=pid, requester=requester) for pid in proposal_ids]
        return self.request_batch(intents, deadline_s=INTENT_S)

    def standing_intent(self, requester: str, wait_ms: int) -> StandingIntent:
        """The actuator's standing intent (``protocol.to_recorder.AwaitIntent``) on a socket
        of its own (see ``StandingIntent``)."""
        return StandingIntent(
            connect_dealer(self.zctx, self.endpoint),
            requester,
            wait_ms,
            session=self.session,
            sender=self.sender,
            counters=self.counters,
            endpoint=self.endpoint,
        )

    def record_result(self, msg: RecordResult, *, after_send: Callable[[], object] | None = None) -> Message:
        """Record an attempt's result; a response that cannot travel is recorded without it
        (the outcome is kept, the error says why). Raises ``RequestFailed``. ``after_send``:
        see ``Client.request`` (not called when the result could not be encoded)."""
        try:
            return self.request(msg, deadline_s=RESULT_S, after_send=after_send)
        except NotEncodable as exc:
            return self.request(
                RecordResult(
                    attempt_id=msg.attempt_id,
                    outcome=msg.outcome,
                    http_status=msg.http_status,
                    response=None,
                    error=f"{msg.error or ''} response not recordable: {exc}".strip(),
                    request_ms=msg.request_ms,
                ),
                deadline_s=RESULT_S,
            )

    def record_results(self, msgs: list[RecordResult]) -> list[Message | None]:
        """Several results in one ``record_batch``: each one's reply, or None for every one
        when the batch as a whole failed (record those one by one with ``record_result``)."""
        try:
            return self.request_batch(list(msgs), deadline_s=RESULT_S)
        except RequestFailed:
            return [None] * len(msgs)

    # -- events, the end, the stream ------------------------------------------------------
    def record(self, event: Event, key: str | None = None, *, deadline_s: float = EVENT_S) -> Message:
        """Append a typed event (``RecordEvent.of``; ``key``: idempotency). Raises ``RequestFailed``."""
        return self.request(RecordEvent.of(event, key), deadline_s=deadline_s)

    def record_event(self, event: str, fields: dict, key: str | None = None, *, deadline_s: float = EVENT_S) -> Message:
        """Append an open journal event (``key``: idempotency). Raises ``RequestFailed``."""
        return self.request(RecordEvent(event=event, fields=fields, key=key), deadline_s=deadline_s)

    def finalize(self, reason: str, exit_code: int, *, deadline_s: float = 15.0) -> dict | None:
        """Finalize the session (idempotent); its summary. Raises ``RequestFailed``."""
        reply = self.request(Finalize(reason=reason, exit_code=exit_code), deadline_s=deadline_s, try_s=3.0)
        return getattr(reply, "summary", None)

    def finalize_nowait(self, reason: str, exit_code: int) -> Pending:
        """``finalize`` for a loop that never blocks (the supervisor's): poll the returned
        ``Pending`` for the ``finalized`` reply (its ``summary``); safe to send again."""
        return self.send_nowait(Finalize(reason=reason, exit_code=exit_code))

    def snapshot(self) -> SnapshotReply:
        """Counters as of a sequence (on the read-only stream). Raises ``RequestFailed``."""
        return self.request(Snapshot(), deadline_s=SNAPSHOT_S, try_s=SNAPSHOT_TRY_S)

    def send_nowait(self, body: Message) -> Pending:
        """Send ``body`` on a fresh socket without waiting (the supervisor's loop never
        blocks on the recorder); poll the returned ``Pending`` and close it when done."""
        sock = connect_dealer(self.zctx, self.endpoint)
        msg_id = send_envelope(sock, body, session=self.session, sender=self.sender)
        return Pending(sock, msg_id, self.counters, self.endpoint)

    # -- the wire -------------------------------------------------------------------------
    def request(
        self, body: Message, *, deadline_s: float, try_s: float = 2.0, after_send: Callable[[], object] | None = None
    ) -> Message:
        return self.client.request(
            body, deadline_s=deadline_s, try_s=try_s, should_stop=self.should_stop, after_send=after_send
        )

    def request_batch(
        self,
        bodies: list[Message],
        *,
        deadline_s: float,
        try_s: float = 2.0,
        after_send: Callable[[], object] | None = None,
    ) -> list[Message]:
        """Several requests as one ``record_batch``; their replies in order (a refused item
        comes back as its ``recorder_error``, not raised)."""
        reply = self.request(
            RecordBatch(items=[b.to_item() for b in bodies]), deadline_s=deadline_s, try_s=try_s, after_send=after_send
        )
        if not isinstance(reply, BatchReplies) or len(reply.items) != len(bodies):
            raise PeerRefused("record_batch", "bad_reply", f"unexpected reply {reply.TYPE!r} to a batch")
        try:
            return [from_item(item) for item in reply.items]
        except ProtocolError as exc:
            raise PeerRefused("record_batch", "bad_reply", f"undecodable batch reply: {exc}") from exc

    def close(self) -> None:
        self.client.close()
