"""Which systems gamerig runs on, checked before a session starts (docs/platforms.md).

gamerig needs a POSIX system: its actors talk over ZeroMQ ``ipc://`` endpoints (Unix domain
sockets), lock files with ``fcntl``, and start and signal process groups. Linux is what it is
built and tested on; macOS has all of it (and ``actors.runtime.durable`` uses its
``F_FULLFSYNC``) but is not tested; Windows has none of it natively, so a Windows player runs
gamerig under WSL2 and reaches the game on the Windows side (docs/platforms.md).
"""

from __future__ import annotations

import os
import platform
import sys

import zmq

try:
    import fcntl  # noqa: F401  (only its presence is checked)

    HAS_FCNTL = True
except ImportError:
    HAS_FCNTL = False

SUPPORTED = ("Linux", "Darwin")


class PlatformUnsupported(Exception):
    pass


def problems(
    system: str | None = None,
    posix: bool | None = None,
    has_fcntl: bool | None = None,
    zmq_ipc: bool | None = None,
    python: tuple[int, int] | None = None,
) -> list[str]:
    """What this system lacks (empty: it can run a session). Arguments stand for the real
    values, for tests."""
    system = platform.system() if system is None else system
    posix = (os.name == "posix") if posix is None else posix
    has_fcntl = HAS_FCNTL if has_fcntl is None else has_fcntl
    zmq_ipc = zmq.has("ipc") if zmq_ipc is None else zmq_ipc
    python = tuple(sys.version_info[:2]) if python is None else python
    out = []
    if not posix:
        out.append(f"a POSIX system ({system} is not one: run gamerig under WSL2, docs/platforms.md)")
    if not zmq_ipc:
        out.append("ZeroMQ ipc:// endpoints (Unix domain sockets), which the actors talk over")
    if not has_fcntl:
        out.append("fcntl (file locks and durable writes)")
    if python < (3, 11):
        out.append(f"Python 3.11 or newer (this is {python[0]}.{python[1]})")
    return out


def require_supported() -> None:
    """Raise ``PlatformUnsupported`` naming what is missing."""
    missing = problems()
    if missing:
        raise PlatformUnsupported(
            f"gamerig cannot run a session on {platform.system()} {platform.release()}: it needs {'; '.join(missing)}"
        )


def note() -> str | None:
    """A one-line warning for a system that has what is needed but is not tested (macOS)."""
    if platform.system() not in ("Linux",) and not problems():
        return (
            f"note: gamerig is built and tested on Linux; {platform.system()} has what it needs but is "
            "not tested (docs/platforms.md)"
        )
    return None
