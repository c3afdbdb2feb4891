"""Power-cut campaign.

    python bench/powercut.py [--game demo|pyboy] [--steps N] [--every K] [--modes strict,appends,torn]

Plays one session of the built-in game (``run/profiles/demo.yaml``; with ``--game pyboy`` the
demo cartridge in the emulator, ``run/profiles/pyboy-demo.yaml``, with an automatic checkpoint
every 20 frames: about one every six steps) under ``strace -f -y -xx``,
then packs it (``supervisor capture pack``, traced too), then builds, offline
(``bench/powercut_model.py``), the state the disk may hold after a power
cut at every file-system call that matters (every fsync, create, rename, unlink and mkdir,
every action POST, and every K-th write), in each mode (strict: every pending thing lost;
appends: names lost, data kept; torn: half of each file's pending data kept). On every state:

* **the intent rule**: every action that left for the game before the cut (the traced POST,
  named by its ``X-Gamerig-Attempt`` header; in the emulator, the ``input`` line its recording
  writes before the frames run, named by its ``attemptId``) has its ``action_attempt`` row among
  the journal's durable whole lines;
* **the emulator recording** (``--game pyboy``) reads as a whole-line prefix (its hash chain
  holds, a torn last line allowed), every checkpoint its durable rows name is on disk with the
  hash the row gives, every retained frame they name decodes to its pixels' hash, and a new
  emulator resumes from its newest checkpoint (``resume_from_latest_checkpoint``, once per
  distinct recording state);
* **verify classifies it**: ``capture verify`` answers intact or incomplete, and intact once
  the session's ``session.json`` is on disk (through the whole pack); damaged, or a crash of the
  verifier, is a violation;
* **the recorder resumes on it**: a ``Recorder`` is built on a copy (what a restarted recorder
  does) without an error;
* **the feeds**: ``decisions.jsonl`` and ``sessions.jsonl`` never end in a torn line that
  ``capture verify`` calls damage, never name a decision the durable journal lacks (verify on
  the capture root), and, once the session has finalized, hold every decision and the
  session's row (they are made durable at finalization; before it they may lag or be absent).

It prints the states tried and every violation, and exits 1 on any. It needs ``strace``
(``.ci/run`` installs it; the quick variant in the suite is skipped without it).
"""

from __future__ import annotations

import argparse
import functools
import glob
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading

import zmq

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, REPO)
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from powercut_model import Disk, materialize, parse  # noqa: E402

from actors.emulator.cartridge import build_rom  # noqa: E402
from actors.emulator.recording.errors import EmulatorError  # noqa: E402
from actors.emulator.recording.reader import RecordingReader  # noqa: E402
from actors.emulator.session.resume import resume_from_latest_checkpoint  # noqa: E402
from actors.recorder.rules import Recorder  # noqa: E402
from actors.runtime.actor import ActorContext  # noqa: E402
from actors.runtime.transport import Counters  # noqa: E402
from supervisor.capture.verify import verify_path  # noqa: E402

PROFILES = {
    "demo": ["run/profiles/demo.yaml"],
    "pyboy": ["run/profiles/pyboy-demo.yaml", "--set", "emulator.checkpoint_every_frames=20"],
}
TRACED = (
    "openat,open,creat,write,pwrite64,sendto,fsync,fdatasync,rename,renameat,renameat2,unlink,unlinkat,mkdir,"
    "mkdirat,rmdir,ftruncate"
)
MODES = ("strict", "appends", "torn")


def record(work: str, steps: int, game: str = "demo") -> tuple[str, str]:
    """Play the session under strace; (capture root, trace text)."""
    capture = os.path.join(work, "capture")
    os.makedirs(capture)
    trace = os.path.join(work, "trace.txt")
    cmd = [
        "strace",
        "-f",
        "-y",
        "-xx",
        "-qq",
        "-s",
        "1000000",
        "-e",
        f"trace={TRACED}",
        "-o",
        trace,
        sys.executable,
        "-m",
        "supervisor",
        "start",
        *PROFILES[game],
        "--max-steps",
        str(steps),
        "--set",
        f"capture.root={capture}",
        "--set",
        f"supervisor.runtime_dir={work}/runtime",
        "--set",
        "session.stop_on_run_end=false",
        "--set",
        "supervisor.progress=off",
    ]
    with open(os.path.join(work, "strace.err"), "wb") as err:
        subprocess.run(cmd, cwd=REPO, check=True, stdout=subprocess.DEVNULL, stderr=err, timeout=steps * 0.5 + 120)
    packed = os.path.join(work, "pack-trace.txt")  # then the finished session packed (capture pack)
    subprocess.run(
        [
            "strace",
            "-f",
            "-y",
            "-xx",
            "-qq",
            "-s",
            "1000000",
            "-e",
            f"trace={TRACED}",
            "-o",
            packed,
            sys.executable,
            "-m",
            "supervisor",
            "capture",
            "pack",
            capture,
        ],
        cwd=REPO,
        check=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        timeout=300,
    )
    text = ""
    for path in (trace, packed):
        with open(path, encoding="utf-8", errors="replace") as fh:
            text += fh.read()
    return capture, text


