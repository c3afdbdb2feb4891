"""Comparing two arms of a fleet: paired by seed when both played the same seeds, else unpaired.

    compare(rows, arm_key, a, b, matrix_keys) -> dict

An **arm** is the sessions whose ``arm_key`` column (a matrix key such as ``model.model`` or
``policy.module``) has one value. Two arms are **paired** when every session of one has exactly
one partner in the other that played the same seed: the same values of every other matrix key
(the seed among them) and the same ``repeat``, and both runs started from that seed
(``seeded_by``: the built-in game from ``game.seed``, an emulator from its cartridge, the real
game only when the policy's ``run_seed`` was applied to every run). Then:

* wins: the exact McNemar test on the discordant pairs (``stats.mcnemar_exact``);
* the progress score (``progress_score``, or a Game Boy session's ``score_final``) and the
  floor: Wilcoxon's signed-rank test (``stats.wilcoxon_signed_rank``) and the 95 % Student t
  interval of the mean paired difference (``stats.paired_interval``).

A session counts as won when it won a run; its score is its runs' mean (one run per session is
what a fleet with ``session.stop_on_run_end`` plays). When the arms cannot be paired, the result
says why (``why_unpaired``) and the tests are the unpaired ones: Fisher's exact test on runs and
wins, Welch's t-test on the scores and floors (``stats``). The unpaired figures are always given
too, so a page can show both.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from . import stats

SCORES = (("progress score", "progress_score"), ("floor", "floor"), ("Game Boy score", "score_final"))
#: the key that set a session's seed, by its ``seeded_by``: arms that differ by it never pair
SEED_KEYS = {"game.seed": "game.seed", "run_seed": "policy.settings.run_seed"}


class CompareError(ValueError):
    """Arms that cannot be compared (no such value, no runs); the message says which."""


def arm_values(rows: Sequence[dict], arm_key: str) -> list[str]:
    """The values ``arm_key`` takes in ``rows``, in plan order."""
    seen: dict[str, None] = {}
    for r in sorted(rows, key=lambda r: r.get("index", 0)):
        seen.setdefault(str(r.get(arm_key)), None)
    return list(seen)


def _won(row: dict) -> bool:
    return bool(row.get("wins"))


def _number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def pairing(
    a_rows: Sequence[dict], b_rows: Sequence[dict], arm_key: str, matrix_keys: Sequence[str]
) -> tuple[list[tuple[dict, dict]], str | None]:
    """The pairs of sessions that played the same seed, or ([], why they cannot be paired)."""
    unseeded = [r for r in (*a_rows, *b_rows) if not r.get("seeded_by")]
    if unseeded:
        r = unseeded[0]
        return [], (
            f"{len(unseeded)} session(s) did not start from a known seed (e.g. session "
            f"{r.get('session_id') or r.get('slot')}: the real game without run_seed applied)"
        )
    seed_keys = {SEED_KEYS[r["seeded_by"]] for r in (*a_rows, *b_rows) if r.get("seeded_by") in SEED_KEYS}
    if arm_key in seed_keys:
        return [], f"the arms differ by their seed ({arm_key}): sessions on different seeds do not pair"
    others = [k for k in matrix_keys if k != arm_key]

    def key(r: dict) -> tuple:
        return tuple(str(r.get(k)) for k in others) + (r.get("repeat"),)

    left: dict[tuple, dict] = {}
    for r in a_rows:
        if key(r) in left:
            return [], f"two sessions of one arm share {dict(zip(others, key(r)))}"
        left[key(r)] = r
    right = {key(r): r for r in b_rows}
    missing = sorted(set(left) ^ set(right), key=str)
    if missing:
        k = missing[0]
        side = "first" if k in left else "second"
        what = ", ".join(f"{n}={v}" for n, v in zip([*others, "repeat"], k))
        return [], f"unequal seeds: {len(missing)} session(s) have no partner (the {side} arm's {what})"
    return [(left[k], right[k]) for k in left], None


def _unpaired(a: Sequence[dict], b: Sequence[dict], la: str, lb: str) -> dict[str, Any]:
    ra, wa = sum(r.get("runs") or 0 for r in a), sum(r.get("wins") or 0 for r in a)
    rb, wb = sum(r.get("runs") or 0 for r in b), sum(r.get("wins") or 0 for r in b)
    p = stats.fisher_exact(wa, ra, wb, rb)
    out: dict[str, Any] = {
        "wins": {
            "test": "Fisher's exact test",
            "a": [wa, ra],
            "b": [wb, rb],
            "p": p,
            "interval": stats.newcombe(wa, ra, wb, rb),
            "interval_of": "difference of win rates",
            "sentence": stats.verdict(p, ra, rb, "win rate", la, lb, (wa / ra if ra else 0) > (wb / rb if rb else 0)),
        },
        "metrics": [],
    }
    for name, col in SCORES:
        xs = [r[col] for r in a if _number(r.get(col))]
        ys = [r[col] for r in b if _number(r.get(col))]
        if not xs and not ys:
            continue
        w = stats.welch(xs, ys)
        out["metrics"].append(
            {
                "metric": name,
                "column": col,
                "test": "Welch's t-test",
                "n": [len(xs), len(ys)],
                "a": stats.mean_median_interval(xs),
                "b": stats.mean_median_interval(ys),
                "difference": w["difference"] if w else None,
                "interval": w["interval"] if w else None,
                "p": w["p"] if w else None,
                "sentence": stats.verdict(
                    w["p"] if w else None, len(xs), len(ys), name, la, lb, bool(w and w["difference"] > 0)
                ),
            }
        )
    return out


def _paired(pairs: list[tuple[dict, dict]], la: str, lb: str) -> dict[str, Any]:
    b = sum(1 for x, y in pairs if _won(x) and not _won(y))
    c = sum(1 for x, y in pairs if _won(y) and not _won(x))
    p = stats.mcnemar_exact(b, c)
    n = len(pairs)
    out: dict[str, Any] = {
        "wins": {
            "test": "exact McNemar test",
            "pairs": n,
            "a_only": b,
            "b_only": c,
            "both": sum(1 for x, y in pairs if _won(x) and _won(y)),
            "p": p,
            "sentence": _paired_sentence(
                p, n, "win rate", la, lb, b > c, f"{_n(b, 'pair')} won by {la} only, {c} by {lb} only"
            ),
        },
        "metrics": [],
    }
    for name, col in SCORES:
        both = [(x[col], y[col]) for x, y in pairs if _number(x.get(col)) and _number(y.get(col))]
        if not both:
            continue
        diffs = [x - y for x, y in both]
        w = stats.wilcoxon_signed_rank(diffs)
        ci = stats.paired_interval(diffs)
        mean = sum(diffs) / len(diffs)
        out["metrics"].append(
            {
                "metric": name,
                "column": col,
                "test": "Wilcoxon signed-rank test",
                "pairs": len(diffs),
                "mean_difference": mean,
                "interval": ci["interval"] if ci else None,
                "interval_method": "95 % Student t interval of the mean paired difference",
                "p": w["p"] if w else None,
                "method": w["method"] if w else None,
                "zero_differences": w["zeros"] if w else len(diffs),
                "sentence": _paired_sentence(w["p"] if w else None, len(diffs), name, la, lb, mean > 0),
            }
        )
    return out


def _n(n: int, word: str) -> str:
    return f"{n} {word}" + ("" if n == 1 else "s")


def _paired_sentence(p: float | None, n: int, what: str, a: str, b: str, higher_a: bool, detail: str = "") -> str:
    tail = f" ({detail})" if detail else ""
    if p is None:
        return f"{what}: no pair differs ({n} pairs){tail}"
    if p >= stats.ALPHA:
        return f"{what}: not distinguishable over {n} pairs (p = {p:.2g}){tail}"
    return f"{what}: {a if higher_a else b} is higher over {n} pairs (p = {p:.2g}, below 0.05){tail}"


def compare(rows: Sequence[dict], arm_key: str, a: str, b: str, matrix_keys: Sequence[str]) -> dict[str, Any]:
    """Arm ``a`` against arm ``b`` of ``rows`` (see the module docstring). ``CompareError`` when
    an arm has no session or no run."""
    a_rows = [r for r in rows if str(r.get(arm_key)) == a]
    b_rows = [r for r in rows if str(r.get(arm_key)) == b]
    for label, rs in ((a, a_rows), (b, b_rows)):
        if not rs:
            raise CompareError(
                f"{arm_key}={label}: no session of this fleet has that value "
                f"(values: {', '.join(arm_values(rows, arm_key))})"
            )
        if not any(r.get("runs") for r in rs) and not any(_number(r.get(c)) for r in rs for _, c in SCORES):
            raise CompareError(f"{arm_key}={label}: its {len(rs)} session(s) have no run to compare")
    pairs, why = pairing(a_rows, b_rows, arm_key, matrix_keys)
    return {
        "arm_key": arm_key,
        "a": a,
        "b": b,
        "sessions": [len(a_rows), len(b_rows)],
        "paired": bool(pairs),
        "why_unpaired": why,
        "pairs": len(pairs),
        "paired_tests": _paired(pairs, a, b) if pairs else None,
        "unpaired_tests": _unpaired(a_rows, b_rows, a, b),
    }


def lines(result: dict[str, Any]) -> list[str]:
    """The comparison as ``fleet report --compare`` prints it."""
    head = (
        f"{result['arm_key']}: {result['a']} against {result['b']} "
        f"({result['sessions'][0]} and {result['sessions'][1]} sessions)"
    )
    out = [head]
    if result["paired"]:
        t = result["paired_tests"]
        out.append(f"paired by seed: {result['pairs']} pairs")
        out.append(f"  {t['wins']['sentence']} [{t['wins']['test']}]")
        for m in t["metrics"]:
            lo_hi = m["interval"]
            ci = f"; mean difference {m['mean_difference']:+.3g}" + (
                f", 95% interval {lo_hi[0]:+.3g} to {lo_hi[1]:+.3g} (t)" if lo_hi else ""
            )
            out.append(f"  {m['sentence']}{ci} [{m['test']}, {m['method'] or '-'}]")
    else:
        out.append(f"not paired: {result['why_unpaired']}; unpaired tests")
    u = result["unpaired_tests"]
    out.append("unpaired, for reference:" if result["paired"] else "unpaired:")
    out.append(f"  {u['wins']['sentence']} [{u['wins']['test']}]")
    for m in u["metrics"]:
        out.append(f"  {m['sentence']} [{m['test']}]")
    return out


__all__ = ["compare", "pairing", "arm_values", "lines", "CompareError", "SCORES"]
