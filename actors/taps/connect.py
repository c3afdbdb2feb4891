"""How a tap reaches a session: its runtime record, and sockets for ipc or tcp+CURVE.

The runtime record (``<runtime_dir>/<session>.json``, mode 0600) names the control endpoint
and the session token; with ``supervisor.tcp.enabled`` it also has a ``tcp`` block with the
tcp endpoints, the server's public key and a per-session client key pair. For ``tcp`` the
tap's context gets CURVE client keys as socket defaults, so every socket it opens (control
requests, the stream follower) is encrypted and authenticated.
"""

from __future__ import annotations

import dataclasses
import json

import zmq
import zmq.auth


class AttachError(Exception):
    """A session that cannot be attached to (no record, no tcp endpoints, bad key file)."""


@dataclasses.dataclass(frozen=True)
class Access:
    session_id: str
    control: str
    token: str = dataclasses.field(repr=False)
    transport: str = "ipc"
    curve: dict | None = dataclasses.field(default=None, repr=False)

    def context(self) -> zmq.Context:
        """A fresh context; for tcp its sockets default to CURVE client keys."""
        zctx = zmq.Context()
        if self.curve:
            zctx.setsockopt(zmq.CURVE_SERVERKEY, self.curve["server_public_key"].encode())
            zctx.setsockopt(zmq.CURVE_PUBLICKEY, self.curve["client_public_key"].encode())
            zctx.setsockopt(zmq.CURVE_SECRETKEY, self.curve["client_secret_key"].encode())
        return zctx


def read_record(path: str) -> dict:
    try:
        with open(path, encoding="utf-8") as fh:
            return json.load(fh)
    except (OSError, ValueError) as exc:
        raise AttachError(f"cannot read the runtime record {path}: {exc}") from None


def access_from_record(rec: dict, transport: str = "ipc", client_key_file: str | None = None) -> Access:
    if transport == "ipc":
        return Access(session_id=rec["session_id"], control=rec["control"], token=rec["token"])
    tcp = rec.get("tcp")
    if not tcp:
        raise AttachError(
            f"session {rec['session_id']} has no tcp endpoints (start it with --set supervisor.tcp.enabled=true)"
        )
    curve = {k: tcp[k] for k in ("server_public_key", "client_public_key", "client_secret_key") if k in tcp}
    if client_key_file:
        public, secret = zmq.auth.load_certificate(client_key_file)
        if secret is None:
            raise AttachError(f"{client_key_file} holds no secret key")
        curve.update(client_public_key=public.decode(), client_secret_key=secret.decode())
    if set(curve) != {"server_public_key", "client_public_key", "client_secret_key"}:
        raise AttachError("the record's tcp block lacks CURVE keys; pass --client-key")
    return Access(
        session_id=rec["session_id"], control=tcp["control"], token=rec["token"], transport="tcp", curve=curve
    )
