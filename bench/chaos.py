"""Fault campaign: ``python bench/chaos.py --runs N [--seed S] [--jobs J] [--faults F,...]``.

Many short sessions (``supervisor start`` as a subprocess) against the built-in game with the
hostile knobs (target ``game``: ``run/profiles/hostile.yaml``, 150 steps) and the demo cartridge
(``pyboy``: ``run/profiles/pyboy-demo.yaml``, played to its win), each with ONE fault at a
seeded random moment after the first observation. Target ``demo`` (``run/profiles/demo.yaml``,
the built-in game without knobs, one run to its game over), only when named in ``--faults``, is the one the
recovery figures come from: there nearly every step is an action, so the next action attempt
after a kill measures the pipeline's recovery rather than a hostile game's waits.

  kill:<actor>       SIGKILL of a running actor (recorder, observer, policy, model_client,
                     actuator, game or emulator, whichever the session runs)
  stop:<actor>       SIGSTOP, held 3 s (past the 1.5 s heartbeat deadline), then SIGCONT
  supervisor:term    SIGTERM of the supervisor
  supervisor:kill    SIGKILL of the supervisor
  game:garbage       the game answers one request with garbage (a hostile proxy in front of
  game:hang          the built-in game: ``tests/fuzz/hostile_http.py``); hang = an answer
  game:close         slower than ``game.timeout_s`` (1 s here), close = no answer at all
  journal:fail       the Nth append of one row kind fails in the recorder (the profile's
                     ``recorder.inject_failure``; before anything is written)
  journal:fsync      the Nth fsync of the journal fails (EIO) after its rows were written
                     (``recorder.inject_failure={event: fsync, nth: N}``): they are in the
                     file, never acknowledged, and that recorder's journal is unusable
  disk_full          the capture's filesystem (a 24 MiB loop-mounted ext4; needs root) fills

After each session the run is judged from its own evidence (``bench/chaos_judge.py``):
``capture verify`` (never damaged; intact when the session was finalized; incomplete, never
intact, when it was not), the verifier's last row equal to the journal's last whole row, the
exit code and reason (``session_end`` agrees with the process), the game's own counters (no
POST without a durable intent, no duplicated guarded action, no more POSTs than acknowledged
attempts — an attempt whose intent's fsync failed is in the file but must not be sent; as
many when the fault cannot leave an acknowledged attempt unsent), every attempt the game
received present in the final journal (proxy runs), and no actor process left 10 s after
the supervisor ended. A table per run, the totals; exit 1 on any violation.

For every ``kill:<actor>`` the report gives the **recovery** (``chaos_judge.measure_recovery``):
from the kill to the first ``action_attempt`` row stamped after it that the killed actor did not
hold, and to the first one the game answered (accepted or rejected), as median, p99 and max
per target and actor, beside the same sessions' median gap between attempts. ``--recovery N``
runs N kills of each actor kind on the ``demo`` target (recorder first) and prints only that
table.

The quick variant runs in the test suite (``tests/chaos/``); the full campaign is
``--runs 200`` (docs/reliability.md, "Fault campaign").
"""

from __future__ import annotations

import argparse
import concurrent.futures
import dataclasses
import glob
import json
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, REPO)
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from chaos_inject import ProcessWatch, ProxiedGame, SmallDisk, signal_pid, stop_then_continue  # noqa: E402
from chaos_judge import Run, actuator_evidence, game_stats_from_logs, judge  # noqa: E402
from conformance import HOSTILE  # noqa: E402

from protocol.events import ActionAttempt, ActionResult, Observation, Proposal  # noqa: E402

