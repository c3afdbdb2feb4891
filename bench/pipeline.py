"""The game path: ``python bench/pipeline.py [--steps N] [--rounds R] [--quick] [--json PATH]``.

What one run measures, on the built-in game (``run/profiles/demo.yaml`` with
``session.stop_on_run_end=false`` and ``session.max_steps=N``, or ``--profile``):

1. **Rounds** (``--rounds``, 5): a real session (``python -m supervisor start`` as a
   subprocess: six processes), then the in-process baseline (``pipeline_baseline.replay``):
   one process doing the same work, row for row, on a fresh game with the same seed,
   replaying the actions the session took. Each round gives the ratio pipeline/baseline of
   the median step; the verdict is the median of those paired ratios.
   A **step** is an observation row to the next observation row, for observations whose
   proposal was executed: the action's intent, its POST and its result lie between them.
   Times are the journal's ``recorded_at`` stamps (the writer stamps a row before writing
   it, so a durable row's own fsync falls in the stage after it).
2. **Stages** of a step, from the same journals, for the session and the baseline.
3. **Profiles**: one more session with ``GAMERIG_PROFILE_DIR`` (each actor dumps cProfile
   statistics of its main thread): per actor, its busy time per step and its top functions.
4. **Intent acknowledgement**: a real recorder process started for the bench; the bench is
   its client, and times each ``RecordIntent`` from send to the decoded ``IntentAck``; and,
   as the pipeline's steps get it, from sending a proposal to the ``IntentAck`` of a standing
   ``AwaitIntent`` parked before it.
5. **Start-up** (spawn to the first observation row) and **memory**: the summed RSS of the
   session's process tree (supervisor and actors), sampled every 0.2 s during each round.
6. **Concurrency**: 1, 2, 4 and 8 sessions started at once (``--counts``), each
   ``--concurrent-steps`` steps; aggregate steps/s over the window from the first
   observation of any session to the last of any.

The machine is shared and noisy: compare the paired ratio, not single figures.
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import pstats
import shutil
import statistics
import sys
import tempfile
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, REPO)
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

# This module runs the parts of one bench run; a step read from a journal is pipeline_steps's,
# a session and its memory pipeline_sessions's, the one-process baseline pipeline_baseline's,
# the intent-acknowledgement probe ack_probe's, and the printed report and the JSON figures
# pipeline_report's.
from ack_probe import AckProbe  # noqa: E402
from pipeline_baseline import replay  # noqa: E402
from pipeline_report import machine, print_latency, print_profiles, print_rest, print_stages, write_json  # noqa: E402
from pipeline_sessions import RssSampler, finish_session, run_one, start_session  # noqa: E402
from pipeline_steps import action_steps, pct, rate, read_rows, stamp  # noqa: E402

import protocol.events as ev  # noqa: E402

DEFAULT_PROFILE = "run/profiles/demo.yaml"
#: functions whose own time is blocking, not work (cProfile's names for them)
WAITS = (
    "zmq/sugar/poll.py:80(poll)",
    "<method 'acquire' of '_thread.lock' objects>",
    "<built-in method time.sleep>",
    "<method 'poll' of 'select.epoll' objects>",
    "<built-in method select.select>",
    "<method 'poll' of 'select.poll' objects>",
)


# -- the parts of one bench run --------------------------------------------------------------
def rounds(args, base: str) -> list[dict]:
    out = []
    for n in range(args.rounds):
        try:
            s, rss = run_one(os.path.join(base, f"round{n}"), args.profile, args.steps, args.timeout)
        except RuntimeError as exc:  # reported, and the other rounds still count
            print(f"  round {n + 1} left out: {exc}", flush=True)
            continue
        bjournal = replay(s.rows, os.path.join(base, f"round{n}", "baseline"))
        brows = read_rows(bjournal)
        p_steps, b_steps = action_steps(s.rows), action_steps(brows)
        p_med, b_med = pct([x["total"] for x in p_steps], 50), pct([x["total"] for x in b_steps], 50)
        first = next(stamp(r) for r in s.rows if r["event"] == ev.Observation.KIND)
        same = sum(
            a["sha256"] == b["sha256"]
            for a, b in zip(
                [r for r in s.rows if r["event"] == ev.Observation.KIND],
                [r for r in brows if r["event"] == ev.Observation.KIND],
            )
        )
        out.append(
            {
                "exit": s.code,
                "pipeline": p_steps,
                "baseline": b_steps,
                "ratio": p_med / b_med,
                "p_rate": rate(s.rows),
                "b_rate": rate(brows),
                "startup_s": first - s.spawned,
                "rss_peak": rss.peak,
                "rss_parts": rss.peak_parts,
                "rss_median": statistics.median(rss.samples) if rss.samples else 0,
                "same_states": same,
                "rows": s.rows,
                "outcomes": _outcomes(brows),
            }
        )
        print(
            f"  round {n + 1}: pipeline {p_med:.2f} ms, baseline {b_med:.2f} ms, ratio {p_med / b_med:.2f}x "
            f"(exit {s.code}; {len(p_steps)} executed steps)",
            flush=True,
        )
    if not out:
        raise RuntimeError("no round completed")
    return out


def _outcomes(rows: list[dict]) -> dict:
    out: dict[str, int] = {}
    for r in rows:
        if r["event"] == ev.ActionResult.KIND:
            out[r["outcome"]] = out.get(r["outcome"], 0) + 1
    return out


def profiled(args, base: str) -> tuple[list[dict], str]:
    prof_dir = os.path.join(base, "profiles")
    os.makedirs(prof_dir)
    s, _ = run_one(
        os.path.join(base, "profiled"),
        args.profile,
        args.profile_steps,
        args.timeout,
        env={"GAMERIG_PROFILE_DIR": prof_dir},
    )
    return action_steps(s.rows), prof_dir


def profile_summary(prof_dir: str, steps: int, top: int = 5) -> list[dict]:
    """Per actor: main-thread wall, time blocked waiting, busy time per step, and the top
    functions (ours by cumulative time; anything by own time, waits excluded)."""
    out = []
    for path in sorted(glob.glob(os.path.join(prof_dir, "*.prof"))):
        st = {_fname(k): v for k, v in pstats.Stats(path).stats.items()}
        wall = max(v[3] for v in st.values())
        wait = sum(v[2] for f, v in st.items() if _is_wait(f))
        ours = [
            (v[3], f)
            for f, v in st.items()
            if f.startswith(("actors/", "protocol/", "supervisor/")) and v[3] < 0.9 * wall
        ]
        own = [(v[2], f) for f, v in st.items() if not _is_wait(f)]
        per = 1000 / max(1, steps)
        decodes = sum(v[1] for f, v in st.items() if f.startswith("protocol/codec.py") and f.endswith("(decode)"))
        out.append(
            {
                "actor": os.path.basename(path).rsplit("-", 1)[0],
                "wall_s": wall,
                "wait_s": wait,
                "decodes_per_step": decodes / max(1, steps),
                "busy_ms_per_step": (wall - wait) * per,
                "top_cumulative": [(f, t * per) for t, f in sorted(ours, reverse=True)[:top]],
                "top_own": [(f, t * per) for t, f in sorted(own, reverse=True)[:top]],
            }
        )
    return out


def _is_wait(name: str) -> bool:
    return any(name.endswith(w) for w in WAITS)


def _fname(key: tuple) -> str:
    path, line, name = key
    if path == "~":
        return name
    if "site-packages/" in path:
        path = path.split("site-packages/", 1)[1]
    elif path.startswith(REPO):
        path = os.path.relpath(path, REPO)
    else:
        path = os.path.basename(path)
    return f"{path}:{line}({name})"


def ack_latency(args, base: str, rows: list[dict]) -> dict[str, list[float]]:
    root = rows[0]["profile"]["capture"]["root"]
    states = []
    for r in rows:
        if r["event"] == ev.Observation.KIND and len(states) < 50:
            with open(os.path.join(root, r["path"]), encoding="utf-8") as fh:
                states.append(json.load(fh))
    workdir = os.path.join(base, "ack")
    os.makedirs(workdir)
    probe = AckProbe(workdir, rows[0]["profile"])
    try:
        return probe.probe(states, args.ack_probes)
    finally:
        probe.close()


def concurrency(args, base: str) -> list[dict]:
    out = []
    for count in args.counts:
        sessions = [
            start_session(os.path.join(base, f"conc{count}-{i}"), args.profile, args.concurrent_steps)
            for i in range(count)
        ]
        sampler = RssSampler([s.proc.pid for s in sessions])
        sampler.start()
        try:
            for s in sessions:
                try:
                    finish_session(s, args.timeout)
                except RuntimeError as exc:
                    s.rows = []
                    print(f"  a session of {count} left out: {exc}", flush=True)
        finally:
            sampler.stop.set()
            sampler.join()
        ended = time.time()
        firsts, lasts, total, meds = [], [], 0, []
        for s in sessions:
            if not s.rows:
                continue
            obs = [stamp(r) for r in s.rows if r["event"] == ev.Observation.KIND]
            firsts.append(obs[0])
            lasts.append(obs[-1])
            total += len(obs)
            meds.append(pct([x["total"] for x in action_steps(s.rows)], 50))
        if not firsts:
            continue
        out.append(
            {
                "sessions": count,
                "steps": total,
                "steady_rate": total / (max(lasts) - min(firsts)),
                "wall_rate": total / (ended - min(s.spawned for s in sessions)),
                "median_step_ms": statistics.median(meds),
                "exits": [s.code for s in sessions],
                "rss_peak": sampler.peak,
            }
        )
        print(f"  {count} session(s): {out[-1]['steady_rate']:.0f} steps/s", flush=True)
    return out


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(
        prog="python bench/pipeline.py", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--steps", type=int, default=None, help="steps per timed session (600; --quick 300)")
    ap.add_argument("--rounds", type=int, default=None, help="paired pipeline/baseline rounds (5; --quick 1)")
    ap.add_argument("--profile", default=DEFAULT_PROFILE, help=f"the session profile ({DEFAULT_PROFILE})")
    ap.add_argument("--profile-steps", type=int, default=None, help="steps of the profiled session (400)")
    ap.add_argument("--ack-probes", type=int, default=None, help="intents timed (500; --quick 150)")
    ap.add_argument("--counts", default=None, help="concurrent sessions to try ('1,2,4,8'; '' skips)")
    ap.add_argument("--concurrent-steps", type=int, default=None, help="steps per concurrent session (300)")
    ap.add_argument("--timeout", type=float, default=600, help="seconds allowed per session (600)")
    ap.add_argument("--quick", action="store_true", help="a short run: fewer steps, rounds and probes")
    ap.add_argument("--json", default=None, metavar="PATH", help="also write the figures as JSON")
    ap.add_argument("--keep", action="store_true", help="keep the work directory (captures, profiles)")
    a = ap.parse_args(argv)
    q = a.quick
    for name, quick, full in (
        ("steps", 300, 600),
        ("rounds", 1, 5),
        ("profile_steps", 200, 400),
        ("ack_probes", 150, 500),
        ("concurrent_steps", 100, 300),
    ):
        if getattr(a, name) is None:
            setattr(a, name, quick if q else full)
    counts = a.counts if a.counts is not None else ("1,2,4" if q else "1,2,4,8")
    try:
        a.counts = [int(x) for x in counts.split(",") if x.strip()]
    except ValueError:
        ap.error(f"--counts {counts!r}: expected whole numbers separated by commas, e.g. 1,2,4,8")
    if any(c < 1 for c in a.counts):
        ap.error(f"--counts {counts!r}: every count must be at least 1")
    if min(a.steps, a.profile_steps, a.concurrent_steps) < 20 or a.rounds < 1 or a.ack_probes < 10:
        ap.error(
            "--steps, --profile-steps and --concurrent-steps must be at least 20, --rounds at "
            "least 1, --ack-probes at least 10"
        )
    a.profile = os.path.abspath(a.profile) if os.path.exists(a.profile) else os.path.join(REPO, a.profile)
    if not os.path.exists(a.profile):
        ap.error(f"--profile {a.profile}: no such file")
    return a


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    base = tempfile.mkdtemp(prefix="bench-pipeline-")
    print(
        f"bench/pipeline.py: {os.path.relpath(args.profile, REPO)}, {args.steps} steps x {args.rounds} "
        f"round(s); work directory {base}",
        flush=True,
    )
    ok = False
    try:
        res = rounds(args, base)
        print("  profiled session ...", flush=True)
        prof_steps, prof_dir = profiled(args, base)
        summary = profile_summary(prof_dir, len(prof_steps))
        print("  intent acknowledgement probe ...", flush=True)
        ack = ack_latency(args, base, res[-1]["rows"])
        conc = concurrency(args, base)
        print(f"\nMachine: {machine()}")
        print_latency(res)
        print_stages(res)
        print_profiles(summary, prof_steps)
        print_rest(res, ack, conc)
        if args.json:
            write_json(args.json, res, summary, ack, conc)
        ok = True
    finally:
        if args.keep or not ok:
            print(f"work directory kept: {base}")
        else:
            shutil.rmtree(base, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
