"""``supervisor view`` on large sessions: how fast a session opens, and the server's memory.

    python bench/view.py                       # sessions of 1k, 24k and 200k steps, a 16-session fleet
    python bench/view.py --steps 600 --fleet 2 --check   # the quick variant the test suite runs

Sessions are built from a real demo session (``supervisor start run/profiles/demo.yaml``,
run first into a temporary capture): its steps are repeated with new ids, sequences, times
and hash chain, each observation file a hard link to the demo's file it copies (the bytes
the viewer reads are the demo's). The fleet is 16 copies of demo sessions under a fleet
root with its ``fleet.json`` and ``results.jsonl``.

For each size, a fresh ``supervisor view`` process is started on the capture, and the bench
measures, as a browser opening the session would ask:

* ``first answer``: from the process's start to its first answer (start-up and discovery);
* ``open``: the four answers the session page needs (the list, the summary, the chart
  series, the first page of steps), asked one after the other, as soon as the server answers;
* ``last page``: the page holding the last step, once the journal is followed to its end;
* ``indexed``: from the start until the journal is followed to its end and every
  observation's figures are read (the charts complete);
* ``RSS``: the server's resident memory, the peak over the run and at the end, and the
  baseline of a server over an empty capture (same run), so the growth per step shows.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.request

import psutil

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, REPO)

from protocol.journal import GENESIS, encode_row, iter_lines, line_digest  # noqa: E402
from supervisor.capture.session import verify_session  # noqa: E402
from supervisor.fleet.results import journal_facts  # noqa: E402

ID_FIELDS = {"observation_id": "o", "proposal_id": "p", "attempt_id": "a", "after_attempt_id": "a"}


def demo_session(base: str) -> str:
    """Run the demo once into ``base``; return its session directory."""
    capture = os.path.join(base, "demo-capture")
    subprocess.run(
        [
            sys.executable,
            "-m",
            "supervisor",
            "start",
            os.path.join(REPO, "run/profiles/demo.yaml"),
            "--set",
            f"capture.root={capture}",
            "--set",
            f"supervisor.runtime_dir={base}/rt",
            "--set",
            "supervisor.progress=off",
        ],
        cwd=REPO,
        check=True,
        capture_output=True,
        timeout=120,
    )
    sessions = os.path.join(capture, "sessions")
    return os.path.join(sessions, sorted(os.listdir(sessions))[0])


def _renumber(value: str, offset: int) -> str:
    prefix, _, n = value.partition("-")
    return f"{prefix}-{int(n) + offset:06d}" if n.isdigit() else value


def synth_session(src: str, capture: str, sid: str, steps: int) -> str:
    """A session of ``steps`` steps built from ``src``'s step rows (see the module docstring)."""
    rows = [line.row for line in iter_lines(os.path.join(src, "events.jsonl")) if line.row]
    head = [r for r in rows if r["event"] in ("session_start", "actor_start")]
    first_obs = next(i for i, r in enumerate(rows) if r["event"] == "observation")
    last_obs = max(i for i, r in enumerate(rows) if r["event"] == "observation")
    body = [
        r
        for r in rows[first_obs:last_obs]
        if r["event"] in ("observation", "proposal", "proposal_status", "action_attempt", "action_result")
    ]
    per_loop = sum(r["event"] == "observation" for r in body)
    out_dir = os.path.join(capture, "sessions", sid)
    os.makedirs(os.path.join(out_dir, "observations"))
    prev, seq, t0 = GENESIS, 0, time.time() - steps
    with open(os.path.join(out_dir, "events.jsonl"), "wb") as fh:

        def put(row: dict) -> None:
            nonlocal prev, seq
            seq += 1
            row = {**row, "sequence": seq, "session": sid, "prev_sha256": prev}
            line = encode_row(row)
            fh.write(line + b"\n")
            prev = line_digest(line)

        for r in head:
            put(dict(r))
        made, loop, pending = 0, 0, None
        while made < steps:
            offset = loop * per_loop
            for r in body:
                if r["event"] == "observation" and made >= steps:
                    break
                row = dict(r)
                for k in ID_FIELDS:
                    if isinstance(row.get(k), str):
                        row[k] = _renumber(row[k], offset)
                if row["event"] == "action_attempt":
                    pending = row["attempt_id"]
                if row["event"] == "observation":
                    row.pop("after_attempt_id", None)
                    if pending:  # the first read after an attempt names it (docs/journal.md)
                        row["after_attempt_id"], pending = pending, None
                    made += 1
                    number = int(row["observation_id"][2:])
                    name = f"{number:06d}.json"
                    os.link(
                        os.path.join(src, "observations", os.path.basename(r["path"])),
                        os.path.join(out_dir, "observations", name),
                    )
                    row["path"] = f"sessions/{sid}/observations/{name}"
                    row["step"] = made
                stamp = time.gmtime(t0 + seq * 0.2)
                row["recorded_at"] = time.strftime("%Y-%m-%dT%H:%M:%S", stamp) + ".000000Z"
                put(row)
            loop += 1
        put(
            {
                "event": "session_end",
                "exit_code": 0,
                "reason": "max_steps",
                "schema_version": 1,
                "recorded_at": time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(t0 + seq * 0.2)) + ".000000Z",
                "ts": "",
                "outcome_file_candidates": None,
                "awaiting_observation_after_attempt": [pending] if pending else [],
                "unresolved_attempts": [],
            }
        )
    return out_dir


