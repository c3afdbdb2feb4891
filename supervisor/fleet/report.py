"""``supervisor fleet report``: a table per matrix cell from ``results.jsonl``, and the live line.

The table has one row per cell: sessions, outcomes, steps (total and per session), runs
ended, wins, the win rate with its 95 % Wilson interval (``stats.wilson``), and the mean
session duration; a totals line closes it. ``supervisor view`` shows the same aggregates
(``group_rows``) per cell and per policy.
"""
from __future__ import annotations

import os
import re
import time
from typing import Any

from . import layout, stats
from .results import totals

_STEPS = re.compile(rb"^steps (\d+) ", re.M)


def group_rows(rows: list[dict], key: str = "cell", floors: dict[str, int | None] | None = None,
               tokens: dict[str, int | None] | None = None) -> list[dict[str, Any]]:
    """One aggregate per value of ``key`` (a results column: ``cell``, or a matrix key such as
    ``policy.module``), in plan order: sessions, outcomes, steps, runs ended and wins with the
    win rate and its 95 % Wilson interval (runs are the trials), the mean session duration;
    with ``floors`` (session_id -> the highest floor it reached) the mean floor and its
    standard error, with ``tokens`` (session_id -> model tokens) the tokens spent."""
    groups: dict[str, list[dict]] = {}
    for r in sorted(rows, key=lambda r: r["index"]):
        groups.setdefault(str(r.get(key)), []).append(r)
    out = []
    for value, rs in groups.items():
        t = totals(rs)
        durations = [r["duration_s"] for r in rs if r.get("duration_s") is not None]
        interval = stats.wilson(t["wins"], t["runs"])
        row = {key: value, "sessions": len(rs), "ok": t["ok"],
               "failed": t["failed"] + t["timed_out"], "needs_review": t["needs_review"],
               "stopped": t["stopped"] + t["not_run"], "steps": t["steps"],
               "steps_per_session": round(t["steps"] / len(rs), 1), "runs": t["runs"],
               "wins": t["wins"], "win_rate": round(t["wins"] / t["runs"], 3) if t["runs"] else None,
               "win_rate_ci95": [round(interval[0], 3), round(interval[1], 3)] if interval else None,
               "runs_inferred": sum(r.get("runs_inferred") or 0 for r in rs),
               "mean_duration_s": round(sum(durations) / len(durations), 2) if durations else None,
               "session_ids": [r.get("session_id") for r in rs]}
        if floors is not None:
            xs = [floors[r["session_id"]] for r in rs if floors.get(r.get("session_id")) is not None]
            mean, se = stats.mean_se(xs)
            row.update(floor_mean=None if mean is None else round(mean, 2),
                       floor_se=None if se is None else round(se, 2), floor_n=len(xs))
        if tokens is not None:
            known = [tokens[r["session_id"]] for r in rs if tokens.get(r.get("session_id")) is not None]
            row["model_tokens"] = sum(known) if known else None
        out.append(row)
    return out


def cell_rows(rows: list[dict]) -> list[dict[str, Any]]:
    """One aggregate per cell, in plan order (``group_rows`` by ``cell``)."""
    return group_rows(rows, "cell")


def table(rows: list[dict]) -> str:
    cells = cell_rows(rows)
    width = max([len("cell")] + [len(c["cell"]) for c in cells])
    head = (f"{'cell':<{width}} {'sess':>5} {'ok':>4} {'fail':>5} {'review':>7} {'stop':>5} "
            f"{'steps':>8} {'steps/sess':>10} {'runs':>5} {'wins':>5} {'win%':>6} {'95% CI':>11} {'mean s':>7}")
    lines = [head]
    for c in cells:
        rate = "-" if c["win_rate"] is None else f"{100 * c['win_rate']:.0f}%"
        ci = "-" if c["win_rate_ci95"] is None else f"{100 * c['win_rate_ci95'][0]:.0f}-{100 * c['win_rate_ci95'][1]:.0f}%"
        mean = "-" if c["mean_duration_s"] is None else f"{c['mean_duration_s']:.1f}"
        lines.append(f"{c['cell']:<{width}} {c['sessions']:>5} {c['ok']:>4} {c['failed']:>5} "
                     f"{c['needs_review']:>7} {c['stopped']:>5} {c['steps']:>8} "
                     f"{c['steps_per_session']:>10} {c['runs']:>5} {c['wins']:>5} {rate:>6} {ci:>11} {mean:>7}")
    t = totals(rows)
    lines.append(f"{len(rows)} sessions: {t['ok']} ok, {t['failed']} failed, {t['timed_out']} timed out, "
                 f"{t['needs_review']} need review, {t['stopped']} stopped, {t['not_run']} not run; "
                 f"{t['steps']} steps, {t['runs']} runs, {t['wins']} wins")
    flagged = [r for r in rows if r.get("model_errors")]
    if flagged:
        silent = [r for r in flagged if not r.get("model_answers")]
        lines.append(f"model errors: {sum(r['model_errors'] for r in flagged)} in {len(flagged)} sessions"
                     + (f"; {len(silent)} never got an answer (slots {', '.join(r['slot'] for r in silent[:8])}"
                        + (" ..." if len(silent) > 8 else "") + ")" if silent else ""))
    return "\n".join(lines)


def running_steps(root: str, slot: str) -> int:
    """The steps a running session last reported (its plain progress line, every 5 s)."""
    path = layout.log_path(os.path.join(root, slot))
    try:
        with open(path, "rb") as fh:
            fh.seek(max(0, os.path.getsize(path) - 4096))
            found = _STEPS.findall(fh.read())
    except OSError:
        return 0
    return int(found[-1]) if found else 0


def live_line(name: str, running: int, queued: int, done: int, failed: int, total: int,
              steps: int, started: float) -> str:
    elapsed = time.monotonic() - started
    rate = steps / elapsed if elapsed > 0 else 0.0
    waiting = f"  queued {queued}" if queued else ""
    return (f"fleet {name}: running {running}{waiting}  done {done}/{total}  failed {failed}  "
            f"steps {steps} ({rate:.1f} steps/s)  elapsed {elapsed:.0f}s")
