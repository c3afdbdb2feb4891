"""A fleet on the page: its matrix, the aggregates per cell and per policy, the sessions to
look at, and comparisons of two fleets or of two groups of one fleet.

The aggregates are ``supervisor.fleet.report.group_rows`` over the fleet's ``results.jsonl``
(what ``supervisor fleet report`` prints: per cell, per policy and per model, with the model's
tokens, cost, cost per run and per win), given the figure a results row lacks: each session's
highest floor (read from its observations by the session's track). A row written before
results carried the model's figures gets them from the session's track (the same
``CapturedSession``). The statistics are ``supervisor.fleet.stats``.

A comparison of two arms (two values of one matrix key, or two fleets) also carries
``supervisor.fleet.compare.compare``'s answer (``arms``): paired by seed when both arms played
the same seeds (``compare.pairing``), with each pair listed (``pairs``: both sessions, their
wins, scores and floors, and the side-by-side page of their first runs), else why not. Two
fleets are two arms of one set of rows: each row gets the fleet it came from (``FLEET_ARM``)
and the seeds its fleet's ``set`` fixed, so the pairing rule is ``compare.pairing``'s.
"""

from __future__ import annotations

import itertools
from typing import Any

from supervisor.fleet import compare as arms
from supervisor.fleet import stats
from supervisor.fleet.report import group_rows, model_figures, model_key
from supervisor.fleet.results import OUTCOMES

from . import metrics
from .catalog import Catalog, Fleet, public_verdict
from .sessions import shown_path
from .track import Track

FLAGGED = ("failed", "needs_review", "timed_out")
POLICY_KEY = "policy.module"
SESSION_SCORES = (
    "progress_score",
    "bosses",
    "elites",
    "hp_end",
    "scored_runs",
    "seeded_by",
    "score_final",
    "score_best",
    "milestones_reached",
)
FLEET_ARM = "fleet"  # the arm column when two fleets are compared
SEED_SET_KEYS = tuple(arms.SEED_KEYS.values())  # seeds a fleet file may fix for every session


def floor_reached(track: Track) -> tuple[int | None, bool]:
    """The highest floor the session's observations show, and whether every one was read."""
    col = track.figs[metrics.NAMES.index("floor")]
    with track.lock:
        best = max(col[: track.figures_read], default=-1)
        complete = track.figures_read >= track.steps
    ends = [r["floor"] for r in track.facts.runs if r.get("floor") is not None]
    best = max([best, *ends])
    return (best if best >= 0 else None), complete


def with_model_figures(rows: list[dict], tracks: dict[str, Track]) -> list[dict]:
    """The rows, each with the model's figures: a row written before results carried them
    (no ``model_calls``) takes them from its session's track."""
    out = []
    for r in rows:
        t = tracks.get(r.get("session_id"))
        if "model_calls" not in r and t is not None:
            with t.lock:
                f = t.facts.facts()
            r = {**r, **{k: f[k] for k in f if k.startswith("model") or k == "character"}}
        out.append(r)
    return out


def money(row: dict) -> dict[str, Any]:
    """One session's tokens and cost as the tables show them (``report.model_figures``)."""
    m = model_figures([row], row.get("runs") or 0, row.get("wins") or 0)
    return {
        "tokens": m["model_tokens"],
        "tokens_text": m["tokens_text"],
        "cost_usd": m["model_cost_usd"],
        "cost_text": m["cost_text"],
        "cost_unknown_calls": m["model_cost_unknown_calls"],
        "calls": m["model_calls"],
    }


def _tracks_by_id(catalog: Catalog, fleet: Fleet) -> dict[str, Track]:
    return {t.id: t for t in catalog.fleet_tracks(fleet.key)}


def _floors(catalog: Catalog, fleet: Fleet, rows: list[dict]) -> tuple[dict, int]:
    """Each finished session's highest floor, and how many are still being read."""
    tracks = _tracks_by_id(catalog, fleet)
    floors, pending = {}, 0
    for r in rows:
        t = tracks.get(r.get("session_id"))
        if t is not None:
            floors[t.id], complete = floor_reached(t)
            pending += not complete
    return floors, pending


def group_keys(info: dict) -> list[str]:
    matrix = info.get("matrix") if isinstance(info.get("matrix"), dict) else {}
    return list(matrix)


