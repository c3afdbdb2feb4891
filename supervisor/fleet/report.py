"""``supervisor fleet report``: a table per matrix cell from ``results.jsonl``, and the live line.

The table has one row per cell: sessions, outcomes, steps (total and per session), runs
ended, wins, the win rate with its 95 % Wilson interval (``stats.wilson``), and the mean
session duration; when the fleet's sessions called a model, its tokens, what they cost, the
cost per run ended and per win. A fleet whose sessions used more than one model gets a line
per model too (``model_key``). A totals line closes it. ``supervisor view`` shows the same
aggregates (``group_rows``) per cell, per policy and per model, with the same texts.

Costs are the sums of the known costs (``results.model_totals``): ``$0.0123`` when every call's
cost is known, ``≥ $0.0123`` when some are not (a lower bound), ``unknown`` when none is;
a cost per win with no win is ``—``.
"""

from __future__ import annotations

import os
import re
import time
from typing import Any

from supervisor.capture.modeluse import usd

from . import layout, stats
from .results import model_totals, totals

MODEL_KEYS = ("model", "model.base_url")  # the columns a fleet's models differ by
NO_WINS = "—"

_STEPS = re.compile(rb"^steps (\d+) ", re.M)


def cost_text(amount: float | None, state: str) -> str:
    """``$0.0123``; ``≥ $0.0123`` when some calls' cost is unknown; ``unknown`` when none is known."""
    if state == "unknown" or amount is None:
        return "unknown"
    return ("≥ " if state == "partial" else "") + usd(amount)


def cost_per(amount: float | None, n: int, state: str) -> tuple[float | None, str]:
    """The cost per run (or per win): its value and its text; ``—`` when ``n`` is 0."""
    if not n:
        return None, NO_WINS
    per = None if amount is None or state == "unknown" else amount / n
    return (None if per is None else round(per, 9)), cost_text(per, state)


def tokens_text(m: dict[str, Any]) -> str:
    if m["model_tokens"] is None:
        return "unknown"
    return ("≥ " if not m["model_tokens_complete"] else "") + f"{m['model_tokens']:,}"


def model_figures(rows: list[dict], runs: int, wins: int) -> dict[str, Any]:
    """``results.model_totals`` of ``rows``, with the cost per run ended and per win, and the
    texts a table shows (``cost_text``, ``tokens_text``)."""
    m = model_totals(rows)
    state, cost = m["model_cost_state"], m["model_cost_usd"]
    m["cost_per_run"], m["cost_per_run_text"] = cost_per(cost, runs, state)
    m["cost_per_win"], m["cost_per_win_text"] = cost_per(cost, wins, state)
    m["cost_text"] = cost_text(cost, state)
    m["tokens_text"] = tokens_text(m)
    return m


def uses_models(rows: list[dict]) -> bool:
    """Did any session name a model or call one?"""
    return any(
        r.get("model") is not None or r.get("model_calls") or r.get("model_answers") or r.get("model_errors")
        for r in rows
    )


def model_key(rows: list[dict]) -> str | None:
    """The column that tells the fleet's models apart: ``model`` when its sessions used more
    than one model (a matrix crossing ``model.model``), ``model.base_url`` when they name one
    model but the matrix crosses servers; None with one model."""
    for key in MODEL_KEYS:
        if any(key in r for r in rows) and len({str(r.get(key)) for r in rows}) > 1:
            return key
    return None


def group_rows(
    rows: list[dict], key: str = "cell", floors: dict[str, int | None] | None = None
) -> list[dict[str, Any]]:
    """One aggregate per value of ``key`` (a results column: ``cell``, ``model``, or a matrix
    key such as ``policy.module``), in plan order: sessions, outcomes, steps, runs ended and
    wins with the win rate and its 95 % Wilson interval (runs are the trials), the mean
    session duration, and what the model calls spent (``model_figures``: tokens, cost, cost
    per run and per win); with ``floors`` (session_id -> the highest floor it reached) the
    mean floor and its standard error."""
    groups: dict[str, list[dict]] = {}
    for r in sorted(rows, key=lambda r: r["index"]):
        groups.setdefault(str(r.get(key)), []).append(r)
    out = []
    for value, rs in groups.items():
        t = totals(rs)
        durations = [r["duration_s"] for r in rs if r.get("duration_s") is not None]
        interval = stats.wilson(t["wins"], t["runs"])
        row = {
            key: value,
            "sessions": len(rs),
            "ok": t["ok"],
            "failed": t["failed"] + t["timed_out"],
            "needs_review": t["needs_review"],
            "stopped": t["stopped"] + t["not_run"],
            "steps": t["steps"],
            "steps_per_session": round(t["steps"] / len(rs), 1),
            "runs": t["runs"],
            "wins": t["wins"],
            "win_rate": round(t["wins"] / t["runs"], 3) if t["runs"] else None,
            "win_rate_ci95": [round(interval[0], 3), round(interval[1], 3)] if interval else None,
            "runs_inferred": sum(r.get("runs_inferred") or 0 for r in rs),
            "mean_duration_s": round(sum(durations) / len(durations), 2) if durations else None,
            "session_ids": [r.get("session_id") for r in rs],
            **model_figures(rs, t["runs"], t["wins"]),
            **score_figures(rs),
            **progress_figures(rs),
        }
        if floors is not None:
            xs = [floors[r["session_id"]] for r in rs if floors.get(r.get("session_id")) is not None]
            mean, se = stats.mean_se(xs)
            row.update(
                floor_mean=None if mean is None else round(mean, 2),
                floor_se=None if se is None else round(se, 2),
                floor_n=len(xs),
            )
        out.append(row)
    return out


