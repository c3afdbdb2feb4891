"""Fleet fault campaign: ``python bench/fleet_chaos.py --trials N [--seed S] [--faults F,...]
[--sessions K] [--steps N] [--concurrency C] [--when random|session] [--ray | --ray-address ADDR]
[--keep DIR] [--json]``.

Each trial runs one real fleet (``supervisor fleet start``, in its own process group, as a
terminal starts it) of K sessions of ``run/profiles/demo.yaml`` (the built-in game, seeds 1..K,
``session.max_steps`` N) and strikes it with ONE fault at a seeded random moment, then
finishes it as a user would, with ``supervisor fleet start --resume`` (again until the fleet is
whole when a resume is struck too):

  driver:kill      SIGKILL of the driver's whole process group (Ctrl-\\, the OOM killer)
  driver:term      SIGTERM of the driver (a service manager stopping it)
  supervisor:kill  SIGKILL of one running session's supervisor; the driver lives on
  resume:kill      driver:kill, then SIGKILL of the resume's process group at a random
                   moment of its own, then a second resume
  all:kill         SIGKILL of every process of the fleet at once: driver, supervisors, actors
                   (a power cut without the disk's losses; bench/powercut.py models those)

A moment is uniform over the unfaulted fleet's wall time (``--when random``: from the
driver's very start, so some land before it recorded the fleet; the trial then starts the
fleet again, as the resume's message says), or when a running session (of that driver) has
recorded k action attempts, k uniform over the first half of the steps (``--when session``:
always mid-session, whatever the machine's load). A fault that finds nothing to strike is reported as not landed.

First the same fleet runs once without faults: the reference. After each trial the fleet
root is judged from its own evidence:

* every planned session has exactly one row in ``results.jsonl`` and every line parses;
* no session ran twice: in each slot only the last session may have ended by itself, every
  earlier one was stopped (``session_end`` sigterm/sigint) or cut short (none), with every
  action attempt resolved; no two of a slot's sessions overlap in time;
* no action sent twice, counted from each journal: no attempt id twice, and the built-in
  game's own counts (its ``builtin_game_stats`` row): POSTs <= attempts, no duplicated
  guarded action, no POST without its intent;
* ``needs_review`` exactly when the session's journal shows an action attempt without a
  result;
* the report equals the reference's (``fleet report``'s cells, durations aside, and each
  row's outcome, exit code, reason, steps, runs, wins and action results), sessions needing
  review aside (they are counted, and allowed only with an action in flight);
* the last driver's exit code agrees with the rows; ``capture verify`` never says damaged;
  no supervisor or actor of the fleet is left 10 s after the last driver ended.

It prints a line per trial, the kills that landed per fault and the violations, and exits 1 on
any violation. The quick variant is ``tests/fleet/test_fleet_chaos.py``; the figures are in
docs/reliability.md ("Fleet fault campaign").
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time

import psutil
import yaml

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, REPO)

from supervisor.fleet import control, layout  # noqa: E402
from supervisor.fleet.ray_head import LocalRayHead  # noqa: E402
from supervisor.fleet.report import cell_rows  # noqa: E402
from supervisor.fleet.runner import session_ids  # noqa: E402

DEMO = os.path.join(REPO, "run", "profiles", "demo.yaml")
FAULTS = ("driver:kill", "driver:term", "supervisor:kill", "resume:kill", "all:kill")
COMPARED = ("cell", "outcome", "exit_code", "reason", "steps", "runs", "wins", "accepted", "rejected", "unknown")
CELL_IGNORED = ("mean_duration_s", "session_ids")
STOPPED = ("sigterm", "sigint")
DRIVER_DEADLINE_S = 300.0
LEFTOVER_S = 10.0


@dataclasses.dataclass
class Trial:
    n: int
    fault: str
    at_s: float | None = None  # the fault's moment after the driver started
    landed: int = 0  # kills (or signals) that struck a live process
    detail: str = ""
    drivers: list[dict] = dataclasses.field(default_factory=list)  # every driver run: kind, code, seconds
    rows: int = 0
    reruns: int = 0  # slots with more than one session
    review: int = 0
    violations: list[str] = dataclasses.field(default_factory=list)
    root: str = ""


class Fleet:
    def __init__(self, base: str, args, env: dict):
        self.base, self.args, self.env = base, args, env
        self.file = os.path.join(base, "fleet.yaml")
        data = {
            "name": "chaos",
            "profile": DEMO,
            "capture_root": os.path.join(base, "fleets"),
            "concurrency": args.concurrency,
            "set": {"session.max_steps": args.steps},
            "matrix": {"game.seed": list(range(1, args.sessions + 1))},
        }
        with open(self.file, "w", encoding="utf-8") as fh:
            yaml.safe_dump(data, fh)

    def driver(self, root: str, resume: bool, log: str) -> subprocess.Popen:
        cmd = [
            sys.executable,
            "-m",
            "supervisor",
            "fleet",
            "start",
            "--progress",
            "plain",
            "--runtime-dir",
            os.path.join(os.path.dirname(root), "runtime"),
        ]
        cmd += ["--resume", root] if resume else [self.file, "--fleet-root", root]
        if self.args.ray_address:
            cmd += ["--ray-address", self.args.ray_address]
        with open(log, "ab") as out:
            out.write(f"\n$ {' '.join(cmd)}\n".encode())
            return subprocess.Popen(
                cmd, cwd=REPO, stdout=out, stderr=subprocess.STDOUT, env=self.env, start_new_session=True
            )


def wait_exit(proc: subprocess.Popen, timeout: float = DRIVER_DEADLINE_S) -> int | None:
    try:
        return proc.wait(timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        return None


def run_to_end(fleet: Fleet, root: str, log: str, trial: Trial) -> int | None:
    """Resume (or, when the driver died before it recorded the fleet, start it again) until a
    driver ends by itself."""
    resume = layout.is_fleet_root(root)
    start = time.monotonic()
    code = wait_exit(fleet.driver(root, resume, log))
    trial.drivers.append(
        {"kind": "resume" if resume else "restart", "code": code, "s": round(time.monotonic() - start, 1)}
    )
    if code is None:
        trial.violations.append(f"the {'resume' if resume else 'restart'} did not end in {DRIVER_DEADLINE_S:.0f}s")
    return code


def fleet_processes(proc: subprocess.Popen, root: str) -> list[psutil.Process]:
    """The driver and everything under it, and every live supervisor of the fleet with its
    keeper and actors (on Ray they run under Ray's workers, not under the driver)."""
    found: dict[int, psutil.Process] = {}
    tops = [proc.pid] + [int(r["pid"]) for r in control.live_supervisors(root)]
    for pid in tops:
        try:
            top = psutil.Process(pid)
            if pid != proc.pid and "prctl" in " ".join(top.parent().cmdline()):
                found[top.ppid()] = top.parent()  # its keeper
            for p in (top, *top.children(recursive=True)):
                found[p.pid] = p
        except psutil.Error:
            continue
    return list(found.values())


def armed_session(root: str, k: int, exclude: set[str]) -> dict | None:
    """The runtime record of a running session (not in ``exclude``, not stopping) whose journal
    has at least ``k`` action attempts."""
    for rec in control.live_supervisors(root):
        if rec.get("session_id") in exclude:
            continue
        rows = read_journal(
            os.path.join(
                layout.capture_dir(os.path.join(root, rec["slot"])),
                "sessions",
                str(rec.get("session_id")),
                "events.jsonl",
            )
        )
        if (
            rows
            and not any(r.get("event") in ("session_stopping", "session_end") for r in rows)
            and sum(r.get("event") == "action_attempt" for r in rows) >= k
        ):
            return rec
    return None


def wait_moment(
    proc: subprocess.Popen, root: str, at_s: float, started: float, when: str, k: int, exclude: set[str] = frozenset()
) -> dict | None:
    """Wait for the fault's moment: the session it found (``when == "session"``) or ``{}``;
    None when the driver ended first."""
    while when == "random" and time.monotonic() - started < at_s:
        if proc.poll() is not None:
            return None
        time.sleep(0.01)
    while when == "session":
        found = armed_session(root, k, set(exclude))
        if found:
            return found
        if proc.poll() is not None:
            return None
        time.sleep(0.01)
    return {} if proc.poll() is None else None


def all_sessions(root: str) -> set[str]:
    return {sid for slot in layout.slots(root) for sid in session_ids(slot)}


def strike(fault: str, proc: subprocess.Popen, root: str, trial: Trial, armed: dict) -> None:
    if fault in ("driver:kill", "resume:kill"):
        os.killpg(proc.pid, signal.SIGKILL)
        trial.landed += 1
        proc.wait()
    elif fault == "driver:term":
        proc.send_signal(signal.SIGTERM)
        code = wait_exit(proc)
        trial.drivers[-1]["code"] = code
        if code in (143, 0, 1):
            trial.landed += code == 143
        else:
            trial.violations.append(f"the driver exited {code} after SIGTERM (expected 143, or 0/1 had it just ended)")
    elif fault == "all:kill":
        procs = fleet_processes(proc, root)
        for p in procs:
            try:
                p.kill()
            except psutil.Error:
                pass
        trial.landed += 1
        proc.wait()
        trial.detail = f"{len(procs)} processes killed at once"
    elif fault == "supervisor:kill":
        while proc.poll() is None:
            live = [armed] if armed else control.live_supervisors(root)
            if live:
                try:
                    os.kill(int(live[0]["pid"]), signal.SIGKILL)
                    trial.landed += 1
                    trial.detail = f"{live[0]['slot']} supervisor pid {live[0]['pid']}"
                    return
                except OSError:
                    armed = {}
            time.sleep(0.02)


def run_trial(fleet: Fleet, trial: Trial, ref_wall: float, rng: random.Random, when: str) -> None:
    root = trial.root
    log = os.path.join(os.path.dirname(root), "drivers.log")
    trial.at_s = round(rng.uniform(0.0, ref_wall), 2)
    k = rng.randrange(max(1, fleet.args.steps // 2))
    started = time.monotonic()
    proc = fleet.driver(root, False, log)
    trial.drivers.append({"kind": "start", "code": None, "s": None})
    armed = wait_moment(proc, root, trial.at_s, started, when, k)
    if armed is None:
        trial.detail = "the fleet ended before the moment: nothing to strike"
        trial.drivers[-1].update(code=wait_exit(proc), s=round(time.monotonic() - started, 1))
        return
    if when == "session":
        trial.at_s = round(time.monotonic() - started, 2)
    strike(trial.fault, proc, root, trial, armed)
    trial.drivers[-1]["code"] = proc.poll() if proc.poll() is not None else wait_exit(proc)
    trial.drivers[-1]["s"] = round(time.monotonic() - started, 1)
    if trial.fault == "supervisor:kill":
        return  # the driver lives on and finishes the fleet itself
    if trial.fault == "resume:kill":
        resumed = layout.is_fleet_root(root)
        before = all_sessions(root)
        at, k = rng.uniform(0.0, ref_wall), rng.randrange(max(1, fleet.args.steps // 2))
        started = time.monotonic()
        second = fleet.driver(root, resumed, log)
        trial.drivers.append({"kind": "resume" if resumed else "restart", "code": None, "s": None})
        if wait_moment(second, root, at, started, when, k, before) is not None:
            os.killpg(second.pid, signal.SIGKILL)
            trial.landed += 1
            second.wait()
            trial.detail = f"resume killed at {time.monotonic() - started:.2f}s"
        else:
            trial.detail = "the resume ended before its moment"
        trial.drivers[-1].update(
            code=second.poll() if second.poll() is not None else wait_exit(second),
            s=round(time.monotonic() - started, 1),
        )
        if second.returncode != -signal.SIGKILL:
            return
    run_to_end(fleet, root, log, trial)


# -- the judge --------------------------------------------------------------------------------


def read_journal(path: str) -> list[dict]:
    out = []
    try:
        with open(path, "rb") as fh:
            for line in fh:
                try:
                    out.append(json.loads(line))
                except ValueError:
                    pass
    except OSError:
        pass
    return out


def judge(trial: Trial, sessions: int, reference: list[dict]) -> None:
    root, v = trial.root, trial.violations
    path = os.path.join(root, layout.RESULTS)
    rows = []
    try:
        with open(path, encoding="utf-8") as fh:
            for i, line in enumerate(fh, 1):
                try:
                    rows.append(json.loads(line))
                except ValueError:
                    v.append(f"results.jsonl line {i} does not parse")
    except OSError:
        v.append("no results.jsonl")
    trial.rows = len(rows)
    indices = sorted(r.get("index") for r in rows)
    if indices != list(range(sessions)):
        v.append(f"rows for sessions {indices}, planned {list(range(sessions))}")
    by_index = {r.get("index"): r for r in rows}
    for plan_index in range(sessions):
        row = by_index.get(plan_index)
        if row is not None:
            judge_slot(trial, row, os.path.join(root, layout.slot_name(plan_index)))
    compare(trial, rows, reference)
    bad = any(r.get("outcome") in ("failed", "timed_out", "needs_review") for r in rows)
    final = trial.drivers[-1] if trial.drivers else {}
    if final.get("code") != (1 if bad else 0):
        v.append(f"the last driver ({final.get('kind')}) exited {final.get('code')}, its rows say {1 if bad else 0}")
    verify = subprocess.run(
        [sys.executable, "-m", "supervisor", "capture", "verify", root],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
    )
    if verify.returncode not in (0, 3):
        v.append(f"capture verify exited {verify.returncode}: {verify.stdout[-300:]}")
    end = time.monotonic() + LEFTOVER_S
    left = leftovers(root)
    while left and time.monotonic() < end:
        time.sleep(0.2)
        left = leftovers(root)
    if left:
        v.append(f"left running {LEFTOVER_S:.0f}s after the last driver: {left}")


def judge_slot(trial: Trial, row: dict, slot: str) -> None:
    v, name = trial.violations, os.path.basename(slot)
    ids = session_ids(slot)
    if len(ids) > 1:
        trial.reruns += 1
    spans = []
    for k, sid in enumerate(ids):
        journal = read_journal(os.path.join(layout.capture_dir(slot), "sessions", sid, "events.jsonl"))
        if not journal:
            continue
        attempts = [r.get("attempt_id") for r in journal if r.get("event") == "action_attempt"]
        results = {r.get("attempt_id") for r in journal if r.get("event") == "action_result"}
        open_attempts = [a for a in attempts if a not in results]
        if len(set(attempts)) != len(attempts):
            v.append(f"{name}/{sid}: an action attempted twice")
        for stats in (r.get("stats") or {} for r in journal if r.get("event") == "builtin_game_stats"):
            if (
                stats.get("posts", 0) > len(attempts)
                or stats.get("duplicate_guarded_actions")
                or stats.get("intent_violations")
            ):
                v.append(
                    f"{name}/{sid}: the game counted {stats.get('posts')} POSTs for {len(attempts)} attempts, "
                    f"{stats.get('duplicate_guarded_actions')} duplicated, {stats.get('intent_violations')}"
                )
        end = next((r for r in reversed(journal) if r.get("event") == "session_end"), None)
        spans.append((journal[0].get("recorded_at", ""), journal[-1].get("recorded_at", ""), sid))
        if k < len(ids) - 1:
            if end is not None and end.get("reason") not in STOPPED:
                v.append(f"{name}: session {sid} ended by itself ({end.get('reason')}) and the slot ran again")
            if open_attempts:
                v.append(f"{name}: session {sid} had {open_attempts[0]} in flight and the slot ran again")
        else:
            if row.get("session_id") != sid:
                v.append(f"{name}: the row names session {row.get('session_id')}, the newest is {sid}")
            review = row.get("outcome") == "needs_review"
            trial.review += review
            if review != bool(open_attempts):
                v.append(f"{name}: outcome {row.get('outcome')} but {len(open_attempts)} attempt(s) in flight")
    for (_, end_a, a), (start_b, _, b) in zip(spans, spans[1:]):
        if start_b <= end_a:
            v.append(f"{name}: sessions {a} and {b} overlap")


def compare(trial: Trial, rows: list[dict], reference: list[dict]) -> None:
    review = {r["index"] for r in rows if r.get("outcome") == "needs_review"}
    ref = {r["index"]: r for r in reference}
    for r in rows:
        if r["index"] in review:
            continue
        want = {k: ref.get(r["index"], {}).get(k) for k in COMPARED}
        got = {k: r.get(k) for k in COMPARED}
        if got != want:
            diff = {k: (got[k], want[k]) for k in COMPARED if got[k] != want[k]}
            trial.violations.append(f"{r.get('slot')} differs from the unfaulted fleet (got, want): {diff}")
    if not review:
        strip = [{k: v for k, v in c.items() if k not in CELL_IGNORED} for c in cell_rows(rows)]
        want = [{k: v for k, v in c.items() if k not in CELL_IGNORED} for c in cell_rows(reference)]
        if strip != want:
            trial.violations.append("fleet report differs from the unfaulted fleet's")


def leftovers(root: str) -> list[str]:
    out = [f"supervisor {r['pid']} ({r['slot']})" for r in control.live_supervisors(root)]
    for slot in layout.slots(root):
        out += [
            f"{actor} {pid} ({os.path.basename(slot)})"
            for _, actor, pid in control.live_actors(slot, session_ids(slot))
        ]
    return out


# -- the campaign -----------------------------------------------------------------------------


def reference_run(fleet: Fleet, base: str) -> tuple[list[dict], float]:
    root = os.path.join(base, "reference", "root")
    os.makedirs(os.path.dirname(root))
    started = time.monotonic()
    code = wait_exit(fleet.driver(root, False, os.path.join(base, "reference", "drivers.log")))
    wall = time.monotonic() - started
    with open(os.path.join(root, layout.RESULTS), encoding="utf-8") as fh:
        rows = [json.loads(line) for line in fh]
    if code != 0 or len(rows) != fleet.args.sessions or any(r["outcome"] != "ok" for r in rows):
        raise SystemExit(
            f"the reference fleet did not run cleanly (exit {code}): {[(r['slot'], r['outcome']) for r in rows]}"
        )
    return sorted(rows, key=lambda r: r["index"]), wall


def campaign(args) -> dict:
    rng = random.Random(args.seed)
    faults = args.faults.split(",") if args.faults else None
    base = args.keep or tempfile.mkdtemp(prefix="gamerig-fleet-chaos-")
    os.makedirs(base, exist_ok=True)
    env = dict(os.environ)
    head = None
    if args.ray:
        head = LocalRayHead(num_cpus=args.ray_cpus).wait_ready()
        args.ray_address, env = head.address, head.env
    try:
        fleet = Fleet(base, args, env)
        reference, ref_wall = reference_run(fleet, base)
        trials = []
        for n in range(args.trials):
            fault = faults[n % len(faults)] if faults else rng.choice(FAULTS)
            trial = Trial(n, fault, root=os.path.join(base, f"trial-{n:03d}", "root"))
            os.makedirs(os.path.dirname(trial.root))
            run_trial(fleet, trial, ref_wall, rng, args.when)
            judge(trial, args.sessions, reference)
            trials.append(trial)
            if not args.json:
                print(line(trial), flush=True)
    finally:
        if head is not None:
            head.stop()
    report = summarize(trials, args, ref_wall, base)
    if not args.keep:
        shutil.rmtree(base, ignore_errors=True)
    return report


def line(t: Trial) -> str:
    drivers = " ".join(f"{d['kind']}={d['code']}" for d in t.drivers)
    return (
        f"trial {t.n:3d} {t.fault:<16} at {t.at_s:6.2f}s landed {t.landed}  rows {t.rows}  reruns {t.reruns}  "
        f"review {t.review}  [{drivers}]  {t.detail}"
        + ("\n    VIOLATIONS: " + "\n    ".join(t.violations) if t.violations else "")
    )


def summarize(trials: list[Trial], args, ref_wall: float, base: str) -> dict:
    by_fault: dict[str, dict] = {}
    for t in trials:
        f = by_fault.setdefault(t.fault, {"trials": 0, "landed": 0, "kills": 0, "violating": 0})
        f["trials"] += 1
        f["landed"] += bool(t.landed)
        f["kills"] += t.landed
        f["violating"] += bool(t.violations)
    return {
        "trials": len(trials),
        "kills": sum(t.landed for t in trials),
        "violating_trials": sum(bool(t.violations) for t in trials),
        "violations": sum(len(t.violations) for t in trials),
        "reruns": sum(t.reruns for t in trials),
        "needs_review": sum(t.review for t in trials),
        "by_fault": by_fault,
        "reference_wall_s": round(ref_wall, 2),
        "base": base,
        "settings": {
            k: getattr(args, k)
            for k in ("trials", "seed", "faults", "sessions", "steps", "concurrency", "when", "ray_address")
        },
        "runs": [dataclasses.asdict(t) for t in trials],
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--trials", type=int, default=20)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--faults", help=f"cycle through these instead of drawing ({', '.join(FAULTS)})")
    ap.add_argument("--sessions", type=int, default=4)
    ap.add_argument("--steps", type=int, default=60)
    ap.add_argument("--concurrency", type=int, default=2)
    ap.add_argument("--when", choices=("random", "session"), default="random")
    ap.add_argument("--ray", action="store_true", help="run every fleet on a one-node Ray head started here")
    ap.add_argument("--ray-cpus", type=int, default=2)
    ap.add_argument("--ray-address", help="run every fleet on this Ray cluster (its token in the environment)")
    ap.add_argument("--keep", metavar="DIR", help="keep every fleet root under DIR")
    ap.add_argument("--json", action="store_true", help="print one JSON report")
    args = ap.parse_args(argv)
    for f in (args.faults or "").split(",") if args.faults else []:
        if f not in FAULTS:
            ap.error(f"unknown fault {f!r}; known: {', '.join(FAULTS)}")
    report = campaign(args)
    if args.json:
        print(json.dumps(report, indent=1))
    else:
        print(
            f"\n{report['trials']} trials, {report['kills']} kills landed, {report['violating_trials']} trials "
            f"with violations ({report['violations']} violations); {report['reruns']} sessions run again, "
            f"{report['needs_review']} need review; by fault: "
            + ", ".join(f"{k} {v['landed']}/{v['trials']}" for k, v in sorted(report["by_fault"].items()))
        )
    return 1 if report["violating_trials"] else 0


if __name__ == "__main__":
    sys.exit(main())