def fleet_page(catalog: Catalog, fleet: Fleet) -> dict[str, Any]:
    info = fleet.info()
    tracks = _tracks_by_id(catalog, fleet)
    rows = with_model_figures(fleet.rows(), tracks)
    floors, pending = _floors(catalog, fleet, rows)
    keys = group_keys(info)
    policy_key = POLICY_KEY if POLICY_KEY in keys else None
    policy = (info.get("set") or {}).get(POLICY_KEY) if isinstance(info.get("set"), dict) else None
    flagged = []
    sessions = []
    for r in sorted(rows, key=lambda r: r["index"]):
        t = tracks.get(r.get("session_id"))
        verdict = public_verdict(catalog.verdict(t.key)) if t else None
        why = []
        if r.get("outcome") in FLAGGED:
            why.append(f"{r['outcome']}: {r.get('reason') or r.get('detail') or 'no reason recorded'}")
        if verdict and verdict.get("verdict") in ("damaged", "incomplete"):
            first = verdict.get("first") or {}
            why.append(f"evidence {verdict['verdict']}: {first.get('where', '')} {first.get('message', '')}".strip())
        entry = {
            "index": r["index"],
            "slot": r.get("slot"),
            "cell": r.get("cell"),
            "repeat": r.get("repeat"),
            "outcome": r.get("outcome"),
            "reason": r.get("reason"),
            "steps": r.get("steps"),
            "runs": r.get("runs"),
            "wins": r.get("wins"),
            "session": t.key if t else None,
            "floor": floors.get(r.get("session_id")),
            "model": r.get("model"),
            "character": r.get("character"),
            **{k: r.get(k) for k in SESSION_SCORES},
            **money(r),
            "verdict": (verdict or {}).get("verdict"),
        }
        sessions.append(entry)
        if why:
            flagged.append({**entry, "why": why})
    done = {r.get("session_id") for r in rows}
    running = [{"session": t.key, "steps": t.steps} for t in tracks.values() if t.id not in done]
    by_model = model_key(rows)
    prices = info.get("prices") if isinstance(info.get("prices"), dict) else {}
    return {
        "key": fleet.key,
        "name": info.get("name") or fleet.name,
        "state": info.get("state"),
        "info": {
            **{
                k: info.get(k)
                for k in ("description", "profile", "set", "matrix", "sessions", "backend", "concurrency", "error")
            },
            "profile": shown_path(info.get("profile")),
        },
        "group_keys": keys,
        "group_values": {k: group_values(rows, k) for k in keys},
        "policy_key": policy_key,
        "policy": policy,
        "cells": group_rows(rows, "cell", floors),
        "policies": group_rows(rows, policy_key, floors) if policy_key else None,
        "model_key": by_model,
        "models": group_rows(rows, by_model, floors) if by_model else None,
        "uses_models": any(s["calls"] or s["model"] for s in sessions),
        "prices": prices,
        "sessions": sessions,
        "flagged": flagged,
        "running": running,
        "outcomes": OUTCOMES,
        "floors_pending": pending,
    }


# -- comparisons ------------------------------------------------------------------------------


def _select(rows: list[dict], column: str | None, value: str | None) -> list[dict]:
    return [r for r in rows if column is None or str(r.get(column)) == value]


def _summary(rows: list[dict], floors: dict, label: str) -> dict:
    runs = sum(r.get("runs") or 0 for r in rows)
    wins = sum(r.get("wins") or 0 for r in rows)
    fl = [floors[r["session_id"]] for r in rows if floors.get(r.get("session_id")) is not None]
    steps = [r["steps"] for r in rows if isinstance(r.get("steps"), int)]
    mean, se = stats.mean_se(fl)
    smean, sse = stats.mean_se(steps)
    ci = stats.wilson(wins, runs)
    return {
        "label": label,
        "sessions": len(rows),
        "runs": runs,
        "wins": wins,
        "win_rate": wins / runs if runs else None,
        "win_rate_ci95": ci,
        "floor_mean": mean,
        "floor_se": se,
        "floor_n": len(fl),
        "floors": fl,
        "steps_mean": smean,
        "steps_se": sse,
        "steps": steps,
    }


def compare(a: tuple[list[dict], dict, str], b: tuple[list[dict], dict, str]) -> dict[str, Any]:
    """Win rate (Fisher's exact test, Newcombe's interval of the difference), mean floor and
    steps per session (Welch's t-test) of side ``a`` against side ``b``."""
    sa, sb = _summary(a[0], a[1], a[2]), _summary(b[0], b[1], b[2])
    metrics_out = []
    p = stats.fisher_exact(sa["wins"], sa["runs"], sb["wins"], sb["runs"])
    diff = (sa["win_rate"] - sb["win_rate"]) if sa["win_rate"] is not None and sb["win_rate"] is not None else None
    metrics_out.append(
        {
            "metric": "win rate (per run)",
            "a": sa["win_rate"],
            "b": sb["win_rate"],
            "difference": diff,
            "interval": stats.newcombe(sa["wins"], sa["runs"], sb["wins"], sb["runs"]),
            "test": "Fisher's exact test",
            "p": p,
            "sentence": stats.verdict(p, sa["runs"], sb["runs"], "win rate", sa["label"], sb["label"], (diff or 0) > 0),
        }
    )
    for name, key in (("mean floor reached (per session)", "floors"), ("steps per session", "steps")):
        w = stats.welch(sa[key], sb[key])
        higher = w is not None and w["difference"] > 0
        metrics_out.append(
            {
                "metric": name,
                "a": stats.mean_se(sa[key])[0],
                "b": stats.mean_se(sb[key])[0],
                "difference": w["difference"] if w else None,
                "interval": w["interval"] if w else None,
                "test": "Welch's t-test",
                "p": w["p"] if w else None,
                "sentence": stats.verdict(
                    w["p"] if w else None,
                    len(sa[key]),
                    len(sb[key]),
                    name.split(" (")[0],
                    sa["label"],
                    sb["label"],
                    higher,
                ),
            }
        )
    for s in (sa, sb):
        s.pop("floors"), s.pop("steps")
    return {"a": sa, "b": sb, "metrics": metrics_out}


