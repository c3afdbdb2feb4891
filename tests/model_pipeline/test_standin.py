"""The stand-in model server (``actors.model_client.standin``): schema-valid, seeded answers
over real HTTP, and a real model-demo session driven by it (``make model-demo``'s command)."""

from __future__ import annotations

import http.client
import json
import os
import socket
import subprocess
import sys
import threading
import urllib.error
import urllib.request

from actors.model_client.answers import envelope_schema
from actors.model_client.config import ModelConfig
from actors.model_client.questions import build_questions
from actors.model_client.schema import validate
from actors.model_client.standin import StandinServer
from actors.model_client.wire import build_body
from tests.harness import REPO

CARDS = [{"index": 0, "name": "Strike"}, {"index": 1, "name": "Bash"}, {"index": 2, "name": "Defend"}]


def post(url: str, body: dict) -> tuple[int, dict]:
    req = urllib.request.Request(
        url + "/chat/completions", data=json.dumps(body).encode(), headers={"Content-Type": "application/json"}
    )
    try:
        with urllib.request.urlopen(req, timeout=10) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())


def test_answers_are_valid_against_the_requests_schema_and_seeded():
    server = StandinServer(0, seed=7)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        questions = build_questions("card_reward", [{"cards": CARDS, "can_skip": True}])
        schema = envelope_schema(questions)  # what the model client sends (wire.build_body)
        body = build_body(ModelConfig(base_url=server.base_url, model="m"), questions, schema, True)
        status, reply = post(server.base_url, body)
        assert status == 200
        content = json.loads(reply["choices"][0]["message"]["content"])
        assert validate(content, schema) == []
        assert content["q0"]["card_index"] in (0, 1, 2, None) and 0 <= content["q0"]["confidence"] <= 1
        assert post(server.base_url, body)[1]["choices"] == reply["choices"]  # same question, same answer
        other = StandinServer(0, seed=8)
        threading.Thread(target=other.serve_forever, daemon=True).start()
        answers = {
            json.dumps(
                post(s.base_url, {**body, "messages": body["messages"] + [{"role": "user", "content": str(i)}]})[1][
                    "choices"
                ]
            )
            for i in range(6)
            for s in (server, other)
        }
        assert len(answers) > 1  # seeds and questions vary it
        other.shutdown()
        status, reply = post(server.base_url, {k: v for k, v in body.items() if k != "response_format"})
        assert status == 400 and "response_format" in reply["error"]["message"]
    finally:
        server.shutdown()


def test_replies_go_out_without_waiting_for_the_clients_ack():
    """Headers and body are two writes: with Nagle's algorithm the body waits for the client's
    delayed ACK of the headers, ~40 ms on every keep-alive request (bench/agent.py saw a
    stand-in answer take 44 ms where it serves in under 1 ms). The connection sets NODELAY."""
    server = StandinServer(0)
    accepted = []
    get_request = server.get_request
    server.get_request = lambda: accepted.append(get_request()) or accepted[-1]
    threading.Thread(target=server.serve_forever, daemon=True).start()
    conn = http.client.HTTPConnection(*server.server_address, timeout=10)
    try:
        conn.request("GET", "/v1/models")
        assert conn.getresponse().read()
        [(sock, _)] = accepted  # still open: the connection is kept alive
        assert sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY) != 0
    finally:
        conn.close()
        server.shutdown()


def test_make_model_demos_command_plays_with_model_answers(tmp_path):
    capture = tmp_path / "capture"
    r = subprocess.run(
        [
            sys.executable,
            "-m",
            "actors.model_client.standin",
            "--port",
            "0",
            "--run",
            sys.executable,
            "-m",
            "supervisor",
            "start",
            os.path.join(REPO, "run/profiles/model-demo.yaml"),
            "--set",
            "model.base_url={url}",
            "--set",
            f"capture.root={capture}",
            "--set",
            f"supervisor.runtime_dir={tmp_path / 'rt'}",
            "--set",
            "supervisor.progress=off",
        ],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert r.returncode == 0, r.stderr[-2000:]
    session = capture / "sessions" / os.listdir(capture / "sessions")[0]
    rows = [json.loads(line) for line in open(session / "events.jsonl", "rb")]
    sources = {row.get("source") for row in rows if row["event"] == "proposal"}
    assert "model" in sources and not [row for row in rows if row["event"] == "model_error"]
    assert "model 0 answers" not in r.stderr and "errors" in r.stderr
