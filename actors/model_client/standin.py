"""A stand-in model server: ``python -m actors.model_client.standin [--port 8000] [--seed 1]``.

It serves the OpenAI chat-completions API on 127.0.0.1 (``POST /v1/chat/completions``,
``GET /v1/models``) and answers every request with JSON that is valid against the request's
own ``response_format`` schema (``type: json_schema``): an enum's member, an integer within
its bounds, a list of the lengths allowed ... chosen by a random generator seeded with
``--seed`` and the request's bytes, so the same question always gets the same answer. It
knows nothing of the game: its answers are legal, not good. It is for trying the model path
with no GPU and no model (``make model-demo``), not for judging a policy.

``--run CMD ...`` starts the server, runs ``CMD`` with ``{url}`` in its arguments replaced by
the server's base URL (``http://127.0.0.1:PORT/v1``), stops the server when ``CMD`` ends and
exits with its code.

A request without a ``response_format`` schema (``model.structured: off``) gets a 400 that
says so: the stand-in cannot guess an answer's shape from prose. Every answer reports usage
as the characters of the prompt and the answer divided by four.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from .schema import validate

MAX_BODY = 8 << 20
DEFAULT_BOUND = 10


class StandinError(Exception):
    """A request the stand-in cannot answer (its message goes back as a 400)."""


def example(schema: dict, rng: random.Random) -> Any:
    """A value valid against ``schema`` (the subset ``schema.py`` supports)."""
    if "anyOf" in schema:  # one alternative, chosen like any other value
        return example(rng.choice(schema["anyOf"]), rng)
    if "const" in schema:
        return schema["const"]
    if "enum" in schema:
        return rng.choice(schema["enum"])
    types = schema.get("type", "object")
    types = [types] if isinstance(types, str) else list(types)
    kind = next((t for t in types if t != "null"), "null")
    if kind == "object":
        return {k: example(v, rng) for k, v in (schema.get("properties") or {}).items()}
    if kind == "array":
        low = schema.get("minItems", 1)
        n = rng.randint(low, max(low, schema.get("maxItems", low)))
        items = schema.get("items") or {}
        out: list = []
        for _ in range(n * 10):
            if len(out) == n:
                break
            value = example(items, rng)
            if not schema.get("uniqueItems") or value not in out:
                out.append(value)
        return out
    if kind == "integer":
        low = int(schema.get("minimum", 0))
        return rng.randint(low, int(schema.get("maximum", low + DEFAULT_BOUND)))
    if kind == "number":
        low = float(schema.get("minimum", 0.0))
        return round(rng.uniform(low, float(schema.get("maximum", low + 1.0))), 3)
    if kind == "boolean":
        return rng.random() < 0.5
    if kind == "string":
        text = "stand-in answer"
        text = text[: schema["maxLength"]] if "maxLength" in schema else text
        return text + "x" * max(0, schema.get("minLength", 0) - len(text))
    return None


def answer(body: Any, seed: int) -> dict:
    """The chat-completion reply to one request body (raises ``StandinError``)."""
    if not isinstance(body, dict):
        raise StandinError("the request body must be a JSON object")
    fmt = body.get("response_format")
    schema = (fmt or {}).get("json_schema", {}).get("schema") if isinstance(fmt, dict) else None
    if not isinstance(schema, dict):
        raise StandinError(
            "the stand-in answers only requests with response_format "
            "{type: json_schema, json_schema: {schema}}; set model.structured to auto or json_schema"
        )
    digest = hashlib.sha256(json.dumps(body, sort_keys=True).encode()).hexdigest()
    rng = random.Random(f"{seed}:{digest}")
    value = example(schema, rng)
    problems = validate(value, schema)
    if problems:  # a schema keyword the generator does not honour: say so rather than lie
        raise StandinError(f"cannot build a valid answer for this schema: {problems[0]}")
    content = json.dumps(value)
    prompt = sum(len(json.dumps(m.get("content"))) for m in body.get("messages") or [] if isinstance(m, dict))
    usage = {"prompt_tokens": prompt // 4, "completion_tokens": len(content) // 4 + 1}
    usage["total_tokens"] = usage["prompt_tokens"] + usage["completion_tokens"]
    return {
        "id": f"chatcmpl-standin-{digest[:12]}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": str(body.get("model") or "standin"),
        "choices": [
            {"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": content, "refusal": None}}
        ],
        "usage": usage,
    }


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "gamerig-standin"
    #: headers and body go out as two writes; with Nagle's algorithm on, the body waits for
    #: the client's delayed ACK of the headers (~40 ms on every keep-alive request)
    disable_nagle_algorithm = True

    def log_message(self, fmt, *args):
        pass

    def _send(self, status: int, data: dict) -> None:
        raw = json.dumps(data).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(raw)))
        self.end_headers()
        self.wfile.write(raw)

    def do_GET(self):
        if self.path.rstrip("/").endswith("/models"):
            self._send(200, {"object": "list", "data": [{"id": "standin", "object": "model", "owned_by": "gamerig"}]})
        else:
            self._send(404, {"error": {"message": f"no such path {self.path}", "type": "not_found"}})

    def do_POST(self):
        if not self.path.rstrip("/").endswith("/chat/completions"):
            self._send(404, {"error": {"message": f"no such path {self.path}", "type": "not_found"}})
            return
        length = int(self.headers.get("Content-Length") or 0)
        if length > MAX_BODY:
            self._send(413, {"error": {"message": f"request larger than {MAX_BODY} bytes", "type": "invalid_request"}})
            return
        try:
            body = json.loads(self.rfile.read(length) or b"null")
            self._send(200, answer(body, self.server.seed))
        except (ValueError, StandinError) as exc:
            self._send(400, {"error": {"message": str(exc), "type": "invalid_request_error"}})


class StandinServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, port: int = 8000, seed: int = 1, host: str = "127.0.0.1"):
        super().__init__((host, port), Handler)
        self.seed = seed

    @property
    def base_url(self) -> str:
        return f"http://{self.server_address[0]}:{self.server_address[1]}/v1"


def add_arguments(ap: argparse.ArgumentParser) -> None:
    """The options (``supervisor standin`` takes the same)."""
    ap.add_argument("--port", type=int, default=8000, help="port on 127.0.0.1 (default 8000; 0: a free one)")
    ap.add_argument("--seed", type=int, default=1, help="the answers' seed (default 1)")
    ap.add_argument(
        "--run",
        nargs=argparse.REMAINDER,
        metavar="CMD",
        help="run CMD ({url} becomes the base URL), then stop; exit with its code",
    )


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m actors.model_client.standin", description=__doc__.splitlines()[0])
    add_arguments(ap)
    return serve(ap.parse_args(argv))


def serve(args: argparse.Namespace) -> int:
    """Serve until Ctrl-C, or while ``args.run`` runs; the exit code."""
    try:
        server = StandinServer(args.port, args.seed)
    except OSError as exc:
        print(f"error: cannot listen on 127.0.0.1:{args.port}: {exc.strerror or exc}", file=sys.stderr)
        return 2
    print(
        f"stand-in model server: {server.base_url} (seed {args.seed}; legal answers, not good ones)",
        file=sys.stderr,
        flush=True,
    )
    if not args.run:
        try:
            server.serve_forever()
        except KeyboardInterrupt:
            pass
        finally:
            server.server_close()
        return 0
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        return subprocess.call([a.replace("{url}", server.base_url) for a in args.run])
    finally:
        server.shutdown()
        server.server_close()


if __name__ == "__main__":
    raise SystemExit(main())
