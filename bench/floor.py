"""The machine's floors under the step: ``python bench/floor.py [--n N] [--dir PATH]``.

Two figures the game path's analysis (docs/performance.md) leans on, measured here and now:

* a ZeroMQ round trip between two processes on this machine: a DEALER in this process, a
  ROUTER echoing in a child process, over ``ipc://`` (plain pyzmq, no codec: the floor under
  every recorder request); the peer goes idle between requests, as between steps;
* an ``fsync`` of a file on the capture disk after a 300-byte append (a journal row), in
  ``--dir`` (default: a temporary directory on the same filesystem as ``/tmp``).

Each is printed as p50 / p90 / p99 over ``--n`` samples.
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import tempfile
import time

import zmq


def _echo(endpoint: str) -> None:
    ctx = zmq.Context()
    sock = ctx.socket(zmq.ROUTER)
    sock.bind(endpoint)
    while True:
        frames = sock.recv_multipart()
        if frames[-1] == b"stop":
            break
        sock.send_multipart(frames)
    sock.close(0)
    ctx.term()


def zmq_round_trips(n: int) -> list[float]:
    with tempfile.TemporaryDirectory(prefix="floor-") as tmp:
        endpoint = f"ipc://{tmp}/echo.sock"
        peer = multiprocessing.get_context("spawn").Process(target=_echo, args=(endpoint,))
        peer.start()
        ctx = zmq.Context()
        sock = ctx.socket(zmq.DEALER)
        sock.setsockopt(zmq.LINGER, 0)
        sock.connect(endpoint)
        sock.send(b"warm-up")
        if not sock.poll(10_000):
            raise RuntimeError("the echo process did not answer within 10 s")
        sock.recv()
        out = []
        for i in range(n):
            start = time.perf_counter()
            sock.send(b"x" * 200)
            sock.poll(5_000)
            sock.recv()
            out.append((time.perf_counter() - start) * 1e6)
            if i % 3 == 0:
                time.sleep(0.002)  # let the peer go idle, as between steps
        sock.send(b"stop")
        peer.join(10)
        sock.close(0)
        ctx.term()
    return out


def fsyncs(n: int, where: str) -> list[float]:
    fd, path = tempfile.mkstemp(prefix="floor-fsync-", dir=where)
    out = []
    try:
        for _ in range(n):
            os.write(fd, b"x" * 299 + b"\n")
            start = time.perf_counter()
            os.fsync(fd)
            out.append((time.perf_counter() - start) * 1e6)
            time.sleep(0.002)
    finally:
        os.close(fd)
        os.unlink(path)
    return out


def line(name: str, values: list[float]) -> str:
    v = sorted(values)
    at = lambda q: v[min(len(v) - 1, int(q * len(v)))]  # noqa: E731
    return f"{name}: p50 {at(0.5):.0f} us, p90 {at(0.9):.0f} us, p99 {at(0.99):.0f} us ({len(v)} samples)"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=3000)
    ap.add_argument("--dir", default=tempfile.gettempdir(), help="where the fsynced file lives")
    args = ap.parse_args(argv)
    print(line("ZeroMQ round trip, ipc://, two processes", zmq_round_trips(args.n)))
    print(line(f"fsync after a 300-byte append, in {args.dir}", fsyncs(min(args.n, 1000), args.dir)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
