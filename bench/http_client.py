"""The game client's cost per request: ``python bench/http_client.py [--requests N]``.

Starts the built-in game in a process of its own (``pipeline_baseline.GameServer``: ``python
-m actors.game``, as the in-process baseline starts it) and times, for each
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
import sys
import tempfile
import time

import httpx

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, REPO)
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from pipeline_baseline import GameServer  # noqa: E402

from actors.sts2mcp import IDENTITY_PATH, STATE_PATH, GameClient  # noqa: E402

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
    with tempfile.NamedTemporaryFile(prefix="http-client-game-", suffix=".log", delete=False) as log:
        pass  # (the game's stderr, kept only while it runs)
    game = GameServer(7, {}, None, log.name)
    url = game.url
    try:
        ours = GameClient(url, 5.0)
        theirs = httpx.Client(base_url=url, timeout=5.0, headers={"Accept": "application/json"})
        post = json.dumps({"action": "end_turn"}).encode()  # refused on the menu: nothing changes
        routes = {
            "GET state": (ours.read_state, lambda: httpx_call(theirs, "GET", STATE_PATH, None)),
            "GET compendium": (ours.read_identity, lambda: httpx_call(theirs, "GET", IDENTITY_PATH, None)),
            "POST (refused)": (
                lambda: ours.send_action("end_turn", {}, "bench"),
                lambda: httpx_call(theirs, "POST", STATE_PATH, post),
            ),
        }
        print(f"{'request':16s} {'GameClient cpu / wall':>22s} {'httpx cpu / wall':>18s} {'cpu ratio':>10s}")
        for name, (mine, old) in routes.items():
            a_cpu, a_wall, b_cpu, b_wall = [], [], [], []
            for _ in range(args.requests // ROUND):
                timed(mine, ROUND, a_cpu, a_wall)
                timed(old, ROUND, b_cpu, b_wall)
            med = statistics.median
            print(
                f"{name:16s} {med(a_cpu):9.3f} / {med(a_wall):.3f} ms {med(b_cpu):7.3f} / "
                f"{med(b_wall):.3f} ms {med(b_cpu) / med(a_cpu):9.2f}x"
            )
        ours.close()
        theirs.close()
    finally:
        game.stop()
        os.unlink(log.name)
    return 0


if __name__ == "__main__":
    sys.exit(main())