PYBOY = os.path.join(REPO, "run", "profiles", "pyboy-demo.yaml")
DEMO = os.path.join(REPO, "run", "profiles", "demo.yaml")
PROFILES = {"game": HOSTILE, "demo": DEMO, "pyboy": PYBOY}
GAME_STEPS = 150
ACTORS = {
    "game": ["recorder", "observer", "policy", "model_client", "actuator", "game"],
    "demo": ["recorder", "observer", "policy", "model_client", "actuator", "game"],
    "pyboy": ["recorder", "observer", "policy", "actuator", "emulator"],
}
PROXY_FAULTS = {
    "game:garbage": ["not_json", "garbage_http", "wrong_types"],
    "game:hang": ["slow", "drip"],
    "game:close": ["no_answer"],
}
# recorder.inject_failure (actors/recorder/writer.py FaultPlan): the Nth append of one kind fails
JOURNAL_FAILS = {
    Observation.KIND: (2, 100),
    Proposal.KIND: (2, 100),
    ActionAttempt.KIND: (1, 30),
    ActionResult.KIND: (1, 30),
}
# recorder.inject_failure={event: fsync, nth: N}: about one journal fsync per durable group
# (session_start, then each intent and each result). Counted with strace: a 150-step hostile
# session makes ~100 (49 attempts), a demo-cartridge session ~230 (114 attempts); so N lands
# mid-session. N = 1 (session_start's) is left out: the session would fail before it began.
JOURNAL_FSYNCS = {"game": (2, 90), "pyboy": (2, 220)}
# The moment comes at ``at_s`` after the first observation or once the journal holds this many
# action attempts, whichever is first: the demo cartridge's session lasts about 1.5 s
# (≈ 200 attempts), so a driver late on a loaded machine would otherwise signal an actor that
# had already ended by itself.
LATEST_ATTEMPT = {"pyboy": 80, "demo": 80}
HOLD_S = 3.0  # SIGSTOP held this long: past 3 heartbeats of 0.5 s
LEFT_OVER_S = 10.0


def faults_for(target: str, disk: bool) -> list[str]:
    out = [f"{k}:{a}" for a in ACTORS[target] for k in ("kill", "stop")]
    out += ["supervisor:term", "supervisor:kill", "journal:fail", "journal:fsync"]
    if target in ("game", "demo"):
        out += list(PROXY_FAULTS)
    return out + (["disk_full"] if disk else [])


def plan(runs: int, seed: int, chosen: list[str] | None, disk: bool) -> list[Run]:
    """Run i: target alternates game / pyboy, the fault and its moment drawn from the seed.
    ``chosen`` (``target/fault`` or ``fault``) is cycled through instead of drawing."""
    out = []
    for i in range(runs):
        rng = random.Random(f"{seed}-{i}")
        if chosen:
            spec = chosen[i % len(chosen)]
            target, fault = spec.split("/", 1) if "/" in spec else ("game", spec)
        else:
            target = "game" if i % 2 == 0 else "pyboy"
            fault = rng.choice(faults_for(target, disk))
        at = rng.uniform(
            0.2, {"pyboy": 0.8, "demo": 1.2}.get(target, 6.0)
        )  # (demo plays ≈ 3 s to its end)  # (the demo cartridge plays ≈ 1.5 s)
        out.append(Run(i + 1, target, fault, at_s=round(at, 2)))
    return out


def _sets(*pairs: str) -> list[str]:
    return [a for p in pairs for a in ("--set", p)]


def _wait(cond, timeout: float, watch: ProcessWatch | None, every: float = 0.05):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if watch:
            watch.scan()
        value = cond()
        if value:
            return value
        time.sleep(every)
    return None


def _rows_of(capture: str, kind: str) -> int:
    """How many rows of ``kind`` the session journals under ``capture`` hold so far."""
    found = 0
    for path in glob.glob(os.path.join(capture, "sessions", "*", "events.jsonl")):
        with open(path, "rb") as fh:
            found += fh.read().count(f'"event":"{kind}"'.encode())
    return found


def _proxy_faults(run: Run, rng: random.Random) -> dict[tuple[str, int], str]:
    kind = rng.choice(PROXY_FAULTS[run.fault])
    method = rng.choice(["GET", "POST"])
    n = rng.randint(3, 120) if method == "GET" else rng.randint(1, 30)
    run.detail = f"{method} #{n}: {kind}"
    return {(method, n): kind}


