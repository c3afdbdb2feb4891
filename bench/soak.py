"""Soak: ``python bench/soak.py --steps N [--profile P] [--every S] [--kill-recorder-at K,...]``.

One long session (``supervisor start`` as a subprocess; by default the hostile profile,
every knob on, several runs in a row) while this script samples, every ``--every`` seconds,
the resident memory (RSS) of each actor process and the steps taken so far (observation rows
in the journal, read incrementally). At each ``--kill-recorder-at`` step count it kills the
recorder with SIGKILL; the supervisor restarts it, the new recorder resumes the same journal
and writes a ``recorder_resumed`` row. Resume time = that row's ``recorded_at`` minus the new
recorder process's start time (so it includes the interpreter's start-up and imports; the
smallest journal's figure is that floor). The start time is the kernel's (``/proc/PID/stat``,
in clock ticks since boot) on a boot time taken from ``/proc/uptime``: psutil's
``create_time()`` adds the ticks to ``/proc/stat``'s ``btime``, whole seconds, so it reads up
to 1 s early and would make every resume look that much longer.

Prints the RSS table over time, each actor's growth after warm-up (KB per 1,000 steps, a
least-squares slope over the samples past ``--warmup`` of the steps), and the resume table.
Target: flat RSS after warm-up, resume under 0.5 s at any journal size.

The quick variant runs in the suite (``tests/chaos/test_soak_quick.py``); the long soak is
``python bench/soak.py --steps 200000`` (docs/reliability.md, "Long runs").
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import signal
import subprocess
import sys
import tempfile
import time

import psutil

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, REPO)
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from chaos_inject import ProcessWatch  # noqa: E402

import protocol.events as ev  # noqa: E402
from protocol.journal import encode_row, iter_lines, parse_line  # noqa: E402

PROFILES = {
    "hostile": os.path.join(REPO, "run", "profiles", "hostile.yaml"),
    "demo": os.path.join(REPO, "run", "profiles", "demo.yaml"),
}


def kind_pattern(kind: str) -> bytes:
    """The bytes every row of ``kind`` holds: ``"event":"<kind>"`` as the writer encodes it
    (``protocol.journal.encode_row``, canonical JSON without spaces)."""
    return encode_row({"event": kind})[1:-1]


OBSERVATION = kind_pattern(ev.Observation.KIND)
RESUMED = kind_pattern(ev.RecorderResumed.KIND)


class JournalTail:
    """Counts observation rows and finds ``recorder_resumed`` rows, reading only new bytes.
    Lines come from the one reader (``iter_lines``) unparsed, and are matched by their bytes:
    parsing every row of a long soak would make this sampler the busiest process on the
    machine it measures. Only the few ``recorder_resumed`` rows are parsed."""

    def __init__(self, capture: str):
        self.capture, self.path = capture, None
        self.offset = 0  # the end of the last whole line read: the next poll starts there
        self.seen = 0  # the bytes read so far, an unfinished last line included
        self.steps, self.resumed, self.rows = 0, [], 0

    def poll(self) -> None:
        if self.path is None:
            found = [
                os.path.join(r, f)
                for r, _, fs in os.walk(os.path.join(self.capture, "sessions"))
                for f in fs
                if f == "events.jsonl"
            ]
            if not found:
                return
            self.path = found[0]
        for line in iter_lines(self.path, offset=self.offset, parse=False):
            end = line.offset + len(line.data) + line.terminated
            self.seen = max(self.seen, end)
            if not line.terminated:  # still being written: read it again next time
                break
            self.offset = end
            self.rows += 1
            if OBSERVATION in line.data:
                self.steps += 1
            elif RESUMED in line.data and (row := parse_line(line.data)) is not None:
                stamp = row["recorded_at"]
                self.resumed.append(dt.datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp())


def rss_by_actor(watch: ProcessWatch, sup: psutil.Process) -> dict[str, float]:
    out = {}
    for name, pid in watch.scan().items():
        try:
            out[name] = psutil.Process(pid).memory_info().rss / 2**20
        except psutil.Error:
            continue
    try:
        out["supervisor"] = sup.memory_info().rss / 2**20
    except psutil.Error:
        pass
    return out


def slope_kb_per_1000(points: list[tuple[int, float]]) -> float | None:
    """Least-squares slope of (steps, MB) in KB per 1,000 steps."""
    if len(points) < 3:
        return None
    n = len(points)
    mx = sum(p[0] for p in points) / n
    my = sum(p[1] for p in points) / n
    sxx = sum((p[0] - mx) ** 2 for p in points)
    if sxx == 0:
        return None
    sxy = sum((p[0] - mx) * (p[1] - my) for p in points)
    return sxy / sxx * 1024 * 1000


def started_at(pid: int) -> float:
    """The wall-clock time the process ``pid`` started, to the kernel's clock tick (10 ms)."""
    with open(f"/proc/{pid}/stat", "rb") as fh:
        fields = fh.read().rsplit(b")", 1)[1].split()  # after the command name, which may hold spaces
    ticks = int(fields[19])  # field 22 of proc(5), "starttime"; fields[0] is field 3
    with open("/proc/uptime", "rb") as fh:
        uptime = float(fh.read().split()[0])
    boot = time.time() - uptime
    return boot + ticks / os.sysconf("SC_CLK_TCK")