def _pair_side(row: dict, tracks: dict[str, Track]) -> dict[str, Any]:
    t = tracks.get(row.get("session_id"))
    return {
        "session": t.key if t else None,
        "session_id": row.get("session_id"),
        "slot": row.get("slot"),
        "runs": row.get("runs"),
        "wins": row.get("wins"),
        "won": bool(row.get("wins")),
        **{k: row.get(k) for k in ("progress_score", "floor", "score_final", "scored_runs")},
    }


def paired_arms(
    rows: list[dict], column: str, va: str, vb: str, matrix_keys: list[str], tracks: dict[str, Track]
) -> dict[str, Any]:
    """``compare.compare`` of arm ``va`` against ``vb`` with the pairs it paired, each with both
    sessions (``compare.pairing``). ``compare.CompareError`` when an arm has no session or run."""
    result = arms.compare(rows, column, va, vb, matrix_keys)
    pairs = []
    if result["paired"]:
        found, _why = arms.pairing(
            [r for r in rows if str(r.get(column)) == va],
            [r for r in rows if str(r.get(column)) == vb],
            column,
            matrix_keys,
        )
        others = [k for k in matrix_keys if k != column]
        for x, y in sorted(found, key=lambda p: p[0].get("index", 0)):
            pairs.append(
                {
                    "keys": {k: x.get(k) for k in others},
                    "repeat": x.get("repeat"),
                    "a": _pair_side(x, tracks),
                    "b": _pair_side(y, tracks),
                }
            )
    return {**result, "pair_list": pairs}


def compare_fleets(catalog: Catalog, fa: Fleet, fb: Fleet) -> dict[str, Any]:
    ra, rb = fa.rows(), fb.rows()
    floors_a, floors_b = _floors(catalog, fa, ra)[0], _floors(catalog, fb, rb)[0]
    out = compare((ra, floors_a, fa.name), (rb, floors_b, fb.name))
    rows, keys = [], []
    for f, rs in ((fa, ra), (fb, rb)):
        info = f.info()
        fixed = info.get("set") if isinstance(info.get("set"), dict) else {}
        for k in [*group_keys(info), *(k for k in SEED_SET_KEYS if k in fixed)]:
            if k not in keys:
                keys.append(k)
        rows += [{**{k: fixed[k] for k in SEED_SET_KEYS if k in fixed}, **r, FLEET_ARM: f.key} for r in rs]
    tracks = {**_tracks_by_id(catalog, fa), **_tracks_by_id(catalog, fb)}
    out.update(
        kind="fleets", fleet_a=fa.key, fleet_b=fb.key, arms=paired_arms(rows, FLEET_ARM, fa.key, fb.key, keys, tracks)
    )
    return out


def compare_groups(catalog: Catalog, fleet: Fleet, column: str, va: str, vb: str) -> dict[str, Any]:
    rows = fleet.rows()
    floors = _floors(catalog, fleet, rows)[0]
    out = compare(
        (_select(rows, column, va), floors, f"{column}={va}"), (_select(rows, column, vb), floors, f"{column}={vb}")
    )
    out.update(
        kind="groups",
        fleet=fleet.key,
        column=column,
        value_a=va,
        value_b=vb,
        arms=paired_arms(rows, column, va, vb, group_keys(fleet.info()), _tracks_by_id(catalog, fleet)),
    )
    return out


def group_values(rows: list[dict], column: str) -> list[str]:
    seen: list[str] = []
    for r in rows:
        v = str(r.get(column))
        if v not in seen:
            seen.append(v)
    return seen


def all_group_pairs(fleet: Fleet) -> list[tuple[str, str, str]]:
    """(column, a, b) for every matrix key and pair of its values (what a bundle precomputes)."""
    out, rows = [], fleet.rows()
    for column in group_keys(fleet.info()):
        for va, vb in itertools.combinations(group_values(rows, column), 2):
            out.append((column, va, vb))
    return out
