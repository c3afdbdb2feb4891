"""An agent's tool call through ``supervisor mcp --game``, against the same calls straight to the
game: ``python bench/mcp_step.py [--reads N] [--actions N] [--game sts2|builtin] [--poll-interval S]``.

``measure(n_reads, n_actions, ...)`` starts the built-in game as its own server (``python -m
actors.game --port 0 --seed S``) and ``supervisor mcp`` over stdio with the MCP SDK's own client
(as tests/mcp and every agent do): ``--game sts2`` pointed at that server (the default), or
``--game builtin`` (the server's session starts a game of its own with the same seed). Then, in
the same run:

* **reads**: ``n_reads`` calls of ``get_game_state`` in its default format (markdown: a fresh,
  journalled observation, then the game's rendering, journalled as an ``agent_read`` row);
* **actions**: a run played from the main menu by the test player (``tests/mcp/sts2_player``:
  the first candidate the state offers), ``n_actions`` acting calls, each after a
  ``get_game_state {"format": "json"}`` (timed as ``read_json``) that the player decides on;
  every action a whole step: fresh observation, the agent's proposal, the fsynced intent, one
  POST, the result and the observation after it;
* **the relay baseline**: the same calls as plain HTTP requests straight to a fresh game of the
  same seed (what the mod's own MCP server, a thin relay, does per call): ``GET
  /api/v1/singleplayer?format=markdown``, ``GET /api/v1/singleplayer``, and the same POSTs, the
  same player choosing from the same states;
* **idle CPU**: the CPU time (user + system, ``psutil``) of ``supervisor mcp`` and every process
  of its session over ``idle_s`` seconds with no call, as a share of one core.

Figures are milliseconds per call, median and p90, as the client sees them (the MCP stdio round
trip included). Nothing runs at import: ``bench/agent.py`` imports ``measure``.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import statistics
import sys
import tempfile
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if REPO not in sys.path:
    sys.path.insert(0, REPO)
if os.path.dirname(os.path.abspath(__file__)) not in sys.path:
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import anyio  # noqa: E402
import psutil  # noqa: E402
from mcp import ClientSession, StdioServerParameters  # noqa: E402
from mcp.client.stdio import stdio_client  # noqa: E402
from pipeline_baseline import GameServer  # noqa: E402

from actors.sts2mcp import STATE_PATH, GameClient  # noqa: E402
from supervisor.mcp.sts2 import schemas as sts2_schemas  # noqa: E402
from tests.mcp.sts2_player import candidates  # noqa: E402

SEED = 5
#: the game starts inside a run, one floor in (a combat): actions are the run's, and every in-run
#: observation reads the run identity too, as in play
KNOBS = {"start_in_run": 1, "start_floor": 1}
TARGETS = {"read": 12.0, "action": 20.0}  # ms, median (docs/performance.md)


def stats(ms: list[float]) -> dict:
    """Median and p90 of a list of milliseconds (``n`` 0: none taken)."""
    if not ms:
        return {"n": 0, "median_ms": None, "p90_ms": None}
    ordered = sorted(ms)
    return {
        "n": len(ms),
        "median_ms": round(statistics.median(ordered), 2),
        "p90_ms": round(ordered[min(len(ordered) - 1, int(0.9 * len(ordered)))], 2),
    }


class Chooser:
    """The test player's choice on a state, never a call already made on this very state since
    it last changed (the guard of ``supervisor mcp`` would refuse it; the relay would send it)."""

    def __init__(self):
        self.state: str | None = None
        self.tried: set[str] = set()

    def pick(self, state: dict) -> tuple[str, dict] | None:
        key = json.dumps(state, sort_keys=True)
        if key != self.state:
            self.state, self.tried = key, set()
        for name, args in candidates(state):
            call = json.dumps([name, args], sort_keys=True)
            if call not in self.tried:
                self.tried.add(call)
                return name, args
        return None


# -- the sequence, the same on both paths ---------------------------------------------------
async def play(call, n_reads: int, n_actions: int) -> dict[str, list[float]]:
    """Each turn: a markdown ``get_game_state`` (while fewer than ``n_reads``), a JSON one the
    player decides on, and that action (while fewer than ``n_actions``). ``call(name, args)``
    makes one call and returns (ms, the JSON state for a JSON read, else None). Milliseconds by
    kind: ``read`` (markdown), ``read_json``, ``action``."""
    out: dict[str, list[float]] = {"read": [], "read_json": [], "action": []}
    chooser = Chooser()
    while len(out["read"]) < n_reads or len(out["action"]) < n_actions:
        if len(out["read"]) < n_reads:
            out["read"].append((await call("get_game_state", {}))[0])
        if len(out["action"]) >= n_actions:
            continue
        ms, state = await call("get_game_state", {"format": "json"})
        out["read_json"].append(ms)
        choice = chooser.pick(state)
        if choice is None:
            raise RuntimeError(f"the player has nothing to do on {json.dumps(state)[:300]}")
        out["action"].append((await call(*choice))[0])
    return out


# -- the relay baseline --------------------------------------------------------------------
def relay(url: str, n_reads: int, n_actions: int) -> dict[str, list[float]]:
    """The same calls as plain HTTP requests to the game at ``url`` (``play``)."""
    client = GameClient(url, 5.0)

    async def call(name: str, args: dict) -> tuple[float, dict | None]:
        start = time.perf_counter()
        state = None
        if name == "get_game_state" and args.get("format") == "json":
            state = client.read_state()
        elif name == "get_game_state":
            status, text = client.read_text(STATE_PATH, {"format": "markdown"})
            if status != 200:
                raise RuntimeError(f"GET {STATE_PATH}?format=markdown: {status} {text[:200]}")
        else:
            payload = sts2_schemas.ALL[name].body(dict(args))
            client.send_action(payload.pop("action"), payload, "relay-baseline")
        return (time.perf_counter() - start) * 1000, state

    try:
        return anyio.run(play, call, n_reads, n_actions)
    finally:
        client.close()


# -- through supervisor mcp ----------------------------------------------------------------
def session_processes(server_pid: int) -> list[psutil.Process]:
    """``supervisor mcp`` and every process below it (its session's supervisor and actors)."""
    try:
        root = psutil.Process(server_pid)
        return [root, *root.children(recursive=True)]
    except psutil.NoSuchProcess:
        return []


def cpu_seconds(procs: list[psutil.Process]) -> dict[int, float]:
    out = {}
    for p in procs:
        with contextlib.suppress(psutil.NoSuchProcess, psutil.AccessDenied):
            t = p.cpu_times()
            out[p.pid] = t.user + t.system
    return out


def idle_cpu(server_pid: int, seconds: float) -> dict:
    """The CPU the session's processes use over ``seconds`` without a call."""
    procs = session_processes(server_pid)
    names = {}
    for p in procs:
        with contextlib.suppress(psutil.NoSuchProcess, psutil.AccessDenied):
            cmd = p.cmdline()
            names[p.pid] = " ".join(a for a in cmd[1:4] if not a.startswith("/"))[:40]
    before = cpu_seconds(procs)
    time.sleep(seconds)
    after = cpu_seconds(procs)
    used = {pid: after[pid] - before[pid] for pid in before if pid in after}
    total = sum(used.values())
    return {
        "seconds": seconds,
        "processes": len(used),
        "cpu_s": round(total, 4),
        "percent_of_a_core": round(100 * total / seconds, 2),
        "by_process": {
            names.get(pid, str(pid)): round(v * 1000, 1) for pid, v in sorted(used.items(), key=lambda kv: -kv[1])
        },
    }


def server_pid_of(cmd_marker: str) -> int:
    for p in psutil.Process().children(recursive=True):
        with contextlib.suppress(psutil.NoSuchProcess, psutil.AccessDenied):
            cmd = p.cmdline()
            if "supervisor" in cmd and "mcp" in cmd and cmd_marker in cmd:
                return p.pid
    raise RuntimeError("supervisor mcp's process was not found among this process's children")


async def _drive(
    flags: list[str], workspace: str, n_reads: int, n_actions: int, n_floor: int, idle_s: float, errlog
) -> dict:
    params = StdioServerParameters(
        command=sys.executable, cwd=REPO, args=["-m", "supervisor", "mcp", "--workspace", workspace, *flags]
    )
    async with stdio_client(params, errlog=errlog) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()

            async def call(name: str, args: dict) -> tuple[float, dict | None]:
                start = time.perf_counter()
                result = await session.call_tool(name, args)
                ms = (time.perf_counter() - start) * 1000
                text = result.content[0].text if result.content else ""
                if result.is_error and not (name.startswith("mp_") and text.startswith("mp-refused")):
                    raise RuntimeError(f"{name} {args}: {text[:300]}")
                return ms, json.loads(text) if args.get("format") == "json" else None

            start = time.perf_counter()
            await call("get_game_state", {"format": "json"})  # starts the session
            first_ms = (time.perf_counter() - start) * 1000
            out = await play(call, n_reads, n_actions)
            out["refused"] = [(await call("mp_map_vote", {"node_index": 0}))[0] for _ in range(n_floor)]
            out["first_call_ms"] = round(first_ms, 1)
            out["idle_cpu"] = await anyio.to_thread.run_sync(idle_cpu, server_pid_of(workspace), idle_s)
    return out


def measure(
    n_reads: int = 60,
    n_actions: int = 60,
    *,
    game: str = "sts2",
    poll_interval: float | None = None,
    idle_s: float = 5.0,
    n_floor: int = 20,
    seed: int = SEED,
    workdir: str | None = None,
) -> dict:
    """One run: the calls through ``supervisor mcp --game GAME`` (``sts2``: pointed at a built-in
    game started here; ``builtin``: its session starts its own), then the relay baseline on a
    fresh game of the same seed (module docstring). ``poll_interval``: the server's
    ``--poll-interval`` (None: its default). Returns the figures: ``mcp`` and ``relay`` with
    ``read`` (markdown), ``read_json`` and ``action``, each ``{n, median_ms, p90_ms}``; ``mcp``
    also ``refused`` (a multiplayer tool, refused without the game or the pipeline: the MCP
    round trip alone); ``idle_cpu``; ``first_call_ms`` (the session's start); ``targets`` and
    whether each is ``met``; ``cores`` and ``load_before`` (the 1-minute load average)."""
    load = os.getloadavg()[0]
    with contextlib.ExitStack() as stack:
        base = workdir or stack.enter_context(tempfile.TemporaryDirectory(prefix="mcp-step-"))
        workspace = os.path.join(base, "workspace")
        os.makedirs(workspace, exist_ok=True)
        errlog = stack.enter_context(open(os.path.join(base, "mcp-server.log"), "w", encoding="utf-8"))
        flags = ["--game", game, "--seed", str(seed)]
        if game == "builtin":
            flags += [f"--knob={k}={v}" for k, v in KNOBS.items()]
        else:
            server = GameServer(seed, KNOBS, None, os.path.join(base, "game-mcp.log"))
            stack.callback(server.stop)
            flags += ["--host", "127.0.0.1", "--port", server.url.rsplit(":", 1)[1]]
        if poll_interval is not None:
            flags += ["--poll-interval", str(poll_interval)]
        through = anyio.run(_drive, flags, workspace, n_reads, n_actions, n_floor, idle_s, errlog)
        plain = GameServer(seed, KNOBS, None, os.path.join(base, "game-relay.log"))
        try:
            direct = relay(plain.url, n_reads, n_actions)
        finally:
            plain.stop()
    mcp = {k: stats(through[k]) for k in ("read", "read_json", "action", "refused")}
    read = max(mcp["read"]["median_ms"] or 0, mcp["read_json"]["median_ms"] or 0)
    return {
        "game": game,
        "poll_interval": poll_interval,
        "seed": seed,
        "cores": os.cpu_count(),
        "load_before": load,
        "mcp": mcp,
        "relay": {k: stats(direct[k]) for k in ("read", "read_json", "action")},
        "first_call_ms": through["first_call_ms"],
        "idle_cpu": through["idle_cpu"],
        "targets": {"read_ms": TARGETS["read"], "action_ms": TARGETS["action"]},
        "met": {"read": read <= TARGETS["read"], "action": (mcp["action"]["median_ms"] or 0) <= TARGETS["action"]},
    }


def report(fig: dict) -> str:
    poll = fig["poll_interval"] if fig["poll_interval"] is not None else "default"
    lines = [
        f"supervisor mcp --game {fig['game']} (--poll-interval {poll}) against the built-in game, seed "
        f"{fig['seed']}; {fig['cores']} cores, load average {fig['load_before']:.2f} before",
        f"{'ms per call, median / p90 (n)':<31} {'supervisor mcp':<22} relay (plain HTTP)",
    ]
    names = {
        "read": "get_game_state (markdown)",
        "read_json": "get_game_state (json)",
        "action": "an action",
        "refused": "mp_* refused (MCP round trip)",
    }
    for key, label in names.items():
        m, r = fig["mcp"][key], fig["relay"].get(key)
        here = f"{m['median_ms']} / {m['p90_ms']} ({m['n']})"
        lines.append(f"{label:<31} {here:<22} " + (f"{r['median_ms']} / {r['p90_ms']} ({r['n']})" if r else "-"))
    idle = fig["idle_cpu"]
    lines.append(
        f"idle CPU over {idle['seconds']:g} s: {idle['percent_of_a_core']} % of a core "
        f"({idle['cpu_s'] * 1000:.0f} ms in {idle['processes']} processes; "
        + ", ".join(f"{k} {v:g}" for k, v in idle["by_process"].items())
        + " ms)"
    )
    lines.append(f"first call (starts the session): {fig['first_call_ms']} ms")
    t, met = fig["targets"], fig["met"]
    lines.append(
        f"targets: a read <= {t['read_ms']} ms median: {'met' if met['read'] else 'NOT met'}; "
        f"an action <= {t['action_ms']} ms: {'met' if met['action'] else 'NOT met'}"
    )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--reads", type=int, default=60, help="markdown get_game_state calls (60)")
    p.add_argument("--actions", type=int, default=60, help="actions, each after a JSON get_game_state (60)")
    p.add_argument("--game", choices=("sts2", "builtin"), default="sts2")
    p.add_argument("--poll-interval", type=float, default=None, help="the server's --poll-interval (its default)")
    p.add_argument("--idle", type=float, default=5.0, help="seconds of idle CPU measured (5)")
    p.add_argument("--seed", type=int, default=SEED)
    p.add_argument("--json", action="store_true", help="print the figures as JSON too")
    args = p.parse_args(argv)
    fig = measure(
        args.reads, args.actions, game=args.game, poll_interval=args.poll_interval, idle_s=args.idle, seed=args.seed
    )
    print(report(fig))
    if args.json:
        print(json.dumps(fig, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
