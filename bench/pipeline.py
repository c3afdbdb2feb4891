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
import dataclasses
import datetime as dt
import glob
import json
import os
import platform
import pstats
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time

import psutil

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, REPO)
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from pipeline_baseline import AckProbe, replay  # noqa: E402

import protocol.events as ev  # noqa: E402
from protocol.journal import iter_lines  # noqa: E402

DEFAULT_PROFILE = "run/profiles/demo.yaml"
STAGES = (
    ("read_ms", "GET of the state (the observation row's read_ms)"),
    (
        "obs_prop",
        "observation → proposal: the row to the policy (the observation file's and "
        "directory's fsync meanwhile), decide, record_proposal",
    ),
    ("prop_att", "proposal → attempt: the status row, the attempt row (the standing intent, same group)"),
    ("att_res", "attempt → result: the intent's fsync, the ack, the POST, record_result"),
    ("request_ms", "… of which the POST (the result row's request_ms)"),
    (
        "res_obs",
        "result → next observation: the row to the observer (the result's fsync "
        "meanwhile), GET state (+ compendium), store",
    ),
)
#: functions whose own time is blocking, not work (cProfile's names for them)
WAITS = (
    "zmq/sugar/poll.py:80(poll)",
    "<method 'acquire' of '_thread.lock' objects>",
    "<built-in method time.sleep>",
    "<method 'poll' of 'select.epoll' objects>",
    "<built-in method select.select>",
    "<method 'poll' of 'select.poll' objects>",
)


# -- journals ---------------------------------------------------------------------------------
def stamp(row: dict) -> float:
    return dt.datetime.fromisoformat(row["recorded_at"].replace("Z", "+00:00")).timestamp()


def read_rows(path: str) -> list[dict]:
    """Every row of a finished journal (the one reader, ``protocol.journal.iter_lines``);
    a line that is not a whole row is an error here: the bench measures whole sessions."""
    rows = []
    for line in iter_lines(path):
        if line.row is None and line.data.strip():
            raise ValueError(f"{path}: line {line.number} is not a whole journal row")
        if line.row is not None:
            rows.append(line.row)
    return rows


def executed_steps(rows: list[dict]):
    """Each executed step's rows: (observation, proposal, attempt, result, next observation),
    where the next observation carries that attempt's id."""
    obs = [r for r in rows if r["event"] == ev.Observation.KIND]
    prop = {r["observation_id"]: r for r in rows if r["event"] == ev.Proposal.KIND}
    att = {r["proposal_id"]: r for r in rows if r["event"] == ev.ActionAttempt.KIND}
    res = {r["attempt_id"]: r for r in rows if r["event"] == ev.ActionResult.KIND}
    for o, nxt in zip(obs, obs[1:]):
        p = prop.get(o["observation_id"])
        a = att.get(p["proposal_id"]) if p else None
        r = res.get(a["attempt_id"]) if a else None
        if r is not None and nxt.get("after_attempt_id") == a["attempt_id"]:
            yield o, p, a, r, nxt


def action_steps(rows: list[dict]) -> list[dict]:
    """One dict of stage times (ms) per executed step (see the module docstring)."""
    out = []
    for o, p, a, r, nxt in executed_steps(rows):
        t = [stamp(x) for x in (o, p, a, r, nxt)]
        out.append(
            {
                "observation_id": o["observation_id"],
                "total": (t[4] - t[0]) * 1000,
                "obs_prop": (t[1] - t[0]) * 1000,
                "prop_att": (t[2] - t[1]) * 1000,
                "att_res": (t[3] - t[2]) * 1000,
                "res_obs": (t[4] - t[3]) * 1000,
                "read_ms": nxt.get("read_ms") or 0.0,
                "request_ms": r.get("request_ms") or 0.0,
            }
        )
    return out


def pct(values: list[float], q: float) -> float:
    """Nearest-rank percentile (q in 0..100)."""
    if not values:
        return float("nan")
    s = sorted(values)
    return s[min(len(s) - 1, max(0, round(q / 100 * len(s) + 0.5) - 1))]