def score_figures(rows: list[dict]) -> dict[str, Any]:
    """A Game Boy score (``emulator.score``, docs/emulator.md) over ``rows``: the sessions that
    read one, the mean of their final scores, the highest best score and the sessions whose
    game was over; the figures are None when no session read a score."""
    finals = [r["score_final"] for r in rows if r.get("score_final") is not None]
    bests = [r["score_best"] for r in rows if r.get("score_best") is not None]
    return {
        "scored_sessions": sum(1 for r in rows if r.get("score_best") is not None),
        "score_final_mean": round(sum(finals) / len(finals), 2) if finals else None,
        "score_best": max(bests) if bests else None,
        "game_over_sessions": sum(1 for r in rows if r.get("game_over_frame") is not None),
    }


def progress_figures(rows: list[dict]) -> dict[str, Any]:
    """A Slay the Spire 2 run's score over ``rows`` (``supervisor.capture.runscore``): the
    progress score's sessions, mean, median and 95 % t interval of the mean, the mean floor
    reached, and the bosses and elites beaten; None when no session showed a run's progress."""
    xs = [r["progress_score"] for r in rows if isinstance(r.get("progress_score"), (int, float))]
    summary = stats.mean_median_interval(xs)
    floors = [r["floor"] for r in rows if isinstance(r.get("floor"), int) and r.get("progress_score") is not None]
    ci = summary and summary["interval"]
    return {
        "progress_n": len(xs),
        "progress_mean": None if not summary else round(summary["mean"], 4),
        "progress_median": None if not summary else round(summary["median"], 4),
        "progress_ci95": [round(ci[0], 4), round(ci[1], 4)] if ci else None,
        "progress_floor_mean": round(sum(floors) / len(floors), 2) if floors else None,
        "progress_bosses": sum(r.get("bosses") or 0 for r in rows),
        "progress_elites": sum(r.get("elites") or 0 for r in rows),
        "progress_unfinished": sum(1 for r in rows if r.get("scored_runs") == "unfinished"),
    }


def progress_lines(cells: list[dict], width: int) -> list[str]:
    """The progress-score table under the cells' table, when any session showed progress."""
    if not any(c["progress_n"] for c in cells):
        return []
    lines = [
        "",
        f"{'cell':<{width}} {'scored':>6} {'score mean':>10} {'median':>7} {'95% CI':>13} "
        f"{'floor':>6} {'bosses':>6} {'elites':>6}",
    ]
    for c in cells:
        mean = "-" if c["progress_mean"] is None else f"{c['progress_mean']:.3f}"
        median = "-" if c["progress_median"] is None else f"{c['progress_median']:.3f}"
        ci = "-" if not c["progress_ci95"] else f"{c['progress_ci95'][0]:.3f}-{c['progress_ci95'][1]:.3f}"
        floor = "-" if c["progress_floor_mean"] is None else f"{c['progress_floor_mean']:.1f}"
        lines.append(
            f"{c['cell']:<{width}} {c['progress_n']:>6} {mean:>10} {median:>7} {ci:>13} "
            f"{floor:>6} {c['progress_bosses']:>6} {c['progress_elites']:>6}"
        )
    if any(c["progress_unfinished"] for c in cells):
        lines.append(
            f"({sum(c['progress_unfinished'] for c in cells)} session(s) scored by a run still "
            "being played at their end: scored_runs = unfinished)"
        )
    return lines


def score_lines(cells: list[dict], width: int) -> list[str]:
    """The score table under the cells' table, when any session read a score."""
    if not any(c["scored_sessions"] for c in cells):
        return []
    lines = ["", f"{'cell':<{width}} {'scored':>6} {'mean final':>10} {'best':>8} {'game over':>9}"]
    for c in cells:
        m = c["score_final_mean"]
        mean = "-" if m is None else str(int(m)) if m == int(m) else f"{m:.2f}"
        best = "-" if c["score_best"] is None else str(c["score_best"])
        lines.append(
            f"{c['cell']:<{width}} {c['scored_sessions']:>6} {mean:>10} {best:>8} {c['game_over_sessions']:>9}"
        )
    return lines