def kill_recorder(watch: ProcessWatch, tail: JournalTail, timeout: float = 60) -> dict:
    old = watch.scan().get("recorder")
    before = len(tail.resumed)
    rows, size = tail.rows, tail.seen
    os.kill(old, signal.SIGKILL)
    end = time.monotonic() + timeout
    new = None
    while time.monotonic() < end:
        pid = watch.scan().get("recorder")
        if pid and pid != old:
            new = psutil.Process(pid)
            break
        time.sleep(0.02)
    created = started_at(new.pid) if new else None
    while time.monotonic() < end and len(tail.resumed) == before:
        tail.poll()
        time.sleep(0.02)
    took = tail.resumed[-1] - created if created and len(tail.resumed) > before else None
    return {"rows": rows, "bytes": size, "resume_s": took}


def soak(args) -> int:
    capture = args.capture or tempfile.mkdtemp(prefix="gamerig-soak-")
    cmd = [
        sys.executable,
        "-m",
        "supervisor",
        "start",
        PROFILES.get(args.profile, args.profile),
        "--set",
        f"capture.root={capture}",
        "--set",
        f"session.max_steps={args.steps}",
        "--set",
        "session.stop_on_run_end=false",
    ]
    log = open(os.path.join(capture, "supervisor.log"), "w") if os.path.isdir(capture) else subprocess.DEVNULL
    proc = subprocess.Popen(cmd, cwd=REPO, stdout=log, stderr=subprocess.STDOUT)
    sup, watch, tail = psutil.Process(proc.pid), ProcessWatch(proc.pid), JournalTail(capture)
    kills = sorted(args.kill_recorder_at)
    samples, resumes = [], []
    start = time.monotonic()
    next_sample = 0.0
    print(f"soak: {args.steps} steps of {args.profile}; capture {capture}", flush=True)
    while proc.poll() is None:
        time.sleep(0.05)
        tail.poll()
        if kills and tail.steps >= kills[0]:
            kills.pop(0)
            resumes.append(kill_recorder(watch, tail))
            print(
                f"  recorder killed at {resumes[-1]['rows']} rows: resumed in {_s(resumes[-1]['resume_s'])}", flush=True
            )
        if time.monotonic() >= next_sample:
            rss = rss_by_actor(watch, sup)
            samples.append((time.monotonic() - start, tail.steps, rss))
            print(
                f"  {samples[-1][0]:7.0f}s {tail.steps:8d} steps  total {sum(rss.values()):7.1f} MB  "
                + " ".join(f"{k}={v:.0f}" for k, v in sorted(rss.items())),
                flush=True,
            )
            next_sample = time.monotonic() + args.every
    report(samples, resumes, args.warmup, proc.returncode)
    return 0


def report(samples, resumes, warmup: float, code: int) -> None:
    print(f"\nsession exit code {code}; {samples[-1][1] if samples else 0} steps")
    samples = [s for s in samples if s[1] > 0]  # from the first observation on: every actor runs
    last = max((s[1] for s in samples), default=0)
    names = sorted({k for s in samples for k in s[2]})
    print(f"{'actor':<14}{'first MB':>10}{'last MB':>10}{'KB/1000 steps after warm-up':>30}")
    for name in names:
        pts = [(s[1], s[2][name]) for s in samples if name in s[2]]
        late = [p for p in pts if p[0] >= warmup * last]
        slope = slope_kb_per_1000(late)
        print(f"{name:<14}{pts[0][1]:>10.1f}{pts[-1][1]:>10.1f}{_n(slope):>30}")
    totals = [(s[1], sum(s[2].values())) for s in samples]
    late = [p for p in totals if p[0] >= warmup * last]
    print(f"{'total':<14}{totals[0][1]:>10.1f}{totals[-1][1]:>10.1f}{_n(slope_kb_per_1000(late)):>30}")
    if resumes:
        done = [r["resume_s"] for r in resumes if r["resume_s"] is not None]
        floor = min(done) if done else None
        print(f"\n{'journal rows':>14}{'bytes':>14}{'resume s':>10}{'above the smallest':>20}")
        for r in resumes:
            above = r["resume_s"] - floor if r["resume_s"] is not None and floor is not None else None
            print(f"{r['rows']:>14}{r['bytes']:>14}{_s(r['resume_s']):>10}{_s(above):>20}")
        print(
            "(resume s counts from the new recorder process's start: interpreter, imports, "
            "handshake and the journal work; the growth above the smallest is the journal work)"
        )


def _n(v) -> str:
    return "-" if v is None else f"{v:.1f}"


def _s(v) -> str:
    return "-" if v is None else f"{v:.3f}"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--steps", type=int, default=20_000)
    ap.add_argument("--profile", default="hostile", help="hostile, demo, or a profile path")
    ap.add_argument("--every", type=float, default=10.0, help="seconds between RSS samples")
    ap.add_argument("--warmup", type=float, default=0.2, help="fraction of the steps before the slope")
    ap.add_argument(
        "--kill-recorder-at",
        type=lambda s: [int(x) for x in s.split(",") if x],
        default=[],
        help="step counts at which to SIGKILL the recorder, e.g. 1000,10000",
    )
    ap.add_argument("--capture", help="capture root (default: a new temporary directory)")
    return soak(ap.parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