def rate(rows: list[dict]) -> tuple[int, float]:
    """(steps, steps/s): observations over the first-to-last observation window."""
    obs = [stamp(r) for r in rows if r["event"] == ev.Observation.KIND]
    return len(obs), (len(obs) - 1) / (obs[-1] - obs[0]) if len(obs) > 1 else float("nan")


# -- sessions -------------------------------------------------------------------------------
class RssSampler(threading.Thread):
    """Summed RSS of process trees (each root and its descendants), every ``every`` s."""

    def __init__(self, pids: list[int], every: float = 0.2):
        super().__init__(daemon=True)
        self.roots = [psutil.Process(p) for p in pids]
        self.every = every
        self.stop = threading.Event()
        self.peak = 0
        self.peak_parts: dict[str, int] = {}
        self.samples: list[int] = []

    def run(self) -> None:
        while not self.stop.wait(self.every):
            parts: dict[str, int] = {}
            for root in self.roots:
                try:
                    procs = [root, *root.children(recursive=True)]
                except psutil.Error:
                    continue
                for p in procs:
                    try:
                        name = proc_name(p.cmdline())
                        parts[name] = parts.get(name, 0) + p.memory_info().rss
                    except psutil.Error:
                        pass
            total = sum(parts.values())
            if total:
                self.samples.append(total)
            if total > self.peak:
                self.peak, self.peak_parts = total, parts


def proc_name(cmdline: list[str]) -> str:
    if "-m" in cmdline and cmdline.index("-m") + 1 < len(cmdline):
        module = cmdline[cmdline.index("-m") + 1]
        return module.split(".")[-1] if module.startswith("actors.") else module
    return os.path.basename(cmdline[0]) if cmdline else "?"


@dataclasses.dataclass
class Session:
    workdir: str
    proc: subprocess.Popen
    spawned: float
    log: object
    rows: list[dict] = dataclasses.field(default_factory=list)
    code: int | None = None

    @property
    def journal(self) -> str | None:
        found = glob.glob(os.path.join(self.workdir, "capture", "sessions", "*", "events.jsonl"))
        return found[0] if found else None


def start_session(workdir: str, profile: str, steps: int, env: dict | None = None, sets: dict | None = None) -> Session:
    """``supervisor start PROFILE`` as a subprocess, its capture and runtime files in
    ``workdir``; ``sets`` adds ``--set key=value`` pairs (after the bench's own)."""
    os.makedirs(workdir, exist_ok=True)
    sets = {
        "session.stop_on_run_end": "false",
        "session.max_steps": str(steps),
        "capture.root": os.path.join(workdir, "capture"),
        "supervisor.runtime_dir": os.path.join(workdir, "runtime"),
        "supervisor.progress": "off",
        **(sets or {}),
    }
    cmd = [sys.executable, "-m", "supervisor", "start", profile]
    for key, value in sets.items():
        cmd += ["--set", f"{key}={value}"]
    log = open(os.path.join(workdir, "supervisor.out"), "w", encoding="utf-8")
    spawned = time.time()
    proc = subprocess.Popen(cmd, cwd=REPO, stdout=log, stderr=subprocess.STDOUT, env={**os.environ, **(env or {})})
    return Session(workdir, proc, spawned, log)


def finish_session(s: Session, timeout: float) -> Session:
    try:
        s.code = s.proc.wait(timeout)
    except subprocess.TimeoutExpired:
        s.proc.terminate()
        s.code = s.proc.wait(30)
    s.log.close()
    if s.journal is None or s.code != 0:
        with open(os.path.join(s.workdir, "supervisor.out"), encoding="utf-8", errors="replace") as fh:
            tail = fh.read()[-1500:]
        raise RuntimeError(f"the session in {s.workdir} failed (exit {s.code}); its output ends:\n{tail}")
    s.rows = read_rows(s.journal)
    return s


def run_one(workdir: str, profile: str, steps: int, timeout: float, env: dict | None = None):
    s = start_session(workdir, profile, steps, env)
    sampler = RssSampler([s.proc.pid])
    sampler.start()
    try:
        finish_session(s, timeout)
    finally:
        sampler.stop.set()
        sampler.join()
    return s, sampler


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