def synth_fleet(src: str, base: str, n: int) -> str:
    root = os.path.join(base, "fleet-bench")
    rows = []
    for i in range(n):
        slot = os.path.join(root, f"s{i:04d}")
        sid = f"20260101T{i:06d}Z-bench{i:04d}"
        capture = os.path.join(slot, "capture")
        shutil.copytree(src, os.path.join(capture, "sessions", sid), copy_function=os.link)
        cell = f"policy.module={'sts2' if i % 2 == 0 else 'other'}"
        rows.append(
            {
                "fleet": "bench",
                "index": i,
                "slot": f"s{i:04d}",
                "cell": cell,
                "repeat": i // 2,
                "outcome": "ok",
                "session_id": sid,
                "policy.module": cell.split("=")[1],
                "session_dir": os.path.relpath(os.path.join(capture, "sessions", sid), root),
                **journal_facts(os.path.join(capture, "sessions", sid)),
            }
        )
    with open(os.path.join(root, "fleet.json"), "w") as fh:
        json.dump(
            {"name": "bench", "state": "finished", "sessions": n, "matrix": {"policy.module": ["sts2", "other"]}}, fh
        )
    with open(os.path.join(root, "results.jsonl"), "w") as fh:
        fh.writelines(json.dumps(r) + "\n" for r in rows)
    return root


class Viewer:
    def __init__(self, path: str):
        self.started = time.perf_counter()
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "supervisor", "view", path, "--port", "0"],
            cwd=REPO,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        line = self.proc.stdout.readline()
        self.url = line.split()[2]
        self.ps = psutil.Process(self.proc.pid)
        self.peak = 0

    def get(self, path: str) -> dict:
        with urllib.request.urlopen(self.url + path, timeout=60) as r:
            data = json.loads(r.read())
        self.peak = max(self.peak, self.ps.memory_info().rss)
        return data

    def rss(self) -> int:
        rss = self.ps.memory_info().rss
        self.peak = max(self.peak, rss)
        return rss

    def close(self) -> None:
        self.proc.terminate()
        self.proc.wait(10)


def wait_first(v: Viewer, deadline: float = 60) -> float:
    end = time.monotonic() + deadline
    while True:
        try:
            v.get("api/meta")
            return time.perf_counter() - v.started
        except OSError:
            if time.monotonic() > end:
                raise
            time.sleep(0.01)


