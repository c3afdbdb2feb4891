"""Conformance campaign: ``python bench/conformance.py [--seeds N] [--max-steps M] [--jobs J]``.

Runs the whole pipeline (``supervisor start``: recorder, observer, policy, actuator, the
built-in game) against the built-in STS2MCP game over many seeds with the hostile knobs of
``run/profiles/hostile.yaml`` on, runs in a row (``session.stop_on_run_end: false``). The
sessions rotate through the ways a user meets the game: on the main menu, on a main menu with
a saved run, and inside a run already in progress.

After each session it checks, from the session's own evidence:

* ``capture verify`` says the journal is complete and intact;
* the game's own counters (its ``GAME_STATS`` log line): no duplicated guarded action, no POST
  without a durable intent recorded before it, one POST per ``action_attempt``;
* the session did not stall (reason ``stuck``) and ended as asked (``max_steps``);
* at least one run ended (its game over, or left from a game over hidden under a popup).

and prints a table per session, the totals, and the coverage table of
``supervisor capture coverage``: every screen variant reached and every action kind sent.
It exits 1 on any violation, or when a screen variant of ``vendor/sts2mcp/`` (less those the
built-in game does not produce: ``not_required_of_builtin`` in ``vendor/sts2mcp/variance.json``,
and ``NOT_CHOSEN`` below) was never reached; 0 otherwise.

The quick variant (``--seeds 2 --stop-on-run-end`` with one act) runs in the test suite
(``tests/conformance/``); the full campaign is ``--seeds 200``.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import dataclasses
import glob
import json
import os
import subprocess
import sys
import tempfile
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, REPO)

from supervisor.capture.coverage import CoverageReport, expected_variants, render, scan_session  # noqa: E402
from supervisor.capture.verify import verify_path  # noqa: E402

HOSTILE = os.path.join(REPO, "run", "profiles", "hostile.yaml")
SAMPLES = os.path.join(REPO, "vendor", "sts2mcp")
# Screens the mod can show that the built-in game does not produce, each with its reason.
with open(os.path.join(SAMPLES, "variance.json"), encoding="utf-8") as _fh:
    NOT_MODELLED: dict[str, str] = json.load(_fh)["not_required_of_builtin"]
# Screens the built-in game shows but only after a choice the built-in policy never makes.
NOT_CHOSEN: dict[str, str] = {
    "fake_merchant__fight_started": "needs a Foul Potion thrown at the fake merchant; the policy "
    "never throws one (its rule for the screen is unit-tested on the sample, tests/policy)",
}
# How a session meets the game; each is a list of --set overrides (knobs from actors/game/knobs.py).
START_MODES: dict[str, list[str]] = {
    "main_menu": [],
    "saved_run": ["game.knobs.start_saved_run=1", "game.knobs.start_floor=3"],
    "in_run": ["game.knobs.start_in_run=1", "game.knobs.start_floor=6"],
}


@dataclasses.dataclass
class Outcome:
    seed: int
    mode: str
    exit_code: int | None = None
    reason: str | None = None
    steps: int = 0
    runs_entered: int = 0
    runs_ended: int = 0
    victories: int = 0
    defeats: int = 0
    verify: str = "?"
    duplicates: int | None = None
    intent_violations: int | None = None
    posts: int | None = None
    attempts: int = 0
    seconds: float = 0.0
    violations: list[str] = dataclasses.field(default_factory=list)


def run_session(
    seed: int, mode: str, base: str, max_steps: int, timeout: float, extra: list[str], stop_on_run_end: bool = False
) -> tuple[Outcome, str]:
    """One ``supervisor start`` of the hostile profile; returns its outcome and session dir."""
    out = Outcome(seed, mode)
    capture, runtime = os.path.join(base, "capture"), os.path.join(base, "runtime")
    cmd = [
        sys.executable,
        "-m",
        "supervisor",
        "start",
        HOSTILE,
        "--max-steps",
        str(max_steps),
        *_sets(
            f"game.seed={seed}",
            f"capture.root={capture}",
            f"supervisor.runtime_dir={runtime}",
            "supervisor.progress=plain",
            f"session.stop_on_run_end={str(stop_on_run_end).lower()}",
            *START_MODES[mode],
            *extra,
        ),
    ]
    began = time.monotonic()
    try:
        proc = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True, timeout=timeout)
        out.exit_code = proc.returncode
    except subprocess.TimeoutExpired:
        out.violations.append(f"session did not end within {timeout:.0f}s")
    out.seconds = time.monotonic() - began
    dirs = glob.glob(os.path.join(capture, "sessions", "*"))
    if len(dirs) != 1:
        out.violations.append(f"expected one session directory, found {len(dirs)}")
        return out, ""
    _game_stats(out, runtime)
    return out, dirs[0]


def _sets(*pairs: str) -> list[str]:
    return [a for p in pairs for a in ("--set", p)]


def _game_stats(out: Outcome, runtime: str) -> None:
    lines = [
        ln
        for p in glob.glob(os.path.join(runtime, "*.logs", "game.log"))
        for ln in open(p, encoding="utf-8", errors="replace")
        if "GAME_STATS " in ln
    ]
    if not lines:
        out.violations.append("the game logged no GAME_STATS line")
        return
    stats = json.loads(lines[-1].split("GAME_STATS ", 1)[1])
    out.duplicates = stats.get("duplicate_guarded_actions")
    out.intent_violations = len(stats.get("intent_violations") or [])
    out.posts = stats.get("posts")


def judge(out: Outcome, session_dir: str, cov: CoverageReport, stop_on_run_end: bool = False) -> None:
    """Fill the evidence-based checks of one session into ``out.violations``."""
    if not session_dir:
        return
    sc = scan_session(session_dir, os.path.dirname(os.path.dirname(session_dir)), cov)
    out.reason, out.steps = sc.reason, sc.observations
    out.runs_entered, out.runs_ended = sc.runs_entered, sc.runs_ended
    out.victories, out.defeats = sc.victories, sc.defeats
    out.attempts = sc.attempts
    report = verify_path(session_dir)
    expected_end = "run_ended" if stop_on_run_end else "max_steps"
    out.verify = report.verdict
    checks = [
        (out.exit_code == 0, f"exit code {out.exit_code} ({out.reason})"),
        (sc.reason == expected_end, f"ended with reason {sc.reason!r}, not {expected_end}"),
        (not sc.stalled, "stalled (reason stuck)"),
        (report.exit_code == 0, f"capture verify: {out.verify}"),
        (out.duplicates == 0, f"{out.duplicates} duplicated guarded action(s)"),
        (out.intent_violations == 0, f"{out.intent_violations} POST(s) without a durable intent"),
        (out.posts == out.attempts, f"{out.posts} POSTs for {out.attempts} attempts"),
        (sc.runs_ended >= 1, "no run ended"),
    ]
    out.violations += [msg for ok, msg in checks if not ok]


def campaign(
    seeds: list[int],
    max_steps: int,
    jobs: int,
    timeout: float,
    keep: str | None,
    extra: list[str],
    progress=print,
    stop_on_run_end: bool = False,
) -> tuple[list[Outcome], CoverageReport]:
    modes = list(START_MODES)
    base = keep or tempfile.mkdtemp(prefix="gamerig-conformance-")
    cov = CoverageReport()
    outcomes: list[Outcome] = []
    with concurrent.futures.ThreadPoolExecutor(max_workers=jobs) as pool:
        futures = {
            pool.submit(
                run_session,
                s,
                modes[(s - 1) % len(modes)],
                os.path.join(base, f"seed-{s}"),
                max_steps,
                timeout,
                extra,
                stop_on_run_end,
            ): s
            for s in seeds
        }
        for n, fut in enumerate(concurrent.futures.as_completed(futures), 1):
            out, session_dir = fut.result()
            judge(out, session_dir, cov, stop_on_run_end)
            outcomes.append(out)
            progress(
                f"[{n}/{len(seeds)}] seed {out.seed} ({out.mode}): {out.steps} steps, "
                f"{out.runs_ended} runs ended, {out.seconds:.0f}s"
                + (f"  VIOLATIONS: {'; '.join(out.violations)}" if out.violations else "  ok")
            )
    outcomes.sort(key=lambda o: o.seed)
    return outcomes, cov


def table(outcomes: list[Outcome]) -> str:
    head = (
        f"{'seed':>5} {'start':<16}{'steps':>6}{'runs':>5}{'ended':>6}{'won':>4}{'lost':>5}{'dup':>4}"
        f"{'no-intent':>10}{'posts':>6}  {'reason':<10} verdict"
    )
    rows = [
        f"{o.seed:>5} {o.mode:<16}{o.steps:>6}{o.runs_entered:>5}{o.runs_ended:>6}{o.victories:>4}{o.defeats:>5}"
        f"{_n(o.duplicates):>4}{_n(o.intent_violations):>10}{_n(o.posts):>6}  {o.reason!s:<10} "
        + ("ok" if not o.violations else "; ".join(o.violations))
        for o in outcomes
    ]
    return "\n".join([head, *rows])


def _n(v) -> str:
    return "?" if v is None else str(v)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        description=__doc__.splitlines()[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--seeds", type=int, default=200, help="how many sessions (seeds 1..N)")
    ap.add_argument("--first-seed", type=int, default=1)
    ap.add_argument("--max-steps", type=int, default=4000, help="steps per session")
    ap.add_argument("--jobs", type=int, default=2, help="sessions at once")
    ap.add_argument("--timeout", type=float, default=600, help="seconds per session")
    ap.add_argument("--keep", help="keep the captures under this directory")
    ap.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="a profile override for every session (e.g. game.knobs.acts=1)",
    )
    ap.add_argument("--no-expect", action="store_true", help="do not require every screen variant")
    ap.add_argument(
        "--stop-on-run-end",
        action="store_true",
        help="end each session when its first run ends (reason run_ended) instead of "
        "playing runs in a row until --max-steps",
    )
    ap.add_argument("--json", action="store_true", help="print one JSON report instead of tables")
    args = ap.parse_args(argv)
    seeds = list(range(args.first_seed, args.first_seed + args.seeds))
    say = (lambda _m: None) if args.json else (lambda m: print(m, flush=True))
    outcomes, cov = campaign(
        seeds, args.max_steps, args.jobs, args.timeout, args.keep, args.set, say, args.stop_on_run_end
    )
    expected = (
        []
        if args.no_expect
        else [v for v in expected_variants(SAMPLES) if v not in NOT_MODELLED and v not in NOT_CHOSEN]
    )
    missing = cov.missing(expected)
    bad = [o for o in outcomes if o.violations]
    if args.json:
        json.dump(
            {
                "sessions": [dataclasses.asdict(o) for o in outcomes],
                "coverage": cov.as_dict(),
                "missing": missing,
                "violating_sessions": len(bad),
            },
            sys.stdout,
            indent=1,
        )
        print()
    else:
        print("\n" + table(outcomes) + "\n\n" + render(cov, missing))
        print(f"\n{len(outcomes)} sessions, {len(bad)} with violations, {len(missing)} screen variant(s) never reached")
    return 1 if bad or missing else 0


if __name__ == "__main__":
    sys.exit(main())
