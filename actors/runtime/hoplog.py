"""``GAMERIG_HOPLOG=DIR``: time every frame this process encodes or decodes (bench/ only).

``install(name)`` wraps ``protocol.encode`` and ``protocol.decode`` (every sender and
receiver calls them through the package, ``actors.runtime.transport``) and appends one line
per frame to ``DIR/<name>-<pid>.hops``::

    S <type> <message id> <wrapped_at> <encoded_at> <bytes>
    R <type> <message id> <wrapped_at> <received_at> <decoded_at>

``wrapped_at`` is the envelope's ``sent_at`` (stamped when the message was wrapped);
``received_at`` is taken just before the bytes are decoded, ``decoded_at`` just after. The
built-in game (``actors/game/http.py``) logs its own handling of each request to
``DIR/game-http-<pid>.hops`` the same way: ``H <method> <path> <began> <answered>``; and the
game's HTTP client (``actors/sts2mcp.py``) each request's CPU time on its thread and its wall
time, to ``DIR/http-client-<pid>.hops``: ``C <method> <path> <cpu ms> <wall ms>``. All are
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


def open_log(name: str, *, buffered: bool = True):
    """``DIR/<name>-<pid>.hops`` opened for appending (binary: safe to share between
    threads) when ``GAMERIG_HOPLOG`` names a directory, else None. ``close`` closes it; an
    unbuffered log needs no closing (for a process that may end without calling it)."""
    folder = os.environ.get(ENV)
    if not folder:
        return None
    out = open(os.path.join(folder, f"{name}-{os.getpid()}.hops"), "ab", buffering=(1 << 16) if buffered else 0)
    _open.append(out)
    return out


def install(name: str) -> bool:
    """Wrap the codec if ``GAMERIG_HOPLOG`` names a directory; True if it did."""
    out = open_log(name)
    if out is None:
        return False
    encode, decode = protocol.encode, protocol.decode

    def timed_encode(env):
        data = encode(env)
        write(out, f"S {env.type} {env.id} {env.sent_at:.6f} {time.time():.6f} {len(data)}\n")
        return data

    def timed_decode(data):
        received = time.time()
        env = decode(data)
        write(out, f"R {env.type} {env.id} {env.sent_at:.6f} {received:.6f} {time.time():.6f}\n")
        return env

    protocol.encode, protocol.decode = timed_encode, timed_decode
    return True


def close() -> None:
    """Write out and close the log (``run_actor`` calls it before ``os._exit``, which skips
    ``atexit``); nothing when not installed."""
    while _open:
        _open.pop().close()


def write(out, line: str) -> None:
    """One line; nothing once the log is closed (a thread still sending as the process
    ends must not fail for a bench's log)."""
    try:
        out.write(line.encode())
    except ValueError:  # closed
        pass