def measure_session(path: str, key: str) -> dict:
    v = Viewer(path)
    try:
        first = wait_first(v)
        t = time.perf_counter()
        listed = v.get("api/sessions")
        summary = v.get(f"api/session/{key}")
        series = v.get(f"api/session/{key}/series")
        page = v.get(f"api/session/{key}/page/0")
        opened = time.perf_counter() - t
        assert any(s["key"] == key for s in listed["sessions"]) and page["steps"], "the session did not open"
        while True:  # follow to the end, read every figure
            s = v.get(f"api/session/{key}")
            if s["figures_read"] >= s["steps"] > 0 and not s["live"] and s["end"] is not None:
                break
            v.rss()
            time.sleep(0.05)
        indexed = time.perf_counter() - v.started
        t = time.perf_counter()
        last = v.get(f"api/session/{key}/page/{(s['steps'] - 1) // 100 * 100}")
        last_page = time.perf_counter() - t
        assert last["steps"][-1]["index"] == s["steps"] - 1
        return {
            "steps": s["steps"],
            "first_answer_s": first,
            "open_s": opened,
            "open_steps_at": summary["steps"],
            "series_points": len(series["columns"].get("step", [])),
            "last_page_s": last_page,
            "indexed_s": indexed,
            "rss_end_mb": v.rss() / 1e6,
            "rss_peak_mb": v.peak / 1e6,
        }
    finally:
        v.close()


def measure_fleet(root: str) -> dict:
    v = Viewer(root)
    try:
        first = wait_first(v)
        key = os.path.basename(root)
        t = time.perf_counter()
        page = v.get(f"api/fleet/{key}")
        opened = time.perf_counter() - t
        while page["floors_pending"]:
            time.sleep(0.05)
            page = v.get(f"api/fleet/{key}")
        complete = time.perf_counter() - v.started
        return {
            "steps": sum(c["steps"] for c in page["cells"]),
            "first_answer_s": first,
            "open_s": opened,
            "indexed_s": complete,
            "rss_end_mb": v.rss() / 1e6,
            "rss_peak_mb": v.peak / 1e6,
            "sessions": sum(c["sessions"] for c in page["cells"]),
        }
    finally:
        v.close()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, nargs="+", default=[1000, 24000, 200000])
    ap.add_argument("--fleet", type=int, default=16, help="sessions in the fleet (0: none)")
    ap.add_argument("--json", action="store_true")
    ap.add_argument(
        "--check",
        action="store_true",
        help="verify each built session with the capture verifier first (exit 1 if damaged)",
    )
    args = ap.parse_args(argv)
    base = tempfile.mkdtemp(prefix="gamerig-view-bench-")
    results = {}
    try:
        src = demo_session(base)
        empty = os.path.join(base, "empty")
        os.makedirs(os.path.join(empty, "sessions"))
        v = Viewer(empty)
        wait_first(v)
        results["baseline_rss_mb"] = v.rss() / 1e6
        v.close()
        for n in args.steps:
            capture = os.path.join(base, f"c{n}")
            sid = f"20260101T000000Z-bench{n}"
            t = time.perf_counter()
            built = synth_session(src, capture, sid, n)
            print(f"built a {n}-step session in {time.perf_counter() - t:.1f}s", file=sys.stderr)
            if args.check:
                damage = [f.message for f in verify_session(built).report.findings if f.severity == "damaged"]
                if damage:
                    print(f"the built {n}-step session is damaged: {damage[:3]}", file=sys.stderr)
                    return 1
            results[f"session_{n}"] = measure_session(capture, sid)
            shutil.rmtree(capture)
        if args.fleet:
            results[f"fleet_{args.fleet}"] = measure_fleet(synth_fleet(src, base, args.fleet))
    finally:
        shutil.rmtree(base, ignore_errors=True)
    if args.json:
        print(json.dumps(results, indent=2))
        return 0
    print(f"server over an empty capture: {results['baseline_rss_mb']:.1f} MB RSS")
    print(
        f"{'what':<16} {'steps':>8} {'first answer':>13} {'open':>8} {'last page':>10} {'indexed':>9} "
        f"{'RSS end':>9} {'RSS peak':>9}"
    )
    for name, r in results.items():
        if not isinstance(r, dict):
            continue
        lp = f"{r['last_page_s']:.3f}s" if "last_page_s" in r else "-"
        print(
            f"{name:<16} {r['steps']:>8} {r['first_answer_s']:>12.2f}s {r['open_s']:>7.3f}s {lp:>10} "
            f"{r['indexed_s']:>8.1f}s {r['rss_end_mb']:>7.1f}MB {r['rss_peak_mb']:>7.1f}MB"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