def inject(run: Run, proc: subprocess.Popen, watch: ProcessWatch, disk: SmallDisk | None) -> None:
    """Apply the run's fault now (proxy faults were armed before the start)."""
    kind, _, who = run.fault.partition(":")
    if kind == "supervisor":
        run.signalled_at = time.time()
        run.landed = proc.poll() is None and signal_pid(proc.pid, signal.SIGTERM if who == "term" else signal.SIGKILL)
        run.detail = f"pid {proc.pid}"
    elif kind in ("kill", "stop"):
        pid = watch.scan().get(who)
        if pid is None:
            run.detail = f"no {who} running"
            return
        run.detail = f"pid {pid}"
        run.signalled_at = time.time()
        run.landed = (
            signal_pid(pid, signal.SIGKILL) if kind == "kill" else stop_then_continue(pid, HOLD_S, threading.Event())
        )
    elif kind == "disk_full" and disk is not None:
        run.landed = proc.poll() is None
        run.detail = f"filled {disk.fill() >> 10} KiB"


def execute(run: Run, base: str, seed: int, timeout: float) -> Run:
    """Start the session, apply the fault, wait for the end and what it leaves, judge."""
    os.makedirs(base, exist_ok=True)
    rng = random.Random(f"{seed}-{run.index}-detail")
    disk = SmallDisk(base) if run.fault == "disk_full" else None
    capture = os.path.join(disk.mount if disk else base, "capture")
    runtime = os.path.join(base, "runtime")
    proxied = None
    sets = [f"capture.root={capture}", f"supervisor.runtime_dir={runtime}", "supervisor.progress=plain"]
    if run.target != "pyboy":
        sets.append(f"game.seed={seed * 1000 + run.index}")
    if run.fault in PROXY_FAULTS:
        proxied = ProxiedGame(HOSTILE, seed * 1000 + run.index, _proxy_faults(run, rng), slow_s=2.5)
        sets += ["game.builtin=false", f"game.base_url={proxied.url}", "game.timeout_s=1"]
    if run.fault == "journal:fail":
        event = rng.choice(sorted(JOURNAL_FAILS))
        run.nth = rng.randint(*JOURNAL_FAILS[event])
        run.detail = f"{event} #{run.nth} fails"
        sets.append(f"recorder.inject_failure={{event: {event}, nth: {run.nth}}}")
    if run.fault == "journal:fsync":
        run.nth = rng.randint(*JOURNAL_FSYNCS[run.target])
        run.detail = f"fsync #{run.nth} fails"
        sets.append(f"recorder.inject_failure={{event: fsync, nth: {run.nth}}}")
    cmd = [
        sys.executable,
        "-m",
        "supervisor",
        "start",
        PROFILES[run.target],
        *(["--max-steps", str(GAME_STEPS)] if run.target == "game" else []),
        *_sets(*sets),
    ]
    began = time.monotonic()
    with open(os.path.join(base, "stdout"), "wb") as out, open(os.path.join(base, "stderr"), "wb") as err:
        proc = subprocess.Popen(cmd, cwd=REPO, stdout=out, stderr=err)
    watch = ProcessWatch(proc.pid)
    try:
        _drive(run, proc, watch, capture, proxied, disk, timeout)
    finally:
        run.seconds = time.monotonic() - began
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        run.exit_code = proc.returncode
        _after(run, watch, base, capture, disk, proxied, runtime)
    return run


def _drive(run, proc, watch, capture, proxied, disk, timeout) -> None:
    if proxied:  # the intent check reads the journal from the moment it exists
        journal = _wait(
            lambda: glob.glob(os.path.join(capture, "sessions", "*", "events.jsonl")), 60, watch, every=0.005
        )
        if journal:
            proxied.point_intent_check(journal[0])
    if not _wait(lambda: _rows_of(capture, Observation.KIND) or proc.poll() is not None, 60, watch):
        run.violations.append("no first observation within 60 s")
    if not proxied and not run.fault.startswith("journal:"):  # those are armed at the start
        latest = LATEST_ATTEMPT.get(run.target)
        _wait(
            lambda: proc.poll() is not None or (latest and _rows_of(capture, ActionAttempt.KIND) >= latest),
            run.at_s,
            watch,
        )  # the moment, or the end
        if proc.poll() is None:
            inject(run, proc, watch, disk)
        else:
            run.detail = "the session ended first"
    if _wait(lambda: proc.poll() is not None, timeout, watch) is None:
        run.violations.append(f"session did not end within {timeout:.0f}s")