# -- the report -------------------------------------------------------------------------------
def machine() -> str:
    cpu = "?"
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as fh:
            cpu = next(line.split(":", 1)[1].strip() for line in fh if line.startswith("model name"))
    except (OSError, StopIteration):
        pass
    return (
        f"{os.cpu_count()} vCPU ({cpu}), {psutil.virtual_memory().total / 2**30:.0f} GB RAM, "
        f"Linux {platform.release()}, Python {platform.python_version()}; "
        f"load average at the end {os.getloadavg()[0]:.2f}"
    )


def pooled(rounds_: list[dict], kind: str, key: str) -> list[float]:
    return [x[key] for r in rounds_ for x in r[kind]]


def print_latency(res: list[dict]) -> None:
    ratios = [r["ratio"] for r in res]
    print("\nPer-step latency (an executed step: observation row → the next observation row)")
    print(f"  {'':28s}{'median ms':>10s}{'p99 ms':>9s}{'steps/s':>9s}{'executed steps':>16s}")
    for kind, label, rate_key in (
        ("pipeline", "pipeline (6 processes)", "p_rate"),
        ("baseline", "baseline (1 process)", "b_rate"),
    ):
        t = pooled(res, kind, "total")
        rates = statistics.median(r[rate_key][1] for r in res)
        print(f"  {label:28s}{pct(t, 50):10.2f}{pct(t, 99):9.2f}{rates:9.1f}{len(t):16d}")
    print(
        f"  ratio pipeline/baseline (median step, paired per round): median {statistics.median(ratios):.2f}x, "
        f"rounds {', '.join(f'{x:.2f}' for x in ratios)}  (target ≤ 1.3x)"
    )
    p99 = [pct([x["total"] for x in r["pipeline"]], 99) / pct([x["total"] for x in r["baseline"]], 99) for r in res]
    print(f"  ratio of the p99s, per round: {', '.join(f'{x:.2f}' for x in p99)}")
    print(
        "  steps/s: all steps (waits included; the baseline pauses where the observer does) over "
        "the first-to-last observation window"
    )
    same = [f"{r['same_states']}/{r['p_rate'][0]}" for r in res]
    print(
        f"  baseline replay saw the pipeline's states byte for byte: {', '.join(same)} observations; "
        f"its outcomes {res[-1]['outcomes']}"
    )


def print_stages(res: list[dict]) -> None:
    print("\nStages of an executed step (ms, pooled over the rounds; from recorded_at stamps)")
    print(
        f"  {'stage':12s}{'pipeline med':>13s}{'p99':>8s}{'baseline med':>14s}{'p99':>8s}{'Δ med':>7s}  what lies in it"
    )
    for key, what in STAGES:
        p, b = pooled(res, "pipeline", key), pooled(res, "baseline", key)
        print(
            f"  {key:12s}{pct(p, 50):13.2f}{pct(p, 99):8.2f}{pct(b, 50):14.2f}{pct(b, 99):8.2f}"
            f"{pct(p, 50) - pct(b, 50):7.2f}  {what}"
        )


def print_profiles(summary: list[dict], steps: list[dict]) -> None:
    med = pct([x["total"] for x in steps], 50)
    print(
        f"\nProfiles (cProfile of each actor's main thread; {len(steps)} executed steps, median "
        f"{med:.2f} ms under the profiler). The game serves on threads the profiler does not see: "
        "its cost is in read_ms and request_ms."
    )
    for a in summary:
        if a["actor"] == "game":  # its main thread only waits; the HTTP handlers run on threads
            continue
        print(
            f"  {a['actor']}: main thread {a['wall_s']:.1f} s, waiting {a['wait_s']:.1f} s, "
            f"busy {a['busy_ms_per_step']:.2f} ms per executed step; "
            f"{a['decodes_per_step']:.1f} messages decoded per step"
        )
        print(
            "    cumulative (ours; waits beneath included): "
            + "; ".join(f"{f} {ms:.2f}" for f, ms in a["top_cumulative"])
        )
        print("    own time (waits excluded): " + "; ".join(f"{f} {ms:.2f}" for f, ms in a["top_own"]))
    print(
        "  (ms per executed step; the profiler itself slows every actor, so compare actors, not "
        "these figures with the unprofiled rounds)"
    )


