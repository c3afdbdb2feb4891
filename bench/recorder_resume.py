"""Recorder resume time and memory against journal length:
``python bench/recorder_resume.py [--sizes 1000,10000,30000,60000] [--repeat 3]``.

Drives a real ``Recorder`` (``actors/recorder/rules.py``) in this process, on a temporary
capture, through steps shaped like the hostile profile's (an observation of a ~3 KB state
with an unavailable run identity, an executed proposal with the policy's extras; every third
step an intent and its result). At each size (in steps) it notes this process's RSS and
copies the journal and the recorder's checkpoint; then, for each copy, it times building a
resumed ``Recorder`` (what a restarted recorder does before it serves: load the checkpoint,
read the rows after it, append ``recorder_resumed``) — from the checkpoint, and with the
checkpoint removed (the whole journal read, as for a journal without one). Median of ``--repeat``.

The figures exclude the interpreter's start-up and imports, printed once as a floor
(``python -c 'import actors.recorder.serve'``); ``bench/soak.py`` measures a whole restarted
recorder process. Target: resume under 0.5 s at any size, flat RSS.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time

import psutil
import zmq

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, REPO)

from actors.recorder import checkpoint  # noqa: E402
from actors.recorder.rules import Recorder  # noqa: E402
from actors.runtime.actor import ActorContext  # noqa: E402
from actors.runtime.transport import Counters  # noqa: E402
from protocol.to_recorder import RecordIntent, RecordProposal, RecordResult, StoreObservation  # noqa: E402

SESSION = "20261201T000000Z-recorderresumebench"
STATE = {
    "state_type": "monster",
    "run": {"floor": 7, "gold": 99, "hp": 61, "max_hp": 80},
    "battle": {
        "enemies": [
            {"name": f"enemy {i}", "hp": 20 + i, "intent": "attack", "powers": [{"id": "strength", "amount": i}]}
            for i in range(3)
        ],
        "hand": [
            {
                "name": f"card {i}",
                "cost": i % 3,
                "description": "Deal 6 damage. " * 4,
                "target_type": "enemy",
                "playable": True,
            }
            for i in range(8)
        ],
    },
    "player": {"relics": [{"name": f"relic {i}", "description": "x" * 60} for i in range(8)]},
}


def context(root: str, start_count: int) -> ActorContext:
    return ActorContext(
        name="recorder",
        session_id=SESSION,
        session_dir=os.path.join(root, "sessions", SESSION),
        capture_root=root,
        endpoints={},
        profile={},
        heartbeat_s=1.0,
        start_count=start_count,
        zctx=zmq.Context.instance(),
        stopping=threading.Event(),
        counters=Counters(),
    )


def step(rec: Recorder, n: int) -> None:
    stored = rec.on_store_observation(
        StoreObservation(
            read_id=f"r-{n}",
            state=STATE,
            read_ms=1.5,
            identity={"status": "unavailable", "error": "the game does not report a run id"},
        )
    )
    rec.on_record_proposal(
        RecordProposal(
            proposal_id=f"p-{n}",
            observation_id=stored.observation_id,
            action="play_card",
            parameters={"card_index": n % 8, "target": "enemy 0"},
            reason="the cheapest attack",
            source="policy",
            wish="execute",
            decide_ms=0.2,
            extra={
                "situation": "0aae2b4865edb0ec",
                "state_digest": "f" * 64,
                "guard_snapshot": {},
                "run_id": None,
                "run_seed": None,
                "deck_provenance": None,
            },
        )
    )
    if n % 3 == 0:
        ack = rec.on_record_intent(RecordIntent(proposal_id=f"p-{n}", requester="actuator"))
        rec.on_record_result(
            RecordResult(
                attempt_id=ack.attempt_id,
                outcome="accepted",
                http_status=200,
                response={"status": "ok", "message": "queued"},
                request_ms=2.0,
            )
        )


def build(work: str, sizes: list[int]) -> list[dict]:
    """One session grown to each size in turn; a copy of its journal and checkpoint at each."""
    root = os.path.join(work, "grow")
    rec = Recorder(context(root, 1))
    out, done = [], 0
    for size in sizes:
        while done < size:
            done += 1
            step(rec, done)
        copy = os.path.join(work, f"at-{size}")
        os.makedirs(os.path.join(copy, "sessions", SESSION, "observations"))
        for name in ("events.jsonl", checkpoint.NAME):
            src = os.path.join(rec.dir, name)
            if os.path.exists(src):
                shutil.copy(src, os.path.join(copy, "sessions", SESSION, name))
        out.append(
            {
                "steps": size,
                "root": copy,
                "rows": rec.writer.sequence,
                "bytes": rec.writer.offset,
                "rss_mb": psutil.Process().memory_info().rss / 1e6,
            }
        )
        print(f"  built {size} steps", file=sys.stderr, flush=True)
    rec.writer.close()
    return out


def time_resume(root: str, with_checkpoint: bool, repeat: int) -> float:
    """Median seconds to build a resumed Recorder on a fresh copy of ``root``."""
    times = []
    for n in range(repeat):
        trial = f"{root}-trial{n}-{int(with_checkpoint)}"
        shutil.copytree(root, trial)
        cp = os.path.join(trial, "sessions", SESSION, checkpoint.NAME)
        if not with_checkpoint and os.path.exists(cp):
            os.remove(cp)
        start = time.perf_counter()
        rec = Recorder(context(trial, 2))
        times.append(time.perf_counter() - start)
        rec.writer.close()
        shutil.rmtree(trial)
    return statistics.median(times)


def import_floor() -> float:
    start = time.perf_counter()
    subprocess.run([sys.executable, "-c", "import actors.recorder.serve"], cwd=REPO, check=True)
    return time.perf_counter() - start


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sizes", default="1000,10000,30000,60000", help="journal sizes in steps, ascending")
    ap.add_argument("--repeat", type=int, default=3, help="resumes timed per size (the median is printed)")
    args = ap.parse_args(argv)
    try:
        sizes = sorted(int(s) for s in args.sizes.split(","))
    except ValueError:
        ap.error(f"--sizes: whole numbers separated by commas, not {args.sizes!r}")
    if not sizes or sizes[0] < 1 or args.repeat < 1:
        ap.error("--sizes and --repeat must be positive")
    work = tempfile.mkdtemp(prefix="recorder-resume-")
    try:
        built = build(work, sizes)
        print(f"interpreter start-up and imports (not included below): {import_floor():.2f} s")
        print(f"{'steps':>8} {'rows':>8} {'journal MB':>10} {'RSS MB':>7} {'resume s':>9} {'full scan s':>11}")
        for b in built:
            fast = time_resume(b["root"], True, args.repeat)
            full = time_resume(b["root"], False, args.repeat)
            print(
                f"{b['steps']:>8} {b['rows']:>8} {b['bytes'] / 1e6:>10.1f} {b['rss_mb']:>7.1f} "
                f"{fast:>9.3f} {full:>11.3f}",
                flush=True,
            )
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