def _after(run, watch, base, capture, disk, proxied, runtime) -> None:
    if _wait(lambda: not watch.left_over(), LEFT_OVER_S, None, every=0.1) is None:
        run.left_over = watch.left_over()
        watch.kill_left_over()
    run.reported = _reported_end(os.path.join(base, "stderr"))
    stats = posted = None
    if proxied:
        run.landed = (proxied.proxy.gets if run.detail.startswith("GET") else proxied.proxy.posts) >= int(
            run.detail.split("#")[1].split(":")[0]
        )
        stats, posted = proxied.server.stats(), proxied.posted_attempts()
        proxied.close()
    else:
        stats = game_stats_from_logs(runtime)
    run.unacknowledged, run.unrecorded_results = actuator_evidence(runtime)
    if disk:
        capture = os.path.join(base, "capture")
        disk.copy_out(base)  # the small disk holds capture/; it is unmounted next
        disk.close()
    dirs = glob.glob(os.path.join(capture, "sessions", "*"))
    run.session_dir = dirs[0] if len(dirs) == 1 else ""
    judge(run, stats, posted)


def _reported_end(stderr: str) -> tuple[str, int] | None:
    """The supervisor's last words: ``session ended: <reason> (exit <code>)``."""
    found = None
    with open(stderr, encoding="utf-8", errors="replace") as fh:
        for line in fh:
            m = re.match(r"session ended: (\S+) \(exit (-?\d+)\)", line)
            if m:
                found = (m.group(1), int(m.group(2)))
    return found


def campaign(runs: list[Run], seed: int, jobs: int, timeout: float, keep: str | None, progress=print) -> list[Run]:
    base = keep or tempfile.mkdtemp(prefix="gamerig-chaos-")
    done: list[Run] = []
    with concurrent.futures.ThreadPoolExecutor(max_workers=jobs) as pool:
        futures = [pool.submit(execute, r, os.path.join(base, f"run-{r.index}"), seed, timeout) for r in runs]
        for n, fut in enumerate(concurrent.futures.as_completed(futures), 1):
            r = fut.result()
            done.append(r)
            progress(
                f"[{n}/{len(runs)}] run {r.index} {r.target} {r.fault} "
                f"({'landed' if r.landed else 'missed'}; {r.detail}): exit {r.exit_code} {r.reason}, "
                f"{r.verdict}, {r.seconds:.0f}s"
                + (f"  VIOLATIONS: {'; '.join(r.violations)}" if r.violations else "  ok")
            )
    if not keep:
        shutil.rmtree(base, ignore_errors=True)
    return sorted(done, key=lambda r: r.index)


def table(runs: list[Run]) -> str:
    head = (
        f"{'run':>4} {'target':<6} {'fault':<19}{'at_s':>5} {'landed':<7}{'exit':>5} "
        f"{'reason':<22}{'verdict':<11}{'last':>5}{'torn':>5}{'att':>5}{'posts':>6}"
        f"{'no-int':>7}{'dup':>4}{'left':>5}  result"
    )
    rows = [
        f"{r.index:>4} {r.target:<6} {r.fault:<19}{r.at_s:>5.1f} {'yes' if r.landed else 'no':<7}"
        f"{_n(r.exit_code):>5} {r.reason!s:<22}{r.verdict:<11}{_n(r.last_sequence):>5}"
        f"{r.torn:>5}{r.attempts:>5}{_n(r.posts):>6}{_n(r.intent_violations):>7}"
        f"{_n(r.duplicates):>4}{len(r.left_over):>5}  " + ("ok" if not r.violations else "; ".join(r.violations))
        for r in runs
    ]
    return "\n".join([head, *rows])


def totals(runs: list[Run]) -> str:
    by_fault: dict[str, list[int]] = {}
    for r in runs:
        key = r.fault.split(":")[0] if r.fault.startswith(("kill", "stop")) else r.fault
        t = by_fault.setdefault(key, [0, 0, 0])
        t[0] += 1
        t[1] += r.landed
        t[2] += bool(r.violations)
    lines = [
        f"  {k:<17} {v[0]:>4} runs, {v[1]:>4} landed, {v[2]:>3} with violations" for k, v in sorted(by_fault.items())
    ]
    bad = sum(1 for r in runs if r.violations)
    return "\n".join(lines + [f"{len(runs)} runs, {sum(r.landed for r in runs)} faults landed, {bad} with violations"])


