"""The printed report and the JSON figures of ``bench/pipeline.py``: the machine, the per-step
latency of the pipeline against the baseline, the stages of a step, each actor's profile, the
intent acknowledgement, start-up, memory and the concurrent sessions."""

from __future__ import annotations

import json
import os
import platform
import statistics

import psutil
from pipeline_steps import STAGES, pct


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