def durable_rows(data: bytes | None) -> list[dict]:
    rows = []
    for line in (data or b"").split(b"\n")[:-1]:  # whole lines only (a torn tail has no newline)
        try:
            rows.append(json.loads(line))
        except ValueError:
            continue
    return rows


@functools.lru_cache(maxsize=1)
def demo_rom() -> bytes:
    return build_rom()


def check_recording(state: dict, rows: list[dict], sends: list[str], sid: str, where: str, resumed: set) -> list[str]:
    """The emulator recording of a materialized crash state: what it promises after a power cut
    (docs/emulator.md): once an input has run, the recording exists (its directory, header and
    manifest); everything up to its newest sync (a checkpoint, a branch, the stop) is there, so a
    cut loses at most the steps after the newest checkpoint; a finalized session's recording is
    whole; and a new emulator resumes on it."""
    rel = f"sessions/{sid}/recording"
    if not sends:
        return []  # no input ran: the recording may not exist yet
    if not state.get(f"{rel}/events.jsonl"):
        return [f"recording: {len(sends)} input(s) ran but the recording's journal is not on disk"]
    rd = os.path.join(where, rel)
    try:
        reader = RecordingReader(rd)
    except EmulatorError as exc:
        return [f"recording: {exc}"]
    # the rows up to its newest sync point (a checkpoint, a branch, the stop) were fsynced with
    # every frame they name; frames named after it may be lost with the rows' tail
    synced = max(e["seq"] for e in reader.scan.events if e["kind"] in ("header", "checkpoint", "branch", "stop"))
    bad = {p.split(":")[0] for p in reader.verify_frames()}
    out = [
        f"recording frame: {s['png']} (row {s['seq']}, synced through row {synced}) is lost or damaged"
        for s in reader.summary.samples
        if s.get("png") in bad and s["seq"] <= synced
    ]
    for cp in reader.summary.checkpoints.values():
        data = state.get(f"{rel}/{cp['path']}")
        if data is None:
            out.append(f"recording checkpoint: {cp['path']} is named by a durable row but is not on disk")
        elif hashlib.sha256(data).hexdigest() != cp["fileSha256"]:
            out.append(f"recording checkpoint: {cp['path']} does not match its row's fileSha256")
    reported = [(r.get("response") or {}).get("checkpoint") for r in rows if r.get("event") == "action_result"]
    for cp in filter(None, reported):  # the session journal names it: it must have survived
        if cp.get("checkpointId") not in reader.summary.checkpoints:
            out.append(
                f"recording checkpoint: {cp.get('checkpointId')} is named by the session journal "
                "but not by the recording's durable rows"
            )
    if f"sessions/{sid}/session.json" in state and reader.summary.stop is None:
        out.append("recording: the session finalized but the recording has no durable stop row")
    key = hashlib.sha256(repr(sorted((k, v) for k, v in state.items() if k.startswith(rel))).encode()).hexdigest()
    if (
        not out and reader.summary.stop is None and key not in resumed
    ):  # a new emulator resumes on it (PyBoy: once per distinct recording)
        resumed.add(key)
        try:
            resume_from_latest_checkpoint(rd, demo_rom()).close()
        except Exception as exc:  # noqa: BLE001 - any failure to resume is the finding
            out.append(f"recording resume: {type(exc).__name__}: {exc}")
    return out


def check_state(
    state: dict, sends: list[str], work: str, sid: str, resumed: set | None = None, game: str = "demo"
) -> list[str]:
    """The violations of one crash state."""
    out = []
    jpath = f"sessions/{sid}/events.jsonl"
    rows = durable_rows(state.get(jpath))
    attempts = {r.get("attempt_id") for r in rows if r.get("event") == "action_attempt"}
    for attempt in sends:
        if attempt not in attempts:
            out.append(f"intent: attempt {attempt} was sent but its action_attempt row is not durable")
    where = os.path.join(work, "state")
    shutil.rmtree(where, ignore_errors=True)
    materialize(state, where)
    sd = os.path.join(where, "sessions", sid)
    if os.path.isdir(sd):
        finished = f"sessions/{sid}/session.json" in state  # finalized: packing must keep it intact
        try:
            report = verify_path(where)  # the capture root: the session and the root feeds
            if report.verdict not in (("intact",) if finished else ("intact", "incomplete")):
                found = [f for s in report.sessions for f in s.findings] + [f for r in report.feeds for f in r.findings]
                first = next((f for f in found if f.severity == "damaged"), None)
                out.append(f"verify: {report.verdict}: {first.code + ': ' + first.message if first else ''}")
        except Exception as exc:  # noqa: BLE001 - the point: the verifier must not crash
            out.append(f"verify crashed: {type(exc).__name__}: {exc}")
        if os.path.exists(os.path.join(sd, "events.jsonl")):
            ctx = ActorContext(
                name="recorder",
                session_id=sid,
                session_dir=sd,
                capture_root=where,
                endpoints={},
                profile={},
                heartbeat_s=1.0,
                start_count=2,
                zctx=zmq.Context.instance(),
                stopping=threading.Event(),
                counters=Counters(),
            )
            try:
                rec = Recorder(ctx)
                rec.writer.close()
            except Exception as exc:  # noqa: BLE001
                out.append(f"resume: {type(exc).__name__}: {exc}")
    if game == "pyboy":
        out += check_recording(state, rows, sends, sid, where, resumed if resumed is not None else set())
    for feed in ("decisions.jsonl", "sessions.jsonl"):
        data = state.get(feed) or b""
        if data and not data.endswith(b"\n"):
            out.append(f"feed: {feed} ends in a torn line")
    return out


