"""The codec's cost per frame: ``python bench/codec.py [--session DIR] [--n N] [--rounds R] [--base REV]``.

For each message type a game step sends over its six ZeroMQ hops, built with real bodies
taken from a session's journal and observation files, this prints one line::

    type   bytes   encode us  packb us  x   decode us  unpackb us  x

* ``encode us`` / ``decode us``: the median microseconds of one ``protocol.encode`` (the
  body's ``to_body``, the frame, msgpack) and one ``protocol.decode`` (msgpack, the envelope's
  checks, ``Message.from_body``'s field validation);
* ``packb us`` / ``unpackb us``: plain ``msgpack.packb`` / ``msgpack.unpackb`` of the very
  same frame, measured in the same run (the floor no codec can go under);
* ``x``: the codec's time over the floor's. ``bytes`` is the encoded frame's size.

Each figure is the median over ``--rounds`` rounds of ``--n`` calls each, rounds of the codec
and of the floor interleaved so that a busy machine slows both alike. A last line sums the
Python work beyond msgpack (codec minus floor) over one frame of every type.

``--session DIR`` is a session directory (``events.jsonl`` and ``observations/``) of a game
session; without it the demo profile is run for 50 steps into a temporary directory first
(``supervisor start run/profiles/demo.yaml``, a few seconds) and its session is used.

``--base REV`` compares instead: the bench runs ``--pairs`` times (3) with commit ``REV``'s
``protocol`` package (``git archive``, in a temporary directory) and as often with this
tree's, alternated, on the same session and each in its own process; it prints per type the
medians of encode and decode before -> after and their ratios to msgpack, and the work beyond
msgpack before -> after. ``--json PATH`` writes the figures of a plain run to a file.
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

import msgpack

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
#: where ``protocol`` is imported from (``--base`` runs this bench with an older tree's)
TREE_VAR = "GAMERIG_CODEC_BENCH_TREE"
sys.path.insert(0, os.environ.get(TREE_VAR) or REPO)

import protocol  # noqa: E402
from protocol import from_recorder as rep  # noqa: E402
from protocol import to_recorder as req  # noqa: E402

MAGIC = "gamerig"
DEMO = os.path.join(REPO, "run", "profiles", "demo.yaml")
#: proposal row keys the policy sends in ``extra`` (the rest are its named fields or the
#: writer's own: sequence, hashes, timestamps)
EXTRA_KEYS = (
    "deck_provenance",
    "guard_snapshot",
    "run_id",
    "run_seed",
    "situation",
    "state_digest",
    "state_type",
    "then_stop",
    "pipeline_depth",
    "decided_ahead",
)


def demo_session(workdir: str) -> str:
    """Run the demo profile for 50 steps under ``workdir``; its session directory."""
    cmd = [
        sys.executable,
        "-m",
        "supervisor",
        "start",
        DEMO,
        "--set",
        f"capture.root={workdir}",
        "--set",
        "session.max_steps=50",
    ]
    proc = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True, timeout=300)
    if proc.returncode != 0:
        sys.exit(f"the demo session failed (exit {proc.returncode}):\n{proc.stderr[-2000:]}")
    [session] = glob.glob(os.path.join(workdir, "sessions", "*"))
    return session


def one_step(session: str) -> tuple[dict[str, dict], list[dict], dict]:
    """The rows of one executed step in the middle of the session (by kind), the rows a
    follower with states receives for it (the previous step's tail and this observation),
    and the observation's stored state."""
    with open(os.path.join(session, "events.jsonl")) as fh:
        rows = [json.loads(line) for line in fh]
    observations = [r for r in rows if r["event"] == "observation"]
    obs = observations[len(observations) // 2]
    at = rows.index(obs)
    step = {"observation": obs}
    for row in rows[at + 1 :]:
        if row["event"] == "observation":
            break
        step.setdefault(row["event"], row)
    missing = {"proposal", "proposal_status", "action_attempt", "action_result"} - set(step)
    if missing:
        sys.exit(f"the step of {obs['observation_id']} has no {sorted(missing)} rows: pick another session")
    capture_root = os.path.dirname(os.path.dirname(os.path.normpath(session)))
    with open(os.path.join(capture_root, obs["path"])) as fh:
        state = json.load(fh)
    tail = [r for r in rows[:at] if r["event"] in ("proposal_status", "action_attempt", "action_result")][-3:]
    return step, tail + [obs], state


def messages(session: str) -> list[protocol.message.Message]:
    """One message of each hot type, with the bodies this session's step carried."""
    step, followed, state = one_step(session)
    obs, prop, status = step["observation"], step["proposal"], step["proposal_status"]
    attempt, result = step["action_attempt"], step["action_result"]
    return [
        req.StoreObservation(
            read_id=obs["read_id"],
            state=state,
            phase=obs["phase"],
            read_ms=obs.get("read_ms"),
            identity=obs.get("run_identity"),
        ),
        rep.ObservationStored(
            reply_to=obs["read_id"],
            observation_id=obs["observation_id"],
            sequence=obs["sequence"],
            path=obs["path"],
            sha256=obs["sha256"],
            step=obs["step"],
        ),
        req.Follow(after=obs["sequence"] - 1, max_rows=256, wait_ms=1000, with_states=True, wake=["observation"]),
        rep.Rows(
            reply_to=protocol.new_id(),
            rows=followed,
            last_sequence=obs["sequence"],
            states={obs["observation_id"]: state},
        ),
        req.RecordProposal(
            proposal_id=prop["proposal_id"],
            observation_id=prop["observation_id"],
            action=prop["action"],
            parameters=prop["parameters"],
            reason=prop["reason"],
            source=prop["source"],
            wish=status["status"],
            extra={k: prop[k] for k in EXTRA_KEYS if k in prop},
            decide_ms=prop.get("decide_ms"),
        ),
        rep.ProposalRecorded(
            reply_to=protocol.new_id(),
            proposal_id=prop["proposal_id"],
            disposition=status["status"],
            sequence=status["sequence"],
        ),
        req.AwaitIntent(requester=attempt["requester"], wait_ms=500),
        rep.IntentAck(
            reply_to=protocol.new_id(),
            attempt_id=attempt["attempt_id"],
            proposal_id=attempt["proposal_id"],
            action=attempt["action"],
            parameters=attempt["parameters"],
            sequence=attempt["sequence"],
        ),
        req.RecordResult(
            attempt_id=result["attempt_id"],
            outcome=result["outcome"],
            http_status=result.get("http_status"),
            response=result.get("response"),
            error=result.get("error"),
            request_ms=result.get("request_ms"),
        ),
        rep.Recorded(reply_to=protocol.new_id(), sequence=result["sequence"]),
    ]


def per_call_us(fn, arg, n: int) -> float:
    start = time.perf_counter()
    for _ in range(n):
        fn(arg)
    return (time.perf_counter() - start) / n * 1e6


def measure(msg, n: int, rounds: int) -> dict[str, float]:
    """Medians of encode, decode and the msgpack floor for one message."""
    env = protocol.wrap(msg, session="20261201T171953Z-88959bc4014646b2b7b6dd1734b95416", sender="policy")
    data = protocol.encode(env)
    if protocol.decode(data) != env:
        sys.exit(f"{msg.TYPE}: the frame does not decode to the message it was made of")
    frame = [
        MAGIC,
        env.major,
        env.minor,
        env.type,
        env.type_version,
        env.id,
        env.session,
        env.sender,
        env.sent_at,
        msg.to_body(),
    ]  # the objects encode packs, made once
    if msgpack.packb(frame, use_bin_type=True) != data:
        sys.exit(f"{msg.TYPE}: plain msgpack of the frame differs from the codec's bytes")

    def packb(f):
        return msgpack.packb(f, use_bin_type=True)

    def unpackb(d):
        return msgpack.unpackb(d, raw=False, strict_map_key=True)

    runs: dict[str, list[float]] = {"encode": [], "packb": [], "decode": [], "unpackb": []}
    for _ in range(rounds):
        runs["encode"].append(per_call_us(protocol.encode, env, n))
        runs["packb"].append(per_call_us(packb, frame, n))
        runs["decode"].append(per_call_us(protocol.decode, data, n))
        runs["unpackb"].append(per_call_us(unpackb, data, n))
    out = {k: statistics.median(v) for k, v in runs.items()}
    out["bytes"] = len(data)
    return out


def table(session: str, n: int, rounds: int) -> dict[str, dict[str, float]]:
    """Print the figures of every hot message type (module docstring); return them by type."""
    print(
        f"{'type':<20} {'bytes':>6} {'encode us':>10} {'packb us':>9} {'x':>5}"
        f" {'decode us':>10} {'unpackb us':>11} {'x':>5}"
    )
    found = {}
    for msg in messages(session):
        m = found[msg.TYPE] = measure(msg, n, rounds)
        print(
            f"{msg.TYPE:<20} {m['bytes']:>6} {m['encode']:>10.2f} {m['packb']:>9.2f}"
            f" {m['encode'] / m['packb']:>5.2f} {m['decode']:>10.2f} {m['unpackb']:>11.2f}"
            f" {m['decode'] / m['unpackb']:>5.2f}",
            flush=True,
        )
    enc, dec = beyond(found)
    print(f"beyond msgpack, one frame of each type: encode {enc:.1f} us, decode {dec:.1f} us")
    return found


def beyond(found: dict[str, dict[str, float]]) -> tuple[float, float]:
    """The codec's time over msgpack's, summed over one frame of each type: encode, decode."""
    return (
        sum(m["encode"] - m["packb"] for m in found.values()),
        sum(m["decode"] - m["unpackb"] for m in found.values()),
    )


def run_tree(tree: str, session: str, args: argparse.Namespace, out: str) -> dict:
    """This bench in a child process importing ``protocol`` from ``tree``; its figures."""
    cmd = [
        sys.executable,
        os.path.abspath(__file__),
        "--session",
        session,
        "--n",
        str(args.n),
        "--rounds",
        str(args.rounds),
        "--json",
        out,
    ]
    proc = subprocess.run(cmd, env={**os.environ, TREE_VAR: tree}, capture_output=True, text=True)
    if proc.returncode != 0:
        sys.exit(f"the bench from {tree} failed:\n{proc.stderr[-2000:]}")
    with open(out) as fh:
        return json.load(fh)


def compare(base: str, session: str, args: argparse.Namespace, tmp: str) -> None:
    """``--base``: the protocol package of commit ``base`` and this tree's, alternated
    ``--pairs`` times on the same session; the medians of the runs, before and after."""
    tree = os.path.join(tmp, "base")
    os.makedirs(tree)
    archive = subprocess.run(["git", "-C", REPO, "archive", base, "protocol"], capture_output=True)
    if archive.returncode != 0:
        sys.exit(f"git archive {base}: {archive.stderr.decode(errors='replace').strip()}")
    subprocess.run(["tar", "-x", "-C", tree], input=archive.stdout, check=True)
    runs: dict[str, list[dict]] = {"before": [], "after": []}
    for i in range(args.pairs):
        runs["before"].append(run_tree(tree, session, args, os.path.join(tmp, f"before{i}.json")))
        runs["after"].append(run_tree(REPO, session, args, os.path.join(tmp, f"after{i}.json")))
    med = {
        side: {t: {k: statistics.median(r[t][k] for r in rs) for k in rs[0][t]} for t in rs[0]}
        for side, rs in runs.items()
    }
    b, a = med["before"], med["after"]
    print(f"{base} -> this tree, medians of {args.pairs} alternated runs each (us; x: over msgpack)")
    print(f"{'type':<20} {'bytes':>6} {'encode':>14} {'x':>11} {'decode':>14} {'x':>11}")
    for t in a:
        print(
            f"{t:<20} {int(a[t]['bytes']):>6} {b[t]['encode']:>6.2f} -> {a[t]['encode']:<5.2f}"
            f" {b[t]['encode'] / b[t]['packb']:>4.2f} -> {a[t]['encode'] / a[t]['packb']:<4.2f}"
            f" {b[t]['decode']:>6.2f} -> {a[t]['decode']:<5.2f}"
            f" {b[t]['decode'] / b[t]['unpackb']:>4.2f} -> {a[t]['decode'] / a[t]['unpackb']:<4.2f}"
        )
    (be, bd), (ae, ad) = beyond(b), beyond(a)
    print(
        f"beyond msgpack, one frame of each type: encode {be:.1f} -> {ae:.1f} us ({times(be, ae)}),"
        f" decode {bd:.1f} -> {ad:.1f} us ({times(bd, ad)})"
    )


def times(before: float, after: float) -> str:
    """``before / after`` as ``2.0x``; ``n/a`` where noise left either at or under zero."""
    return f"{before / after:.1f}x" if before > 0 and after > 0 else "n/a"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--session", help="a session directory (default: run the demo for 50 steps)")
    ap.add_argument("--n", type=int, default=2000, help="calls per round")
    ap.add_argument("--rounds", type=int, default=7, help="rounds per figure (the median is printed)")
    ap.add_argument("--base", help="compare with the protocol package of this commit")
    ap.add_argument("--pairs", type=int, default=3, help="with --base: runs of each, alternated")
    ap.add_argument("--json", help="also write the figures to this file")
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="codec-bench-") as tmp:
        session = args.session or demo_session(tmp)
        if args.base:
            compare(args.base, session, args, tmp)
            return 0
        found = table(session, args.n, args.rounds)
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(found, fh, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
