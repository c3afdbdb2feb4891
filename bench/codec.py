"""The codec's cost per frame: ``python bench/codec.py [--session DIR] [--n N] [--rounds R]``.

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
sys.path.insert(0, REPO)

import protocol  # noqa: E402
from protocol import from_recorder as rep  # noqa: E402
from protocol import to_recorder as req  # noqa: E402

DEMO = os.path.join(REPO, "run", "profiles", "demo.yaml")
#: proposal row keys the policy sends in ``extra`` (the rest are its named fields or the
#: writer's own: sequence, hashes, timestamps)
EXTRA_KEYS = ("deck_provenance", "guard_snapshot", "run_id", "run_seed", "situation",
              "state_digest", "state_type", "then_stop", "pipeline_depth", "decided_ahead")


def demo_session(workdir: str) -> str:
    """Run the demo profile for 50 steps under ``workdir``; its session directory."""
    cmd = [sys.executable, "-m", "supervisor", "start", DEMO, "--set", f"capture.root={workdir}",
           "--set", "session.max_steps=50"]
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
    for row in rows[at + 1:]:
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
        req.StoreObservation(read_id=obs["read_id"], state=state, phase=obs["phase"],
                             read_ms=obs.get("read_ms"), identity=obs.get("run_identity")),
        rep.ObservationStored(reply_to=obs["read_id"], observation_id=obs["observation_id"],
                              sequence=obs["sequence"], path=obs["path"], sha256=obs["sha256"],
                              step=obs["step"]),
        req.Follow(after=obs["sequence"] - 1, max_rows=256, wait_ms=1000, with_states=True,
                   wake=["observation"]),
        rep.Rows(reply_to=protocol.new_id(), rows=followed, last_sequence=obs["sequence"],
                 states={obs["observation_id"]: state}),
        req.RecordProposal(proposal_id=prop["proposal_id"], observation_id=prop["observation_id"],
                           action=prop["action"], parameters=prop["parameters"], reason=prop["reason"],
                           source=prop["source"], wish=status["status"],
                           extra={k: prop[k] for k in EXTRA_KEYS if k in prop}, decide_ms=prop.get("decide_ms")),
        rep.ProposalRecorded(reply_to=protocol.new_id(), proposal_id=prop["proposal_id"],
                             disposition=status["status"], sequence=status["sequence"]),
        req.AwaitIntent(requester=attempt["requester"], wait_ms=500),
        rep.IntentAck(reply_to=protocol.new_id(), attempt_id=attempt["attempt_id"],
                      proposal_id=attempt["proposal_id"], action=attempt["action"],
                      parameters=attempt["parameters"], sequence=attempt["sequence"]),
        req.RecordResult(attempt_id=result["attempt_id"], outcome=result["outcome"],
                         http_status=result.get("http_status"), response=result.get("response"),
                         error=result.get("error"), request_ms=result.get("request_ms")),
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
    frame = msgpack.unpackb(data, raw=False, strict_map_key=True)
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


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--session", help="a session directory (default: run the demo for 50 steps)")
    ap.add_argument("--n", type=int, default=2000, help="calls per round")
    ap.add_argument("--rounds", type=int, default=7, help="rounds per figure (the median is printed)")
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="codec-bench-") as tmp:
        session = args.session or demo_session(tmp)
        msgs = messages(session)
    print(f"{'type':<20} {'bytes':>6} {'encode us':>10} {'packb us':>9} {'x':>5}"
          f" {'decode us':>10} {'unpackb us':>11} {'x':>5}")
    beyond_enc = beyond_dec = 0.0
    for msg in msgs:
        m = measure(msg, args.n, args.rounds)
        beyond_enc += m["encode"] - m["packb"]
        beyond_dec += m["decode"] - m["unpackb"]
        print(f"{msg.TYPE:<20} {m['bytes']:>6} {m['encode']:>10.2f} {m['packb']:>9.2f}"
              f" {m['encode'] / m['packb']:>5.2f} {m['decode']:>10.2f} {m['unpackb']:>11.2f}"
              f" {m['decode'] / m['unpackb']:>5.2f}")
    print(f"beyond msgpack, one frame of each type: encode {beyond_enc:.1f} us, decode {beyond_dec:.1f} us")
    return 0


if __name__ == "__main__":
    sys.exit(main())
