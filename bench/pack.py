"""A session at rest, unpacked and packed: ``python bench/pack.py [--steps N] [--session DIR] [--json]``.

Plays one session of the built-in game (``run/profiles/demo.yaml``, runs in a row until
``--steps`` steps; or takes ``--session``, a finished session directory, copied first), then
prints, before and after ``supervisor capture pack``: the bytes per step (the journal, the
observations and the whole directory), the files per 100,000 steps, and the seconds of
``capture verify`` on each form (the same session, so the ratio is the cost of reading the
pack). The goal a week on disk asks for: at most 1 KB per step and 10 files per 100,000 steps.
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, REPO)

from supervisor.capture.packing import pack_session  # noqa: E402

DEMO = os.path.join(REPO, "run", "profiles", "demo.yaml")


def play(root: str, steps: int) -> str:
    cmd = [
        sys.executable,
        "-m",
        "supervisor",
        "start",
        DEMO,
        "--max-steps",
        str(steps),
        "--set",
        f"capture.root={root}",
        "--set",
        f"supervisor.runtime_dir={root}/runtime",
        "--set",
        "session.stop_on_run_end=false",
        "--set",
        "supervisor.progress=off",
    ]
    subprocess.run(cmd, cwd=REPO, check=True, stdout=subprocess.DEVNULL, timeout=steps * 0.05 + 120)
    return glob.glob(os.path.join(root, "sessions", "*"))[0]


def at_rest(sd: str, steps: int) -> dict:
    files = [os.path.join(d, f) for d, _, fs in os.walk(sd) for f in fs]
    total = sum(os.path.getsize(f) for f in files)
    journal = os.path.getsize(os.path.join(sd, "events.jsonl"))
    return {
        "bytes_per_step": round(total / steps, 1),
        "journal_bytes_per_step": round(journal / steps, 1),
        "observation_bytes_per_step": round(
            (total - journal - os.path.getsize(os.path.join(sd, "session.json"))) / steps, 1
        ),
        "files": len(files),
        "files_per_100k_steps": round(len(files) * 100_000 / steps, 1),
        "bytes": total,
    }


def verify_s(sd: str) -> float:
    start = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-m", "supervisor", "capture", "verify", sd], cwd=REPO, capture_output=True, text=True
    )
    if done.returncode != 0:
        raise SystemExit(f"capture verify failed ({done.returncode}): {done.stdout[-500:]}")
    return round(time.monotonic() - start, 2)


def steps_of(sd: str) -> int:
    with open(os.path.join(sd, "events.jsonl"), "rb") as fh:
        return sum(1 for line in fh if b'"event":"observation"' in line)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=24_000, help="steps of the session played (24000)")
    ap.add_argument("--session", help="measure this finished session (a copy) instead of playing one")
    ap.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = ap.parse_args(argv)
    work = tempfile.mkdtemp(prefix="gamerig-pack-")
    try:
        if args.session:
            sd = os.path.join(work, "sessions", os.path.basename(os.path.abspath(args.session)))
            shutil.copytree(args.session, sd)
        else:
            sd = play(work, args.steps)
        steps = steps_of(sd)
        before, t_before = at_rest(sd, steps), verify_s(sd)
        start = time.monotonic()
        done = pack_session(sd)
        pack_s = round(time.monotonic() - start, 2)
        after, t_after = at_rest(sd, steps), verify_s(sd)
        out = {
            "steps": steps,
            "unpacked": {**before, "verify_s": t_before},
            "packed": {**after, "verify_s": t_after, "pack_s": pack_s, "segments": done["segments"]},
            "goal": {"bytes_per_step": 1024, "files_per_100k_steps": 10},
            "met": {
                "bytes_per_step": after["bytes_per_step"] <= 1024,
                "files_per_100k_steps": after["files_per_100k_steps"] <= 10,
            },
        }
    finally:
        shutil.rmtree(work, ignore_errors=True)
    if args.json:
        print(json.dumps(out, indent=1))
        return 0
    print(f"{steps} steps")
    for name in ("unpacked", "packed"):
        r = out[name]
        print(
            f"  {name:<9} {r['bytes_per_step']:>8.1f} B/step (journal {r['journal_bytes_per_step']:.1f}, "
            f"observations {r['observation_bytes_per_step']:.1f}); {r['files']} files "
            f"({r['files_per_100k_steps']:.1f} per 100k steps); capture verify {r['verify_s']:.2f} s"
        )
    print(f"  pack took {out['packed']['pack_s']:.2f} s ({out['packed']['segments']} segments)")
    print(
        f"  goal <= 1024 B/step: {'met' if out['met']['bytes_per_step'] else 'NOT met'}; "
        f"<= 10 files per 100k steps: {'met' if out['met']['files_per_100k_steps'] else 'NOT met'}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