def cell_rows(rows: list[dict]) -> list[dict[str, Any]]:
    """One aggregate per cell, in plan order (``group_rows`` by ``cell``)."""
    return group_rows(rows, "cell")


def model_groups(rows: list[dict]) -> tuple[str | None, list[dict[str, Any]] | None]:
    """The column the fleet's models differ by and one aggregate per model (``group_rows``), or
    (None, None) when its sessions used one model."""
    key = model_key(rows)
    return key, (group_rows(rows, key) if key else None)


def _rate(c: dict) -> tuple[str, str]:
    rate = "-" if c["win_rate"] is None else f"{100 * c['win_rate']:.0f}%"
    ci = "-" if c["win_rate_ci95"] is None else f"{100 * c['win_rate_ci95'][0]:.0f}-{100 * c['win_rate_ci95'][1]:.0f}%"
    return rate, ci


_MONEY = f" {'tokens':>11} {'cost':>10} {'cost/run':>10} {'cost/win':>10}"


def _money(c: dict) -> str:
    return f" {c['tokens_text']:>11} {c['cost_text']:>10} {c['cost_per_run_text']:>10} {c['cost_per_win_text']:>10}"


def table(rows: list[dict]) -> str:
    cells = cell_rows(rows)
    money = uses_models(rows)
    width = max([len("cell")] + [len(c["cell"]) for c in cells])
    head = (
        f"{'cell':<{width}} {'sess':>5} {'ok':>4} {'fail':>5} {'review':>7} {'stop':>5} "
        f"{'steps':>8} {'steps/sess':>10} {'runs':>5} {'wins':>5} {'win%':>6} {'95% CI':>11} {'mean s':>7}"
        + (_MONEY if money else "")
    )
    lines = [head]
    for c in cells:
        rate, ci = _rate(c)
        mean = "-" if c["mean_duration_s"] is None else f"{c['mean_duration_s']:.1f}"
        lines.append(
            f"{c['cell']:<{width}} {c['sessions']:>5} {c['ok']:>4} {c['failed']:>5} "
            f"{c['needs_review']:>7} {c['stopped']:>5} {c['steps']:>8} "
            f"{c['steps_per_session']:>10} {c['runs']:>5} {c['wins']:>5} {rate:>6} {ci:>11} {mean:>7}"
            + (_money(c) if money else "")
        )
    lines += progress_lines(cells, width)
    lines += score_lines(cells, width)
    key, models = model_groups(rows)
    if models:
        mwidth = max([len(key)] + [len(str(m[key])) for m in models])
        lines += ["", f"{key:<{mwidth}} {'sess':>5} {'runs':>5} {'wins':>5} {'win%':>6} {'95% CI':>11}" + _MONEY]
        for m in models:
            rate, ci = _rate(m)
            lines.append(
                f"{m[key]!s:<{mwidth}} {m['sessions']:>5} {m['runs']:>5} {m['wins']:>5} {rate:>6} {ci:>11}" + _money(m)
            )
        lines.append("")
    t = totals(rows)
    lines.append(
        f"{len(rows)} sessions: {t['ok']} ok, {t['failed']} failed, {t['timed_out']} timed out, "
        f"{t['needs_review']} need review, {t['stopped']} stopped, {t['not_run']} not run; "
        f"{t['steps']} steps, {t['runs']} runs, {t['wins']} wins"
    )
    if money:
        m = model_figures(rows, t["runs"], t["wins"])
        lines.append(
            f"model: {m['tokens_text']} tokens"
            + (f" ({m['model_cached_tokens']:,} cached)" if m["model_cached_tokens"] else "")
            + f", cost {m['cost_text']}, {m['cost_per_run_text']} per run, {m['cost_per_win_text']} per win"
            + (
                f"; {m['model_cost_unknown_calls']} of {m['model_calls']} calls without a known cost"
                " (results.jsonl: model_cost_unknown_calls)"
                if m["model_cost_unknown_calls"]
                else ""
            )
        )
    flagged = [r for r in rows if r.get("model_errors")]
    if flagged:
        silent = [r for r in flagged if not r.get("model_answers")]
        lines.append(
            f"model errors: {sum(r['model_errors'] for r in flagged)} in {len(flagged)} sessions"
            + (
                f"; {len(silent)} never got an answer (slots {', '.join(r['slot'] for r in silent[:8])}"
                + (" ..." if len(silent) > 8 else "")
                + ")"
                if silent
                else ""
            )
        )
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


def live_line(
    name: str, running: int, queued: int, done: int, failed: int, total: int, steps: int, started: float
) -> str:
    elapsed = time.monotonic() - started
    rate = steps / elapsed if elapsed > 0 else 0.0
    waiting = f"  queued {queued}" if queued else ""
    return (
        f"fleet {name}: running {running}{waiting}  done {done}/{total}  failed {failed}  "
        f"steps {steps} ({rate:.1f} steps/s)  elapsed {elapsed:.0f}s"
    )
