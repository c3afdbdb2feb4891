"""The request client never blocks on a send: a DEALER whose peer failed a handshake (a CURVE
server meeting a client without its key, ``supervisor/tcp.py``) loses its pipe after a while
(libzmq terminates the session on a protocol error), and a plain ``send`` then waits for ever.
Real sockets on loopback; the whole path is ``tests/attach/test_access.py``'s refused clients."""

from __future__ import annotations

import time

import pytest
import zmq

from actors.runtime.transport import Client

pytestmark = pytest.mark.timeout(60)


def test_a_send_with_no_pipe_gives_up_after_its_wait_and_a_send_with_one_queues():
    zctx = zmq.Context()
    try:
        lonely = zctx.socket(zmq.DEALER)  # IMMEDIATE: no pipe until a connection completes
        lonely.setsockopt(zmq.IMMEDIATE, 1)
        lonely.setsockopt(zmq.LINGER, 0)
        lonely.connect("tcp://127.0.0.1:9")  # nobody listens on the discard port here
        began = time.monotonic()
        assert Client._send_within(lonely, b"x", 0.3) is False
        assert 0.25 <= time.monotonic() - began < 2.0
        server = zctx.socket(zmq.ROUTER)
        port = server.bind_to_random_port("tcp://127.0.0.1")
        ok = zctx.socket(zmq.DEALER)
        ok.setsockopt(zmq.LINGER, 0)
        ok.connect(f"tcp://127.0.0.1:{port}")
        assert Client._send_within(ok, b"hello", 0.3) is True
        assert server.poll(5000) and server.recv_multipart()[-1] == b"hello"
        for s in (lonely, ok, server):
            s.close(0)
    finally:
        zctx.term()