def print_rest(res: list[dict], probe: dict[str, list[float]], conc: list[dict]) -> None:
    ack = probe["record_intent"]
    print(
        f"\nIntent acknowledgement: p50 {pct(ack, 50):.2f} ms, p99 {pct(ack, 99):.2f} ms, max {max(ack):.2f} ms "
        f"over {len(ack)} intents (target p99 < 2 ms)"
    )
    standing = probe["await_intent"]
    print(
        f"  by a standing intent, as the pipeline's steps get it (proposal sent → intent_ack decoded: the "
        f"proposal's rows, the attempt row, one fsync): p50 {pct(standing, 50):.2f} ms, p99 "
        f"{pct(standing, 99):.2f} ms, max {max(standing):.2f} ms over {len(standing)}"
    )
    print(
        "  method: a real recorder process (python -m actors.recorder) started for the bench; the bench "
        "stands in for the supervisor's control endpoint and is the recorder's client over its real "
        "ZeroMQ endpoint. Each probe stores a fresh observation (a state of the session above), records "
        "an executable proposal, then times record_intent from send to the decoded intent_ack: the "
        "action_attempt row and its fsync (the observation file and its directory were fsynced when "
        "stored), both codecs, two socket hops. One request at a time, as the actuator sends them."
    )
    print(
        "  the probe's other round trips, p50 / p99 ms: "
        + "; ".join(
            f"{name} {pct(v, 50):.2f} / {pct(v, 99):.2f} ({what})"
            for name, what in (
                ("record_proposal", "two rows, no fsync: the messaging floor of one round trip"),
                ("store_observation", "the state over the wire, its file and its fsyncs, a row"),
                ("record_result", "a row and its fsync"),
            )
            for v in [probe[name]]
        )
    )
    start = [r["startup_s"] for r in res]
    print(
        f"\nStart-up to the first observation row: {statistics.median(start):.2f} s median "
        f"({', '.join(f'{x:.2f}' for x in start)})"
    )
    peak = max(res, key=lambda r: r["rss_peak"])
    parts = ", ".join(f"{k} {v / 2**20:.0f}" for k, v in sorted(peak["rss_parts"].items()))
    print(
        f"Memory of one session: peak summed RSS {peak['rss_peak'] / 2**20:.0f} MB (median sample "
        f"{statistics.median(r['rss_median'] for r in res) / 2**20:.0f} MB; target < 300 MB); MB at the "
        f"peak: {parts}. RSS counts shared pages once per process."
    )
    if conc:
        print("\nConcurrent sessions (each its own six processes)")
        print(
            f"  {'sessions':>8s}{'steps':>8s}{'steps/s':>9s}{'incl. start-up':>16s}{'median step ms':>16s}"
            f"{'peak RSS MB':>13s}  exits"
        )
        for c in conc:
            print(
                f"  {c['sessions']:8d}{c['steps']:8d}{c['steady_rate']:9.0f}{c['wall_rate']:16.0f}"
                f"{c['median_step_ms']:16.2f}{c['rss_peak'] / 2**20:13.0f}  {c['exits']}"
            )
        print(
            "  steps/s: all sessions' steps over the first observation of any to the last of any; "
            "'incl. start-up' from the first spawn to the last exit"
        )


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


def write_json(path: str, res: list[dict], summary: list[dict], ack: list[float], conc: list[dict]) -> None:
    out = {
        "machine": machine(),
        "rounds": [
            {
                "ratio": r["ratio"],
                "exit": r["exit"],
                "startup_s": r["startup_s"],
                "rss_peak_mb": r["rss_peak"] / 2**20,
                **{
                    f"{kind}_{k}": {"median": pct([x[k] for x in r[kind]], 50), "p99": pct([x[k] for x in r[kind]], 99)}
                    for kind in ("pipeline", "baseline")
                    for k in ("total", *dict(STAGES))
                },
            }
            for r in res
        ],
        "profiles": summary,
        "round_trips_ms": {name: {"p50": pct(v, 50), "p99": pct(v, 99), "n": len(v)} for name, v in ack.items()},
        "concurrency": conc,
    }
    with open(path, "w", encoding="utf-8") as fh:
        json.dump(out, fh, indent=1)


if __name__ == "__main__":
    sys.exit(main())