def recovery(runs: list[Run]) -> str:
    """From each actor's kill to the next new action attempt, and to the next one the game
    answered: median, p99 (the largest under 100 kills) and max, beside the same sessions'
    median gap between attempts."""
    by_actor: dict[str, list[Run]] = {}
    for r in runs:
        if r.fault.startswith("kill:") and r.recovery_s is not None:
            by_actor.setdefault(f"{r.target}/{r.fault}", []).append(r)

    def stats(xs: list[float]) -> str:
        if not xs:
            return f"{'-':>9}{'-':>8}{'-':>8}"
        xs = sorted(xs)
        return f"{xs[len(xs) // 2]:>9.3f}{xs[min(len(xs) - 1, int(0.99 * len(xs)))]:>8.3f}{xs[-1]:>8.3f}"

    head = (
        f"  {'kill':<22}{'n':>4}  {'next attempt: median':>22}{'p99':>8}{'max':>8}  "
        f"{'answered: median':>18}{'p99':>8}{'max':>8}{'step_gap':>10}"
    )
    lines = [head]
    for key, rs in sorted(by_actor.items()):
        gaps = sorted(r.step_gap_s for r in rs if r.step_gap_s is not None)
        lines.append(
            f"  {key:<22}{len(rs):>4}  {'':>13}{stats([r.recovery_s for r in rs])}  {'':>9}"
            f"{stats([r.answered_s for r in rs if r.answered_s is not None])}"
            f"{(gaps[len(gaps) // 2] if gaps else float('nan')):>10.3f}"
        )
    return (
        (
            "recovery (s): from the kill to the next new action attempt, and to the next one the game "
            "answered\n" + "\n".join(lines)
        )
        if by_actor
        else ""
    )


def _n(v) -> str:
    return "?" if v is None else str(v)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        description=__doc__.splitlines()[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--runs", type=int, default=200, help="how many sessions")
    ap.add_argument("--seed", type=int, default=1, help="seeds the faults, their moments and the games")
    ap.add_argument("--jobs", type=int, default=2, help="sessions at once")
    ap.add_argument("--timeout", type=float, default=180, help="seconds per session")
    ap.add_argument(
        "--faults",
        help="comma-separated [target/]fault list to cycle through "
        "instead of drawing (e.g. pyboy/kill:emulator,supervisor:kill)",
    )
    ap.add_argument("--no-disk", action="store_true", help="leave out disk_full (it needs root)")
    ap.add_argument("--keep", help="keep every run's capture and logs under this directory")
    ap.add_argument("--json", action="store_true", help="print one JSON report instead of tables")
    ap.add_argument(
        "--recovery",
        type=int,
        metavar="N",
        help="N kills of each actor kind on the demo target; print the recovery table",
    )
    args = ap.parse_args(argv)
    disk = not args.no_disk and os.geteuid() == 0
    chosen = [f.strip() for f in args.faults.split(",")] if args.faults else None
    if args.recovery:
        chosen = [f"demo/kill:{a}" for a in ("recorder", "observer", "policy", "actuator", "game")]
        args.runs = args.recovery * len(chosen)
    for spec in chosen or []:
        target, fault = spec.split("/", 1) if "/" in spec else ("game", spec)
        if target not in ACTORS or fault not in faults_for(target, True):
            ap.error(
                f"--faults: unknown fault {spec!r} (targets game, demo, pyboy; faults of game: "
                f"{', '.join(faults_for('game', True))})"
            )
    say = (lambda _m: None) if args.json else (lambda m: print(m, flush=True))
    if not disk and any(spec.endswith("disk_full") for spec in chosen or []):
        ap.error("--faults: disk_full needs root (it loop-mounts a small filesystem) and no --no-disk")
    runs = campaign(plan(args.runs, args.seed, chosen, disk), args.seed, args.jobs, args.timeout, args.keep, say)
    if args.json:
        json.dump(
            {"runs": [dataclasses.asdict(r) for r in runs], "violating_runs": sum(1 for r in runs if r.violations)},
            sys.stdout,
            indent=1,
        )
        print()
    else:
        if not args.recovery:
            print("\n" + table(runs) + "\n\n" + totals(runs))
        rec = recovery(runs)
        if rec:
            print("\n" + rec)
    return 1 if any(r.violations for r in runs) else 0


if __name__ == "__main__":
    sys.exit(main())
