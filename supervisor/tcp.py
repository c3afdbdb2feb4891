"""Optional tcp:// endpoints for a session, secured with ZeroMQ CURVE (``supervisor.tcp``).

By default a session has only ``ipc://`` endpoints inside its 0700 socket directory, so only
the user who started it can connect. When the profile sets ``supervisor.tcp.enabled``, the
supervisor also runs a ``TcpGateway``: for the control and the stream endpoint, a ROUTER bound
on ``tcp://host:port`` as a CURVE server, bridged frame for frame to the ipc endpoint (so the
supervisor's and the recorder's handlers, and their read-only rules, are the same for both).

Keys:

* the server key pair is generated per session (``zmq.curve_keypair()``), or read from the
  ZeroMQ secret certificate named by ``server_key_file``;
* the clients allowed are a key pair generated per session (its secret is published only in
  the 0600 runtime record, for ``supervisor attach --tcp``) plus every public certificate in
  ``clients_dir`` (files written by ``zmq.auth.create_certificates``). A ZAP handler refuses
  any other client key: its connection never completes a handshake.

Secrets never enter the profile, the journal or a log: the profile only names files, and
``record()`` is what goes into the 0600 runtime record.
"""

from __future__ import annotations

import glob
import logging
import os
import threading

import zmq
import zmq.auth
from zmq.auth.thread import ThreadAuthenticator

from actors.runtime.transport import connect_dealer

log = logging.getLogger("gamerig.tcp")
BRIDGED = ("control", "stream")


class AllowedKeys:
    """ZAP credentials provider: a fixed set of z85 client public keys."""

    def __init__(self, keys: set[bytes]):
        self.keys = keys

    def callback(self, domain: str, key: bytes) -> bool:
        return key in self.keys


def load_client_keys(clients_dir: str | None) -> set[bytes]:
    keys: set[bytes] = set()
    for path in sorted(glob.glob(os.path.join(clients_dir, "*.key"))) if clients_dir else ():
        public, _secret = zmq.auth.load_certificate(path)
        keys.add(public)
    return keys


class TcpGateway:
    """ROUTER(tcp, CURVE server) <-> DEALER(ipc) bridges for the control and stream endpoints,
    on one thread with its own context. ``start()`` binds; ``close()`` stops and joins."""

    def __init__(self, settings: dict, endpoints: dict[str, str]):
        self.settings, self.ipc = settings, endpoints
        if settings.get("server_key_file"):
            self.server_public, self.server_secret = zmq.auth.load_certificate(settings["server_key_file"])
            if self.server_secret is None:
                raise ValueError(f"{settings['server_key_file']} holds no secret key")
        else:
            self.server_public, self.server_secret = zmq.curve_keypair()
        self.client_public, self.client_secret = zmq.curve_keypair()
        self.allowed = {self.client_public} | load_client_keys(settings.get("clients_dir"))
        self.endpoints: dict[str, str] = {}
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.zctx = zmq.Context()
        self.auth = ThreadAuthenticator(self.zctx, log=logging.getLogger("gamerig.tcp.zap"))
        self._pairs: list[tuple[zmq.Socket, zmq.Socket]] = []

    def start(self) -> TcpGateway:
        self.auth.start()
        self.auth.configure_curve_callback("*", AllowedKeys(self.allowed))
        host = self.settings.get("host") or "127.0.0.1"
        for name in BRIDGED:
            front = self.zctx.socket(zmq.ROUTER)
            front.setsockopt(zmq.LINGER, 0)
            front.curve_server = True
            front.curve_secretkey = self.server_secret
            front.curve_publickey = self.server_public
            port = int(self.settings.get(f"{name}_port") or 0)
            if port:
                front.bind(f"tcp://{host}:{port}")
            else:
                port = front.bind_to_random_port(f"tcp://{host}")
            back = connect_dealer(self.zctx, self.ipc[name])
            self._pairs.append((front, back))
            self.endpoints[name] = f"tcp://{host}:{port}"
        self._thread = threading.Thread(target=self._run, name="tcp-gateway", daemon=True)
        self._thread.start()
        return self

    def _run(self) -> None:
        poller = zmq.Poller()
        peer = {}
        for front, back in self._pairs:
            poller.register(front, zmq.POLLIN)
            poller.register(back, zmq.POLLIN)
            peer[front], peer[back] = back, front
        while not self._stop.is_set():
            for sock, _ in poller.poll(100):
                frames = sock.recv_multipart()
                try:  # never block: a peer that stops reading loses frames, nobody waits
                    peer[sock].send_multipart(frames, zmq.NOBLOCK)
                except zmq.Again:
                    log.warning("tcp gateway dropped a frame (peer not reading)")
        for front, back in self._pairs:
            front.close(0)
            back.close(0)

    def record(self) -> dict:
        """What the 0600 runtime record tells local attachers (z85 text keys)."""
        return {
            "control": self.endpoints["control"],
            "stream": self.endpoints["stream"],
            "server_public_key": self.server_public.decode(),
            "client_public_key": self.client_public.decode(),
            "client_secret_key": self.client_secret.decode(),
        }

    def close(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(2)
        self.auth.stop()
        self.zctx.term()


def start_gateway(settings: dict, endpoints: dict[str, str]) -> TcpGateway | None:
    """The gateway if the profile enabled tcp, else None (the usual case)."""
    return TcpGateway(settings, endpoints).start() if settings.get("enabled") else None


def tap_streams(endpoints: dict[str, str], gateway: TcpGateway | None) -> dict[str, str]:
    """The stream endpoint a tap gets, by the transport it attached over."""
    return {"ipc": endpoints["stream"], **({"tcp": gateway.endpoints["stream"]} if gateway else {})}


def record_fields(gateway: TcpGateway | None) -> dict:
    """The runtime record's ``tcp`` block (only when tcp is enabled)."""
    return {"tcp": gateway.record()} if gateway else {}
