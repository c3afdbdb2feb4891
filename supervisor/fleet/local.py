"""The local backend: sessions as ``supervisor start`` process trees on this machine.

Each attempt runs in a thread of the fleet (``runner.run_attempt``), which waits on its
supervisor; the supervisor's parent-death signal is SIGTERM, so a driver that dies takes its
sessions down cleanly (each finalizes, reason ``sigterm``). A supervisor killed by a signal
the fleet did not send (the OOM killer, a ``kill -9``) is lost (``scheduler``): its journal
decides, and it runs again once (``LOST_RETRIES``) when no action was in flight. The
default concurrency comes from the CPUs this process may use and the memory
available now (``default_concurrency``); ``--concurrency`` or the fleet file's
``concurrency`` override it. The figures behind the constants are in docs/fleet.md
(``python bench/fleet.py``).
"""

from __future__ import annotations

import concurrent.futures
import os
import signal
import threading

import psutil

from .matrix import SessionPlan
from .runner import run_attempt

#: Sessions per CPU by default: a session mostly waits on its own pipeline (IPC between its
#: processes, the game's replies), so one CPU serves more than one; past this, aggregate
#: steps/s stopped growing on the bench machine (docs/fleet.md).
SESSIONS_PER_CPU = 2
#: Memory one session tree takes (supervisor + 5-6 actors), with headroom: the bench measured
#: a peak of about 270 MiB of summed RSS per session, built-in game or PyBoy (docs/fleet.md).
SESSION_MIB = 512
#: Leave this share of the available memory to everything else.
MEMORY_SHARE = 0.8
#: Runs again of a session whose supervisor was killed from outside, no action in flight.
LOST_RETRIES = 1


def default_concurrency() -> tuple[int, str]:
    """``(n, why)``: sessions at once from CPUs and available memory, at least 1."""
    cpus = len(os.sched_getaffinity(0))
    avail = psutil.virtual_memory().available
    by_cpu = cpus * SESSIONS_PER_CPU
    by_mem = int(avail * MEMORY_SHARE // (SESSION_MIB * 2**20))
    n = max(1, min(by_cpu, by_mem))
    why = (
        f"{n} = min({cpus} CPUs x {SESSIONS_PER_CPU}, {avail / 2**30:.1f} GiB available x "
        f"{MEMORY_SHARE} / {SESSION_MIB} MiB per session = {by_mem})"
    )
    return n, why


class LocalBackend:
    name = "local"

    def __init__(self, workdir: str, concurrency: int, timeout_s: float | None):
        self.root = ""  # the fleet root, set by the driver once it is made
        self.workdir, self.timeout_s = workdir, timeout_s
        self.pool = concurrent.futures.ThreadPoolExecutor(max_workers=concurrency, thread_name_prefix="fleet-session")
        self.futures: set[concurrent.futures.Future] = set()
        self.interrupted = threading.Event()

    def submit(self, plan: SessionPlan, attempt: int) -> concurrent.futures.Future:
        # SIGTERM when this process dies: each supervisor then finalizes its session.
        fut = self.pool.submit(
            run_attempt,
            plan,
            self.root,
            attempt,
            timeout_s=self.timeout_s,
            death_signal=signal.SIGTERM,
            workdir=self.workdir,
            interrupt=self.interrupted,
        )
        self.futures.add(fut)
        return fut

    def poll(self, timeout_s: float) -> list:
        if not self.futures:
            return []
        done, _ = concurrent.futures.wait(
            self.futures, timeout=timeout_s, return_when=concurrent.futures.FIRST_COMPLETED
        )
        out = []
        for fut in done:
            self.futures.discard(fut)
            exc = fut.exception()
            rec = (
                fut.result()
                if exc is None
                else {"exit_code": None, "error": f"runner failed: {exc!r}", "session_ids": []}
            )
            out.append((fut, rec))
        return out

    def settle_s(self, plan: SessionPlan) -> float:
        return 0.0  # judged once none of its processes runs here (FleetRun._still_running)

    def node_retries(self) -> int:
        return LOST_RETRIES

    def interrupt(self) -> None:
        self.interrupted.set()  # each runner SIGTERMs its supervisor; none starts another

    def close(self) -> None:
        self.pool.shutdown(wait=True)
