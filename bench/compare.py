"""Comparing two arms of a fleet: ``python bench/compare.py [--seeds N] [--rounds R] [--json]``.

Builds a synthetic fleet root in a temporary directory: ``fleet.json`` (a matrix crossing two
policies with ``--seeds`` values of ``game.seed``, 200 by default) and ``results.jsonl`` with one
row per session (one run each, won or lost, a progress score and a floor drawn from a fixed
random sequence, ``seeded_by: game.seed``), so that two arms of ``--seeds`` runs each pair by
seed. Synthetic rows, not real captures: 400 real sessions take tens of minutes to play, and
the comparison reads only ``results.jsonl`` (plus each session's floor from its observations
when the session directory is there; here none is, which the viewer tolerates).

It prints, each the median of ``--rounds`` rounds (5):

* ``baseline``: the unpaired tests alone, as the compare page computed them before pairing
  (Fisher's exact test on runs and wins, Welch's t-test on the progress score and on the
  floor: ``supervisor.fleet.stats``), over the same rows, in the same run;
* ``compare``: ``supervisor.fleet.compare.compare`` (pairing by seed, the exact McNemar test,
  Wilcoxon's signed-rank test and the paired t interval on two columns, and the unpaired tests);
* ``answer``: the viewer's whole answer to ``api/compare/group/FLEET/policy.module/A/B``
  (``supervisor.view.api.Api.answer``: reading ``results.jsonl``, both comparisons, the pair
  list, the JSON), the figure the goal is about: under 1 s.

``--json`` prints the figures as one JSON object.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from supervisor.fleet import compare, stats
from supervisor.view.api import Api
from supervisor.view.catalog import Catalog

POLICIES = ("sts2", "actors.policy.example_first_choice")
GOAL_S = 1.0


def build(root: str, seeds: int) -> list[dict]:
    """The synthetic fleet root (fleet.json, results.jsonl); returns its rows."""
    rng = random.Random(7)
    os.makedirs(root)
    matrix = {"policy.module": list(POLICIES), "game.seed": list(range(1, seeds + 1))}
    with open(os.path.join(root, "fleet.json"), "w", encoding="utf-8") as fh:
        json.dump(
            {
                "name": "bench-compare",
                "profile": "run/profiles/demo.yaml",
                "set": {},
                "matrix": matrix,
                "sessions": 2 * seeds,
                "state": "finished",
                "backend": "local",
            },
            fh,
        )
    rows = []
    for seed in range(1, seeds + 1):
        for p, policy in enumerate(POLICIES):
            floor = rng.randint(1, 30) + (3 if p == 0 else 0)
            bosses = min(3, floor // 12)
            won = rng.random() < (0.3 if p == 0 else 0.2)
            i = len(rows)
            rows.append(
                {
                    "index": i,
                    "slot": f"s{i:04d}",
                    "cell": f"game.seed={seed} policy.module={policy}",
                    "repeat": 0,
                    "policy.module": policy,
                    "game.seed": seed,
                    "outcome": "ok",
                    "session_id": f"bench-{i:04d}",
                    "session_dir": f"s{i:04d}/capture/sessions/bench-{i:04d}",
                    "steps": rng.randint(100, 900),
                    "runs": 1,
                    "wins": int(won),
                    "runs_inferred": 1,
                    "floor": floor,
                    "act": 1 + floor // 17,
                    "bosses": bosses,
                    "elites": rng.randint(0, 3),
                    "hp_end": 0 if not won else rng.randint(1, 80),
                    "scored_runs": "ended",
                    "progress_score": round(0.5 * min(floor, 50) / 50 + 0.5 * bosses / 3, 6),
                    "seeded_by": "game.seed",
                    "duration_s": 1.0,
                    "model_calls": 0,
                }
            )
    with open(os.path.join(root, "results.jsonl"), "w", encoding="utf-8") as fh:
        for r in rows:
            fh.write(json.dumps(r, sort_keys=True) + "\n")
    return rows


def unpaired_only(rows: list[dict]) -> None:
    """The baseline: the unpaired tests of the two arms (stats only)."""
    arms = [[r for r in rows if r["policy.module"] == p] for p in POLICIES]
    runs = [sum(r["runs"] for r in a) for a in arms]
    wins = [sum(r["wins"] for r in a) for a in arms]
    stats.fisher_exact(wins[0], runs[0], wins[1], runs[1])
    stats.newcombe(wins[0], runs[0], wins[1], runs[1])
    for col in ("progress_score", "floor"):
        stats.welch([r[col] for r in arms[0]], [r[col] for r in arms[1]])


def timed(f, rounds: int) -> float:
    times = []
    for _ in range(rounds):
        t = time.perf_counter()
        f()
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seeds", type=int, default=200, help="seeds, so runs per arm (200)")
    ap.add_argument("--rounds", type=int, default=5, help="rounds; each figure is their median (5)")
    ap.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="bench-compare-") as tmp:
        root = os.path.join(tmp, "fleet")
        rows = build(root, args.seeds)
        catalog = Catalog([root])
        api = Api(catalog, "live")
        key = next(iter(catalog.fleets))
        path = f"api/compare/group/{key}/policy.module/{POLICIES[0]}/{POLICIES[1]}"
        first = api.answer(path)
        if first.status != 200:
            print(f"bench/compare.py: the viewer answered {first.status}: {first.body[:300]!r}", file=sys.stderr)
            return 1
        arms = json.loads(first.body)["arms"]
        baseline = timed(lambda: unpaired_only(rows), args.rounds)
        paired = timed(
            lambda: compare.compare(rows, "policy.module", POLICIES[0], POLICIES[1], ["policy.module", "game.seed"]),
            args.rounds,
        )
        answer = timed(lambda: api.answer(path), args.rounds)
    out = {
        "runs_per_arm": args.seeds,
        "pairs": arms["pairs"],
        "paired": arms["paired"],
        "baseline_unpaired_s": round(baseline, 6),
        "compare_s": round(paired, 6),
        "answer_s": round(answer, 6),
        "goal_s": GOAL_S,
        "within_goal": answer < GOAL_S,
        "rounds": args.rounds,
        "wilcoxon_method": arms["paired_tests"]["metrics"][0]["method"],
    }
    if args.json:
        print(json.dumps(out))
    else:
        print(f"two arms of {args.seeds} runs each, {arms['pairs']} pairs by seed (median of {args.rounds} rounds)")
        print(f"  baseline: the unpaired tests alone       {1000 * baseline:9.2f} ms")
        print(
            f"  compare.compare (paired and unpaired)    {1000 * paired:9.2f} ms  "
            f"({paired / baseline:.1f}x the baseline)"
        )
        print(
            f"  the viewer's answer (api/compare/group)  {1000 * answer:9.2f} ms  "
            f"({'within' if answer < GOAL_S else 'OVER'} the {GOAL_S:g} s goal)"
        )
    return 0 if answer < GOAL_S else 1


if __name__ == "__main__":
    sys.exit(main())
