"""Access control over tcp: CURVE keys from the profile or per session, unknown clients get
nothing, and no secret (token, CURVE secret key) appears in the capture or any log."""

from __future__ import annotations

import os
import signal

import pytest
import zmq
import zmq.auth

from actors.runtime.transport import Client, Counters, PeerUnavailable
from protocol.cli_to_supervisor import StatusRequest
from tests.attach.helpers import LONG, Attached, InProcess, Recording
from tests.harness import wait_for

pytestmark = pytest.mark.timeout(90)


def _keys(tmp_path):
    server_dir, client_dir, allowed = (tmp_path / d for d in ("server", "client", "allowed"))
    for d in (server_dir, client_dir, allowed):
        d.mkdir()
    _pub, server_secret_file = zmq.auth.create_certificates(str(server_dir), "server")
    client_pub_file, client_secret_file = zmq.auth.create_certificates(str(client_dir), "client")
    os.replace(client_pub_file, allowed / "client.key")
    return server_secret_file, str(allowed), client_secret_file


def _status_with(endpoint: str, server_public: str | None) -> None:
    zctx = zmq.Context()
    if server_public:  # a well-formed CURVE client whose key nobody authorized
        public, secret = zmq.curve_keypair()
        zctx.setsockopt(zmq.CURVE_SERVERKEY, server_public.encode())
        zctx.setsockopt(zmq.CURVE_PUBLICKEY, public)
        zctx.setsockopt(zmq.CURVE_SECRETKEY, secret)
    client = Client(zctx, endpoint, session="x", sender="intruder", counters=Counters())
    try:
        client.request(StatusRequest(token="guess"), deadline_s=1.5, try_s=1.5)
    finally:
        client.close()
        zctx.term()


def _files_under(*roots: str):
    for root in roots:
        for base, _dirs, names in os.walk(root):
            for name in names:
                yield os.path.join(base, name)


def test_tcp_taps_use_curve_and_no_secret_reaches_capture_or_logs(session_factory, tmp_path):
    server_secret_file, allowed, client_secret_file = _keys(tmp_path)
    s = session_factory(
        *LONG,
        "supervisor.tcp.enabled=true",
        f"supervisor.tcp.server_key_file={server_secret_file}",
        f"supervisor.tcp.clients_dir={allowed}",
    )
    wait_for(lambda: len(s.events("action_result")) >= 3, 60, "the session to act")
    rec = s.record()
    tcp = rec["tcp"]
    assert tcp["control"].startswith("tcp://127.0.0.1:") and tcp["stream"].startswith("tcp://")
    server_public, server_secret = zmq.auth.load_certificate(server_secret_file)
    assert tcp["server_public_key"] == server_public.decode()
    # a tap with the profile's authorized client key, and one with the per-session key
    mine = InProcess(s, Recording(), transport="tcp", client_key=client_secret_file)
    jsonl = tmp_path / "tcp.jsonl"
    cli = Attached(s, "metrics-tap", "--tcp", "--interval", "0.3", "--jsonl", str(jsonl))
    wait_for(lambda: len(mine.tap.seqs) > 20 and cli.grep("steps"), 30, "rows over tcp")
    assert mine.runner.stream == tcp["stream"]
    with pytest.raises(PeerUnavailable):  # an unknown client key never completes a handshake
        _status_with(tcp["control"], tcp["server_public_key"])
    with pytest.raises(PeerUnavailable):  # nor does a client without CURVE
        _status_with(tcp["stream"], None)
    assert mine.stop() == "detached"
    tokens = [rec["token"], mine.runner.tap_token]
    cli.proc.send_signal(signal.SIGINT)
    assert cli.wait() == 0, cli.err
    s.signal(signal.SIGTERM)
    assert s.wait() == 143, s.stderr
    assert {r["transport"] for r in s.events("tap_attached")} == {"tcp"}
    secrets = tokens + [
        server_secret.decode(),
        tcp["client_secret_key"],
        zmq.auth.load_certificate(client_secret_file)[1].decode(),
    ]
    texts = {p: open(p, "rb").read().decode("utf-8", "replace") for p in _files_under(s.capture, s.runtime)}
    texts.update(
        stdout=s.stdout, stderr=s.stderr, tap_out="".join(cli.out), tap_err="".join(cli.err), jsonl=jsonl.read_text()
    )
    assert len(texts) > 8 and any(p.endswith("events.jsonl") for p in texts)
    leaks = [(where, secret[:6]) for where, text in texts.items() for secret in secrets if secret in text]
    assert not leaks, leaks
