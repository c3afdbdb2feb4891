"""``python -m actors.model_client``: the model-client actor.

It binds the ``model`` endpoint (ROUTER) and answers each ``AskModel`` with the protocol's
``ModelAnswer(answers, evidence)`` or ``ModelFailure(error=<model_error record>)``:

* ``model.base_url`` set — one ``ModelClient`` for the session (its ``stop_event`` is the
  actor's stop), up to ``model.max_concurrent`` asks answered at once on a thread pool;
* ``model.replay`` set — a ``ReplayBackend`` over that capture instead (no calls at all);
* neither — every ask is answered at once with ``no_model_configured``.

The socket is only touched by this loop; pool threads hand their replies back through
``ModelService.finished``. So a slow answer blocks neither other asks nor the stop: on stop
the backend is closed (calls in flight end as ``cancelled``) and the loop returns without
waiting for them. The heartbeat status carries the usage totals (``model_*`` counters).

A reply finished after the asker's deadline (``AskModel.deadline_ms`` from its ``sent_at``)
is sent all the same, and recorded by this actor as a ``model_late_answer`` row (keyed by
the ask's id), so the tokens it spent are in the journal although no proposal uses it.
"""

from __future__ import annotations

import dataclasses
import logging

import zmq

from actors.runtime.actor import ActorContext, run_actor
from actors.runtime.transport import RequestFailed, decode_or_count, send_envelope
from protocol import events as ev
from protocol.policy_to_model import AskModel

from .backends import open_backend
from .errors import ConfigError
from .service import ModelService
from .settings import ModelSettings

log = logging.getLogger("model_client")
_POLL_MS = 200  # a request or a finished answer wakes the loop at once; this bounds seeing the stop


def open_service(ctx: ActorContext) -> ModelService:
    """The service for this session's ``model:`` section; a broken one answers ``config``."""
    try:
        settings = ModelSettings.from_profile(ctx.setting("model") or {})
        if not settings.configured:
            return ModelService(None)
        backend = open_backend(settings, ctx.stopping)
    except (ConfigError, OSError) as exc:
        log.error("model backend unavailable: %s", exc)
        return ModelService(None, failure={"kind": "config", "message": str(exc), "request": None, "attempts": 0})
    log.info("answering with the %s backend (%d at once)", settings.backend_name, settings.max_concurrent)
    return ModelService(backend, workers=settings.max_concurrent)


def main(ctx: ActorContext) -> int:
    service = open_service(ctx)
    sock = ctx.zctx.socket(zmq.ROUTER)
    sock.setsockopt(zmq.LINGER, 0)
    sock.bind(ctx.endpoints["model"])
    poller = zmq.Poller()
    poller.register(sock, zmq.POLLIN)
    poller.register(service.wake_fd, zmq.POLLIN)
    routes: dict[str, list[bytes]] = {}
    recorder = ctx.recorder()
    try:
        while not ctx.stopping.is_set():
            for request_id, reply in service.finished():
                routing = routes.pop(request_id, None)
                if routing is not None:
                    send_envelope(
                        sock,
                        dataclasses.replace(reply, reply_to=request_id),
                        session=ctx.session_id,
                        sender=ctx.name,
                        routing=routing,
                    )
                _report(ctx, service)
            for fields in service.late_outcomes():
                _record_late(ctx, recorder, fields)
            if sock not in dict(poller.poll(_POLL_MS)):
                continue
            frames = sock.recv_multipart()
            env = decode_or_count(frames[-1], ctx.counters, "model")
            if env is None or not isinstance(env.body, AskModel):
                continue
            routes[env.id] = frames[:-1]
            service.submit(env.id, env.body, sent_at=env.sent_at)
    finally:
        service.close()
        sock.close(0)
        recorder.close()
    return 0


def _record_late(ctx: ActorContext, recorder, fields: dict) -> None:
    """Journal a reply the policy no longer waited for (its tokens were spent all the same)."""
    log.info(
        "late model %s for ask %s (%.0f ms past the deadline)",
        fields["outcome"],
        fields["ask_id"],
        fields["late_by_ms"],
    )
    try:
        recorder.record(ev.ModelLateAnswer.from_fields(fields), f"model_late_answer-{fields['ask_id']}")
    except RequestFailed as exc:
        log.error("model_late_answer not recorded: %s", exc)


def _report(ctx: ActorContext, service: ModelService) -> None:
    usage = service.usage()
    ctx.status.update(
        model_asked=service.asked,
        model_late=service.late,
        model_answered=usage.get("answered", 0),
        model_errors=sum((usage.get("errors") or {}).values()),
        model_total_tokens=usage.get("total_tokens", 0),
    )


if __name__ == "__main__":
    run_actor("model_client", main)
