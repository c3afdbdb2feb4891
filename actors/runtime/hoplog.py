"""``GAMERIG_HOPLOG=DIR``: time every frame this process encodes or decodes (bench/ only).

``install(name)`` wraps ``protocol.encode`` and ``protocol.decode`` (every sender and
receiver calls them through the package, ``actors.runtime.transport``) and appends one line
per frame to ``DIR/<name>-<pid>.hops``::

    S <type> <message id> <wrapped_at> <encoded_at> <bytes>
    R <type> <message id> <wrapped_at> <received_at> <decoded_at>

``wrapped_at`` is the envelope's ``sent_at`` (stamped when the message was wrapped);
``received_at`` is taken just before the bytes are decoded, ``decoded_at`` just after. All are
``time.time()``, so lines from different processes compare. Lines are buffered and written
out by ``close()`` (and whenever the buffer fills). ``bench/step_timeline.py`` reads
them beside the journal. Without the variable nothing is wrapped and nothing is written.
"""
from __future__ import annotations

import os
import time

import protocol

ENV = "GAMERIG_HOPLOG"
_open: list = []  # the log file while installed (``close`` writes out what is buffered)


def install(name: str) -> bool:
    """Wrap the codec if ``GAMERIG_HOPLOG`` names a directory; True if it did."""
    folder = os.environ.get(ENV)
    if not folder:
        return False
    out = open(os.path.join(folder, f"{name}-{os.getpid()}.hops"), "ab", buffering=1 << 16)  # (binary: thread-safe)
    _open.append(out)
    encode, decode = protocol.encode, protocol.decode

    def timed_encode(env):
        data = encode(env)
        out.write(f"S {env.type} {env.id} {env.sent_at:.6f} {time.time():.6f} {len(data)}\n".encode())
        return data

    def timed_decode(data):
        received = time.time()
        env = decode(data)
        out.write(f"R {env.type} {env.id} {env.sent_at:.6f} {received:.6f} {time.time():.6f}\n".encode())
        return env

    protocol.encode, protocol.decode = timed_encode, timed_decode
    return True


def close() -> None:
    """Write out and close the log (``run_actor`` calls it before ``os._exit``, which skips
    ``atexit``); nothing when not installed."""
    while _open:
        _open.pop().close()
