"""The game client's cost per request: ``python bench/http_client.py [--requests N]``.

Starts the built-in game (``python -m actors.game``-style, in a process of its own: the
server is ``actors.game.http.start_server``, as the game actor runs it) and times, for each
of the game path's three requests (GET the state, GET the compendium, POST an action the
game refuses, so the state never changes), ``--requests`` calls of:

* ``GameClient`` (``actors/sts2mcp.py``: ``http.client`` on one keep-alive connection), the
  client the observer, the actuator and the in-process baseline use;
* the client it replaced, measured in the same run: an ``httpx.Client`` reading the answer as
  the adapter did until session 7 (``stream``, ``iter_bytes``, then ``json.loads``).

The two alternate in rounds of 100 calls, so drift on a shared machine falls on both. Printed
per request: the median CPU time of the calling thread (``time.thread_time``) and the median
wall time, for each client, and their ratio.

    python bench/http_client.py --requests 3000
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

import httpx

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, REPO)

from actors.sts2mcp import IDENTITY_PATH, STATE_PATH, GameClient  # noqa: E402

SERVE = ("import sys\n"
         "from actors.game.http import start_server\n"
         "game = start_server('127.0.0.1', 0, 7)\n"
         "print(game.url, flush=True)\n"
         "sys.stdin.read()\n")
ROUND = 100


def httpx_call(client: httpx.Client, method: str, path: str, body: bytes | None):
    """One request as the adapter made it with httpx (the answer streamed, then parsed)."""
    with client.stream(method, path, content=body) as resp:
        data = b"".join(resp.iter_bytes())
    return json.loads(data)


def timed(call, n: int, cpu: list[float], wall: list[float]) -> None:
    for _ in range(n):
        c, w = time.thread_time(), time.perf_counter()
        call()
        cpu.append((time.thread_time() - c) * 1000)
        wall.append((time.perf_counter() - w) * 1000)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--requests", type=int, default=2000, help="calls per request and client")
    args = ap.parse_args(argv)
    if args.requests < ROUND:
        ap.error(f"--requests must be at least {ROUND}")
    game = subprocess.Popen([sys.executable, "-c", SERVE], cwd=REPO, stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, text=True, env={**os.environ, "PYTHONPATH": REPO})
    try:
        url = game.stdout.readline().strip()
        if not url.startswith("http://"):
            raise SystemExit("the built-in game did not start")
        ours = GameClient(url, 5.0)
        theirs = httpx.Client(base_url=url, timeout=5.0, headers={"Accept": "application/json"})
        post = json.dumps({"action": "end_turn"}).encode()  # refused on the menu: nothing changes
        routes = {"GET state": (ours.read_state, lambda: httpx_call(theirs, "GET", STATE_PATH, None)),
                  "GET compendium": (ours.read_identity,
                                     lambda: httpx_call(theirs, "GET", IDENTITY_PATH, None)),
                  "POST (refused)": (lambda: ours.send_action("end_turn", {}, "bench"),
                                     lambda: httpx_call(theirs, "POST", STATE_PATH, post))}
        print(f"{'request':16s} {'GameClient cpu / wall':>22s} {'httpx cpu / wall':>18s} {'cpu ratio':>10s}")
        for name, (mine, old) in routes.items():
            a_cpu, a_wall, b_cpu, b_wall = [], [], [], []
            for _ in range(args.requests // ROUND):
                timed(mine, ROUND, a_cpu, a_wall)
                timed(old, ROUND, b_cpu, b_wall)
            med = statistics.median
            print(f"{name:16s} {med(a_cpu):9.3f} / {med(a_wall):.3f} ms {med(b_cpu):7.3f} / "
                  f"{med(b_wall):.3f} ms {med(b_cpu) / med(a_cpu):9.2f}x")
        ours.close()
        theirs.close()
    finally:
        game.stdin.close()
        game.wait(10)
    return 0


if __name__ == "__main__":
    sys.exit(main())
