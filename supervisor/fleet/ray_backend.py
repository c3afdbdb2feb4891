"""The Ray backend: each session attempt is a Ray task on an existing cluster.

The only module of gamerig that imports Ray (``pip install gamerig[ray]``). Each task

* declares ``ray.num_cpus`` CPUs (and ``ray.memory_mb`` of memory) from the fleet file, and
  for a session tied to an outside game one unit of that game's custom resource
  (``gamerig_game_<host>_<port>``, see ``matrix.game_resource``): the node that runs the
  game's sessions declares exactly one unit, so one game never gets two sessions;
* runs ``runner.run_attempt`` on its node, writing into the fleet root under the shared
  capture root (every node must see it at the same path), with SIGTERM as the supervisor's
  parent-death signal: when its worker dies (Ray kills the workers of a driver that died,
  and a worker may crash) the supervisor stops at once and finalizes, as locally; a dead
  node takes everything on it;
* has ``max_retries=0``: Ray never reruns a session by itself. A task lost with its worker
  or node comes back to the scheduler as ``Lost``; after ``settle_s`` (five heartbeats and
  2 s: the orphaned actors of a dead supervisor have exited, docs/supervision.md) and once
  its supervisor has finalized, its journal decides (``inflight``): retried only when no
  action was in flight.

A signal to the driver (``interrupt``) cancels every task with its worker, so each
supervisor gets its parent-death SIGTERM.
"""

from __future__ import annotations

import logging
import os
import signal
import socket

import ray
import ray.exceptions

from .errors import RayUnavailable
from .matrix import SessionPlan
from .runner import run_attempt
from .scheduler import Lost
from .spec import RaySettings


def _session_task(plan: dict, root: str, attempt: int, timeout_s: float | None, workdir: str) -> dict:
    if not os.path.isdir(root):
        raise FileNotFoundError(
            f"the fleet root {root} is not visible on this node: capture_root "
            "must be on storage every node mounts at the same path"
        )
    node = ray.get_runtime_context().get_node_id()
    return run_attempt(
        SessionPlan.from_dict(plan),
        root,
        attempt,
        timeout_s=timeout_s,
        death_signal=signal.SIGTERM,
        workdir=workdir,
        node=node,
    )


def _check_reachable(address: str) -> None:
    """A ``host:port`` address that nothing answers at is refused at once (Ray itself would
    keep retrying for minutes); ``auto`` and ``ray://`` addresses are left to Ray."""
    host, sep, port = address.rpartition(":")
    if not sep or not port.isdigit() or "://" in address:
        return
    try:
        socket.create_connection((host, int(port)), timeout=5).close()
    except OSError as exc:
        raise RayUnavailable(
            address, f"nothing answers there ({exc.strerror or exc}); is the Ray head running (ray start --head)?"
        ) from None


class RayBackend:
    name = "ray"

    def __init__(
        self, address: str, settings: RaySettings, plans: list[SessionPlan], workdir: str, timeout_s: float | None
    ):
        _check_reachable(address)
        try:
            ray.init(address=address, log_to_driver=False, logging_level=logging.WARNING)
        except (ConnectionError, RuntimeError, ValueError) as exc:
            raise RayUnavailable(address, f"cannot connect: {exc}") from None
        self.root = ""  # the fleet root, set by the driver once it is made
        self.settings, self.workdir, self.timeout_s = settings, workdir, timeout_s
        try:
            self._check_resources(address, plans)
        except RayUnavailable:
            ray.shutdown()
            raise
        self.remote = ray.remote(_session_task)
        self.refs: set = set()

    def _check_resources(self, address: str, plans: list[SessionPlan]) -> None:
        have = ray.cluster_resources()
        if have.get("CPU", 0) < self.settings.num_cpus:
            raise RayUnavailable(
                address,
                f"the cluster has {have.get('CPU', 0)} CPUs; each session "
                f"declares ray.num_cpus={self.settings.num_cpus}",
            )
        for plan in plans:
            if plan.resource and have.get(plan.resource, 0) < 1:
                raise RayUnavailable(
                    address,
                    (
                        f"no node declares the custom resource {plan.resource!r} for the game at "
                        f"{plan.game}; start the node that runs that game's sessions with "
                        f"ray start ... --resources='{{\"{plan.resource}\": 1}}'"
                    ),
                )

    def submit(self, plan: SessionPlan, attempt: int):
        opts: dict = {"num_cpus": self.settings.num_cpus, "max_retries": 0}
        if plan.resource:
            opts["resources"] = {plan.resource: 1}
        if self.settings.memory_mb:
            opts["memory"] = self.settings.memory_mb * 2**20
        ref = self.remote.options(**opts).remote(plan.to_dict(), self.root, attempt, self.timeout_s, self.workdir)
        self.refs.add(ref)
        return ref

    def poll(self, timeout_s: float) -> list:
        if not self.refs:
            return []
        ready, _ = ray.wait(list(self.refs), num_returns=len(self.refs), timeout=timeout_s)
        out = []
        for ref in ready:
            self.refs.discard(ref)
            try:
                out.append((ref, ray.get(ref)))
            except ray.exceptions.RayTaskError as exc:  # our code raised on the node
                out.append(
                    (ref, {"exit_code": None, "session_ids": [], "error": f"the session task failed: {exc.cause!r}"})
                )
            except ray.exceptions.RayError as exc:  # the worker or its node died
                out.append((ref, Lost(f"{type(exc).__name__}: {exc}")))
        return out

    def settle_s(self, plan: SessionPlan) -> float:
        return 5 * plan.heartbeat_s + 2.0

    def node_retries(self) -> int:
        return self.settings.node_retries

    def interrupt(self) -> None:
        for ref in self.refs:
            ray.cancel(ref, force=True)  # kills the worker: its supervisor gets SIGTERM

    def close(self) -> None:
        ray.shutdown()