def campaign(
    capture: str, text: str, every: int, modes: tuple[str, ...], work: str, say=print, game: str = "demo"
) -> dict:
    calls = parse(text)
    sid = os.path.basename(glob.glob(os.path.join(capture, "sessions", "*"))[0])
    disk = Disk(capture)
    points = []
    for c in calls:
        disk.apply(c)
        interesting = c.name in (
            "fsync",
            "fdatasync",
            "rename",
            "renameat",
            "renameat2",
            "unlink",
            "unlinkat",
            "mkdir",
            "mkdirat",
        ) or (disk.sends and disk.sends[-1][0] == c.index)
        if interesting or c.index % every == 0:
            points.append((c.index, {m: disk.crash(m) for m in modes}, [a for _, a in disk.sends]))
    tried, violations, resumed = 0, [], set()
    end = disk.crash("strict")  # a power cut once the session has finalized: the feeds are whole
    rows = durable_rows(end.get(f"sessions/{sid}/events.jsonl"))
    fed = [p for p in rows if p.get("event") == "proposal_status" and p.get("status") in ("execute", "dry_run")]
    decisions = durable_rows(end.get("decisions.jsonl"))
    sessions = [r for r in durable_rows(end.get("sessions.jsonl")) if r.get("session") == sid or sid in json.dumps(r)]
    if len(decisions) != len(fed) or not sessions:
        violations.append(
            {
                "call": len(calls),
                "mode": "strict",
                "violation": (
                    f"feeds: after finalization decisions.jsonl holds {len(decisions)} durable lines "
                    f"for {len(fed)} decisions and sessions.jsonl {len(sessions)} rows of the session"
                ),
            }
        )
    for n, (index, states, sends) in enumerate(points):
        for mode, state in states.items():
            tried += 1
            for v in check_state(state, sends, work, sid, resumed, game):
                violations.append({"call": index, "mode": mode, "violation": v})
        if n % 50 == 0:
            say(f"  {n}/{len(points)} cut points ({tried} states, {len(violations)} violations)")
    return {
        "calls": len(calls),
        "cut_points": len(points),
        "states": tried,
        "sends": len(disk.sends),
        "emulator_resumes": len(resumed),
        "violations": violations,
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument(
        "--game",
        choices=sorted(PROFILES),
        default="demo",
        help="demo: the built-in HTTP game; pyboy: the demo cartridge in the emulator (demo)",
    )
    ap.add_argument("--steps", type=int, default=60, help="steps of the traced session (60)")
    ap.add_argument("--every", type=int, default=25, help="also cut after every K-th traced call (25)")
    ap.add_argument("--modes", default=",".join(MODES), help="strict,appends,torn")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    if shutil.which("strace") is None:
        print("strace is not installed (Debian: apt-get install strace)", file=sys.stderr)
        return 2
    work = tempfile.mkdtemp(prefix="gamerig-powercut-")
    try:
        capture, text = record(work, args.steps, args.game)
        if not parse(text):  # nothing traced: say why instead of judging an empty trace
            with open(os.path.join(work, "strace.err"), encoding="utf-8", errors="replace") as fh:
                why = fh.read()[-2000:]
            print(
                f"strace recorded no call we parse ({len(text)} bytes of trace; first line: "
                f"{text.splitlines()[0][:200] if text else '(none)'}); strace said: {why or '(nothing)'}",
                file=sys.stderr,
            )
            return 2
        out = campaign(
            capture,
            text,
            args.every,
            tuple(args.modes.split(",")),
            work,
            say=(lambda _m: None) if args.json else print,
            game=args.game,
        )
    finally:
        shutil.rmtree(work, ignore_errors=True)
    if args.json:
        print(json.dumps(out, indent=1))
    else:
        resumes = f", {out['emulator_resumes']} emulator resumes" if args.game == "pyboy" else ""
        print(
            f"{out['calls']} traced calls, {out['sends']} actions sent, {out['cut_points']} cut points, "
            f"{out['states']} crash states{resumes}: {len(out['violations'])} violations"
        )
        seen = set()
        for v in out["violations"]:
            key = (v["mode"], v["violation"].split(":")[0])
            if key not in seen:
                seen.add(key)
                print(f"  call {v['call']} ({v['mode']}): {v['violation']}")
    return 1 if out["violations"] else 0


if __name__ == "__main__":
    sys.exit(main())
