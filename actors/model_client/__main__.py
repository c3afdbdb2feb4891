"""``python -m actors.model_client``: the model-client actor.

Until a model is configured (``model.base_url``), it answers every question with the error
``no_model_configured``; policies then fall back to their heuristics.
"""
from __future__ import annotations

import zmq

from actors.runtime import ActorContext, run_actor
from actors.transport import decode_or_count, send_envelope
from protocol.policy_to_model import AskModel
from protocol.model_to_policy import ModelFailure


def main(ctx: ActorContext) -> int:
    sock = ctx.zctx.socket(zmq.ROUTER)
    sock.setsockopt(zmq.LINGER, 0)
    sock.bind(ctx.endpoints["model"])
    try:
        while not ctx.stopping.is_set():
            if not sock.poll(200):
                continue
            frames = sock.recv_multipart()
            env = decode_or_count(frames[-1], ctx.counters, "model")
            if env is None or not isinstance(env.body, AskModel):
                continue
            send_envelope(sock, ModelFailure(reply_to=env.id, error={
                "kind": "no_model_configured",
                "message": "no model is configured (set model.base_url and model.model)"}),
                session=ctx.session_id, sender=ctx.name, routing=frames[:-1])
    finally:
        sock.close(0)
    return 0


if __name__ == "__main__":
    run_actor("model_client", main)
