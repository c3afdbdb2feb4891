"""The agent policy's own time and memory: ``python bench/agent.py [--decisions N] [--seed S]
[--rounds R] [--round-decisions D] [--no-mcp] [--json PATH] [--keep]``.

Target: the agent (``policy.module: llm``) adds at most **5 ms** per decision over the model's
answer time (medians), and its memory stays flat over a 5,000-decision session.

One run, on the built-in game (``game.seed`` S, ``session.stop_on_run_end=false`` so runs
follow runs). An **agent session** is ``run/profiles/agent-demo.yaml`` against the stand-in
model server (``python -m actors.model_client.standin``, its own process, seeded: it answers
every question legally at once), stopped (``StopRequest``, as ``supervisor stop``) once its
journal holds the model decisions asked for; a **heuristic session** is the built-in heuristic
(``run/profiles/demo.yaml``: ``policy.module: sts2``, no model) on the same seed.

1. **Rounds** (``--rounds``, 4): a heuristic session of 1.5 x ``D`` steps and an agent session
   of ``D`` decisions (``--round-decisions``, 300), one right after the other, which goes first
   alternating (the machine is shared and drifts: a pair sees the same load).
2. **The long session**: an agent session of ``N`` decisions (``--decisions``, 5,000); every
   process's memory is sampled. Then a heuristic session of as many steps as it took: the last
   pair, and the memory baseline (it spans the same steps).
3. **MCP tool calls** (unless ``--no-mcp``): ``bench/mcp_step.py``'s ``measure()`` (``supervisor
   mcp --game sts2`` against plain HTTP to the game), its report printed after this one.

Every figure is computed from the journals (``recorded_at`` stamps and the rows' own fields),
for the first ``N`` **model decisions**: proposals whose ``agent.attempts`` is not empty (the
policy asked the model at least once; menus, popups and screens with one legal action ask
nothing). Per decision:

* ``model``: the model's answer time as the client measured it: the sum of ``usage.wall_ms``
  over the decision's calls (its ``model_evidence`` and any ``model_error`` rows of its
  observation): ``ModelClient.ask`` from its start to the answer, the HTTP request included;
* ``http``: the sum of ``usage.latency_ms``, the HTTP requests alone (the stand-in serving);
* ``policy_extra``: ``decide_ms - model``: the policy's time to decide beyond the model's
  (legal actions, the screen text, the question, the hops to and from the model-client actor,
  that actor's turn around the call, turning the answer into a proposal);
* ``step``: the observation row it decided on → the next observation row (the one after its
  action's result): the whole step as the journal shows it (executed decisions only);
* ``own``: ``step - model``: **the pipeline's own time per decision**.

The per-decision table is the long session's. The heuristic's ``step`` is the same span for
its executed steps. In each pair, every executed decision's ``own`` is set against the
heuristic's median step on the same screen (``state_type`` and action; ``pair()``), and
``added`` is the median of the differences; the **verdict** is the median of ``added`` over
the pairs, against 5 ms.

**Memory**: every process of the long session (the actors' pids from the supervisor's own
status, ``StatusRequest``, re-read every 5 s so a restart is followed; the supervisor; the
stand-in) and of the heuristic session after it, RSS and CPU time by ``psutil`` every
``WAIT_S`` s, each sample tagged with the model decisions and steps journalled by then. Per
process (``memory()``): the median RSS over the first and over the last tenth of the
decisions, the slope (least squares, KiB per 1,000 decisions) after the first tenth, the same
process's slope in the heuristic session over the same steps, and the agent's **excess**. The pipeline's bounded maps
(4,096 steps of ids and rows in every actor) keep filling for the first ~4,000 steps and the
allocator's arenas for longer (docs/reliability.md, "Long runs"), so the heuristic's own
growth is the baseline. **Flat**: an excess of at most ``FLAT_KIB_PER_1000``.

The stand-in's CPU per answer (its process's user + system time over the long session / its
requests) is printed beside ``http``: what the stand-in itself spends serving one request. The
agent's own work (``parts()``: legal actions, the screen text, the question, its hash ...) is
timed in this process on the long session's screens: its CPU apart from the hops.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, REPO)
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from agent_figures import (  # noqa: E402
    TARGET_MS,
    baseline_steps,
    decisions,
    is_model_decision,
    memory,
    other_steps,
    parts,
    steps_to,
    summary,
)
from agent_report import report  # noqa: E402
from agent_watch import WAIT_S, Standin, watched  # noqa: E402
from pipeline_report import machine  # noqa: E402

try:  # the MCP SDK is an optional extra (pip install 'gamerig[mcp]'); without it, --no-mcp
    import mcp_step

    MCP_MISSING = None
except ImportError as exc:
    mcp_step = None
    MCP_MISSING = str(exc)

AGENT_PROFILE = "run/profiles/agent-demo.yaml"
BASELINE_PROFILE = "run/profiles/demo.yaml"
MATCH_MIN = 5  # the heuristic's steps on a screen for their median to be set against the agent's


# -- the run and its figures ---------------------------------------------------------------
def run(args) -> dict:
    base = args.workdir
    common = {"game.seed": str(args.seed)}
    print(
        f"bench/agent.py: {args.rounds} paired round(s) of {args.round_decisions} decisions, then "
        f"{args.decisions} model decisions; seed {args.seed}; work directory {base}",
        flush=True,
    )
    standin = Standin(args.seed, os.path.join(base, "standin.log"))
    budget = max(args.decisions, args.round_decisions) * 4 + 1000
    agent_sets = {
        **common,
        "model.base_url": standin.url,
        "model.budget_calls": str(budget),
        "model.budget_tokens": str(budget * 10_000),
    }

    def agent(name: str, n: int):
        print(f"  {name}: the agent against the stand-in, {n} model decisions ...", flush=True)
        cpu0, started = standin.cpu_s(), time.time()
        s, mon = watched(
            os.path.join(base, name),
            args.profile,
            n * 4 + 500,
            agent_sets,
            args.timeout,
            extra={"standin": standin.ps},
            stop_after=n,
        )
        return s.rows, mon, time.time() - started, standin.cpu_s() - cpu0

    def heuristic(name: str, steps: int):
        print(f"  {name}: the heuristic, {steps} steps ...", flush=True)
        s, mon = watched(os.path.join(base, name), args.baseline_profile, steps, common, args.timeout)
        return s.rows, mon

    try:
        pairs = []
        for r in range(args.rounds):  # alternating which goes first, so a drift weighs on both
            steps = args.round_decisions * 3 // 2
            if r % 2 == 0:
                h_rows, _ = heuristic(f"round{r + 1}-heuristic", steps)
                a_rows = agent(f"round{r + 1}-agent", args.round_decisions)[0]
            else:
                a_rows = agent(f"round{r + 1}-agent", args.round_decisions)[0]
                h_rows, _ = heuristic(f"round{r + 1}-heuristic", steps)
            pairs.append(
                pair(
                    f"round {r + 1}",
                    "heuristic first" if r % 2 == 0 else "agent first",
                    a_rows,
                    args.round_decisions,
                    h_rows,
                )
            )
        rows, amon, wall, standin_cpu = agent("long-agent", args.decisions)
    finally:
        standin.stop()
    steps = max(30, steps_to(rows, args.decisions))
    h_rows, hmon = heuristic("long-heuristic", steps)
    pairs.append(pair("long", "agent first", rows, args.decisions, h_rows))
    mcp = None
    if args.mcp:
        print("  MCP tool calls (bench/mcp_step.py) ...", flush=True)
        mcp = mcp_figures(args, base)
    return figures(args, rows, amon, wall, standin_cpu, h_rows, hmon, pairs, mcp)


def pair(name: str, order: str, agent_rows: list[dict], n: int, heuristic_rows: list[dict]) -> dict:
    """One agent session and one heuristic session run one right after the other. Each of the
    agent's executed decisions is set against the heuristic's median step **on the same
    screen**: the same ``state_type`` and action, else the same ``state_type``, when the
    heuristic took at least ``MATCH_MIN`` such steps (a play_card step and an end_turn step,
    a combat and a menu, cost the game differently; the two policies' games go different
    ways). ``added`` is the median of ``own`` minus that; ``ratio`` the median ``own`` over
    the median of the steps it was set against. ``own_ms``, ``heuristic_ms``: the plain
    medians, whatever the screens."""
    got = decisions(agent_rows, n)
    hs = baseline_steps(heuristic_rows)
    if any(x["model"] for x in hs):
        raise RuntimeError(f"{name}: the heuristic session consulted a model")
    same: dict = {}
    for x in hs:
        same.setdefault(x["screen"], []).append(x["step"])
        same.setdefault(x["screen"][0], []).append(x["step"])
    ref = {k: statistics.median(v) for k, v in same.items() if len(v) >= MATCH_MIN}
    matched = [(x["own"], ref.get(x["screen"], ref.get(x["screen"][0]))) for x in got if x["own"] is not None]
    matched = [(own, r) for own, r in matched if r is not None]
    if not matched:
        raise RuntimeError(f"{name}: no decision of the agent's on a screen the heuristic played {MATCH_MIN} times")
    added = statistics.median(own - r for own, r in matched)
    return {
        "name": name,
        "order": order,
        "decisions": len(got),
        "matched": len(matched),
        "heuristic_steps": len(hs),
        "own_ms": summary([x["own"] for x in got])["median"],
        "heuristic_ms": summary([x["step"] for x in hs])["median"],
        "added_ms": added,
        "ratio": statistics.median(o for o, _ in matched) / statistics.median(r for _, r in matched),
    }


def figures(args, rows, amon, wall, standin_cpu, h_rows, hmon, pairs, mcp) -> dict:
    got = decisions(rows, args.decisions)
    if len(got) < args.decisions:
        raise RuntimeError(
            f"the agent session journalled {len(got)} model decisions, fewer than --decisions {args.decisions}"
        )
    hs = baseline_steps(h_rows)
    added = statistics.median(p["added_ms"] for p in pairs)
    outcomes: dict[str, int] = {}
    calls: dict[int, int] = {}
    for x in got:
        outcomes[x["outcome"]] = outcomes.get(x["outcome"], 0) + 1
        calls[x["calls"]] = calls.get(x["calls"], 0) + 1
    total_calls = sum(len((r.get("agent") or {}).get("attempts") or []) for r in rows if is_model_decision(r))
    agent_cpu, agent_steps = amon.cpu_per_step()
    base_cpu, base_steps = hmon.cpu_per_step()
    return {
        "machine": machine(),
        "seed": args.seed,
        "sample_s": WAIT_S,
        "agent": {
            "decisions": len(got),
            "executed": sum(x["step"] is not None for x in got),
            "steps": steps_to(rows, args.decisions),
            "wall_s": wall,
            "outcomes": outcomes,
            "calls": dict(sorted(calls.items())),
            "figures": {
                k: summary([x[k] for x in got])
                for k in (
                    "model",
                    "http",
                    "decide",
                    "policy_extra",
                    "step",
                    "own",
                    "obs_prop",
                    "prop_next",
                    "row_bytes",
                )
            },
            "standin_cpu_ms": standin_cpu * 1000 / total_calls if total_calls else None,
            "other_steps": summary(other_steps(rows)),
        },
        "baseline": {k: summary([x[k] for x in hs]) for k in ("step", "obs_prop", "prop_next")},
        "pairs": pairs,
        "verdict": {
            "added_ms": added,
            "ratio": statistics.median(p["ratio"] for p in pairs),
            "met": added <= TARGET_MS,
            "target_ms": TARGET_MS,
        },
        "parts": parts(rows, min(200, args.decisions)),
        "memory": memory(amon.samples, args.decisions, hmon.samples),
        "rss_samples": [[d, st, rss] for _, d, st, rss, _ in amon.samples],  # decisions, steps, name -> bytes
        "cpu_ms_per_step": {
            "agent": {k: v * 1000 / max(1, agent_steps) for k, v in agent_cpu.items() if k != "standin"},
            "baseline": {k: v * 1000 / max(1, base_steps) for k, v in base_cpu.items()},
        },
        "mcp": mcp,
    }


def mcp_figures(args, base: str) -> str:
    """``bench/mcp_step.py``'s figures as its own report prints them (or why there are none)."""
    if mcp_step is None:
        return f"MCP tool calls: not measured, the MCP SDK is not installed ({MCP_MISSING}; pip install 'gamerig[mcp]')"
    workdir = os.path.join(base, "mcp")
    os.makedirs(workdir)
    counts = () if args.mcp_calls is None else (args.mcp_calls, args.mcp_calls)
    fig = mcp_step.measure(*counts, workdir=workdir)
    return "MCP tool calls (bench/mcp_step.py: supervisor mcp against plain HTTP to the game)\n" + mcp_step.report(fig)


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(
        prog="python bench/agent.py", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--decisions", type=int, default=5000, help="model decisions of the agent session (5000)")
    ap.add_argument("--seed", type=int, default=1, help="the game's seed, and the stand-in's (1)")
    ap.add_argument(
        "--rounds",
        type=int,
        default=4,
        help="paired rounds before the long session: a heuristic and an agent session each (4)",
    )
    ap.add_argument(
        "--round-decisions",
        type=int,
        default=300,
        help="model decisions of a round's agent session; its heuristic plays 1.5x as many steps (300)",
    )
    ap.add_argument("--profile", default=AGENT_PROFILE, help=f"the agent's profile ({AGENT_PROFILE})")
    ap.add_argument("--baseline-profile", default=BASELINE_PROFILE, help=f"the baseline's ({BASELINE_PROFILE})")
    ap.add_argument(
        "--no-mcp",
        dest="mcp",
        action="store_false",
        help="leave out bench/mcp_step.py's figures (measured by default, after the sessions)",
    )
    ap.add_argument(
        "--mcp-calls",
        type=int,
        default=None,
        help="reads and actions of the MCP measure (default: bench/mcp_step.py's own)",
    )
    ap.add_argument("--timeout", type=float, default=1800, help="seconds allowed per session (1800)")
    ap.add_argument("--json", default=None, metavar="PATH", help="also write the figures as JSON")
    ap.add_argument("--keep", action="store_true", help="keep the work directory (captures, logs)")
    a = ap.parse_args(argv)
    if a.decisions < 10 or a.round_decisions < 10 or a.rounds < 0:
        ap.error("--decisions and --round-decisions must be at least 10, --rounds at least 0")
    for name in ("profile", "baseline_profile"):
        path = getattr(a, name)
        path = os.path.abspath(path) if os.path.exists(path) else os.path.join(REPO, path)
        if not os.path.exists(path):
            ap.error(f"--{name.replace('_', '-')} {path}: no such file")
        setattr(a, name, path)
    return a


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    args.workdir = tempfile.mkdtemp(prefix="bench-agent-")
    ok = False
    try:
        fig = run(args)
        print()
        print("\n".join(report(fig)))
        if args.json:
            with open(args.json, "w", encoding="utf-8") as fh:
                json.dump({**fig, "workdir": args.workdir if args.keep else None}, fh, indent=1)
        ok = True
    finally:
        if args.keep or not ok:
            print(f"work directory kept: {args.workdir}")
        else:
            shutil.rmtree(args.workdir, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
