"""Where a game step's time goes, hop by hop: ``python bench/step_timeline.py [--steps N]``.

Runs one demo session (``supervisor start run/profiles/demo.yaml``, ``session.max_steps=N``,
600 by default, not stopping at the run's end) with ``GAMERIG_HOPLOG`` set, so that every
actor logs each frame it encodes and decodes (``actors/runtime/hoplog.py``), then walks each
executed step — the observation row to the next observation row, through the proposal, the
attempt, the result — along the six messages that carry it, matched by message id:

    recorder --rows--> policy --record_proposal--> recorder --intent_ack--> actuator
    --record_result--> recorder --rows--> observer --store_observation--> recorder

and prints the median of each segment: the work inside a process (between a frame decoded
and the next one wrapped, or a journal stamp) and each hop split into encode (wrap to bytes),
transit (bytes out to bytes in: ZeroMQ, the kernel, the receiver's wake-up and poll) and
decode. The segments add up to the step. Then the same medians summed per place (hops,
recorder, policy, actuator, observer) and, for every message type, its encode / transit /
decode medians. Journal stamps are taken before a row is written (``bench/pipeline.py``).
Then the game path's HTTP requests per route: the built-in game's own handling of each
(``actors/game/http.py``), the HTTP client's CPU time on its thread and its wall time
(``actors/sts2mcp.py``) — for the session's observer and actuator, and for the in-process
baseline (``bench/pipeline_baseline.py``'s replay of the same session, run right after it
with the same logging; ``--no-baseline`` skips it): the same client code doing the same
requests, in seven processes sharing two cores or in one.

Logging a frame costs a few microseconds in each process; read the figures as a breakdown,
and ``bench/pipeline.py`` for the step's cost against the in-process baseline. Options:
``--profile PATH`` (``run/profiles/demo.yaml``), ``--keep DIR`` (keep the capture and the
hop logs there), ``--json PATH``.
"""

from __future__ import annotations

import argparse
import bisect
import collections
import glob
import json
import os
import shutil
import statistics
import sys
import tempfile

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, REPO)
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from pipeline_baseline import replay  # noqa: E402
from pipeline_sessions import finish_session, start_session  # noqa: E402
from pipeline_steps import executed_steps, stamp  # noqa: E402

from actors.runtime.hoplog import ENV  # noqa: E402

#: (segment, place, what it holds), in the step's order; each ends where the next begins
SEGMENTS = (
    ("obs_row>rows_wrap", "recorder", "observation row stamped → rows for the policy wrapped"),
    ("rows_p.encode", "hop", "rows → policy: encode"),
    ("rows_p.transit", "hop", "rows → policy: transit"),
    ("rows_p.decode", "hop", "rows → policy: decode"),
    ("policy", "policy", "the policy's turn: rows decoded → record_proposal wrapped"),
    ("prop.encode", "hop", "record_proposal → recorder: encode"),
    ("prop.transit", "hop", "record_proposal → recorder: transit"),
    ("prop>prop_row", "recorder", "record_proposal received → proposal row stamped (decode incl.)"),
    ("prop_row>att_row", "recorder", "proposal row → attempt row (status row, standing intent)"),
    ("att_row>ack_wrap", "recorder", "attempt row → intent_ack wrapped (the group's fsync)"),
    ("ack.encode", "hop", "intent_ack → actuator: encode"),
    ("ack.transit", "hop", "intent_ack → actuator: transit"),
    ("ack.decode", "hop", "intent_ack → actuator: decode"),
    ("actuator", "actuator", "intent_ack decoded → record_result wrapped (the POST)"),
    ("res.encode", "hop", "record_result → recorder: encode"),
    ("res.transit", "hop", "record_result → recorder: transit"),
    ("res>res_row", "recorder", "record_result received → result row stamped (decode incl.)"),
    ("res_row>rows_wrap", "recorder", "result row stamped → rows for the observer wrapped"),
    ("rows_o.encode", "hop", "rows → observer: encode"),
    ("rows_o.transit", "hop", "rows → observer: transit"),
    ("rows_o.decode", "hop", "rows → observer: decode"),
    ("observer", "observer", "rows decoded → store_observation wrapped (the GETs)"),
    ("store.encode", "hop", "store_observation → recorder: encode"),
    ("store.transit", "hop", "store_observation → recorder: transit"),
    ("store>obs_row", "recorder", "store received → next observation row stamped (decode, file)"),
)


class Hops:
    """The hop logs of one session: sends by message id, receipts by (receiver, type) in
    the order they were wrapped."""

    def __init__(self, folder: str):
        self.sent: dict[str, tuple[str, float, float, int]] = {}
        self.got: dict[tuple[str, str], list[tuple[float, float, float, str]]] = collections.defaultdict(list)
        for path in glob.glob(os.path.join(folder, "*.hops")):
            actor = os.path.basename(path).rsplit("-", 1)[0]
            with open(path) as fh:
                for line in fh:
                    f = line.split()
                    if len(f) != 6:
                        continue  # a line cut short by a killed process
                    if f[0] == "S":
                        self.sent[f[2]] = (f[1], float(f[3]), float(f[4]), int(f[5]))
                    elif f[0] == "R":
                        self.got[(actor, f[1])].append((float(f[3]), float(f[4]), float(f[5]), f[2]))
        for v in self.got.values():
            v.sort()
        self.http = http_times(folder)

    def first(self, receiver: str, kind: str, after: float) -> tuple[float, float, float, float] | None:
        """The first ``kind`` frame ``receiver`` got that was wrapped at or after ``after``:
        (wrapped, encoded, received, decoded)."""
        got = self.got.get((receiver, kind), [])
        i = bisect.bisect_left(got, (after,))
        if i == len(got) or got[i][3] not in self.sent:
            return None
        wrapped, received, decoded, msg_id = got[i]
        return wrapped, self.sent[msg_id][2], received, decoded


def http_times(folder: str) -> dict[str, dict[str, list[float]]]:
    """The game path's HTTP requests logged in ``folder``, by route (``GET /api/v1/...``):
    ``game`` (the built-in game's own handling, ms), ``cpu`` and ``wall`` (the client's CPU
    time on its thread and its wall time, ms; ``actors/sts2mcp.py``)."""
    out: dict[str, dict[str, list[float]]] = collections.defaultdict(lambda: collections.defaultdict(list))
    for path in glob.glob(os.path.join(folder, "*.hops")):
        with open(path) as fh:
            for line in fh:
                f = line.split()
                if len(f) == 5 and f[0] == "H":
                    out[f"{f[1]} {f[2]}"]["game"].append((float(f[4]) - float(f[3])) * 1000)
                elif len(f) == 5 and f[0] == "C":
                    out[f"{f[1]} {f[2]}"]["cpu"].append(float(f[3]))
                    out[f"{f[1]} {f[2]}"]["wall"].append(float(f[4]))
    return out


def print_http(session: dict, baseline: dict | None) -> dict:
    """The HTTP requests of the session (and of the in-process baseline replaying it):
    medians per route of the game's handling, the client's CPU and its wall time."""
    sides = [("session", session)] + ([("baseline", baseline)] if baseline is not None else [])
    print(f"\nHTTP requests (median ms){'':16}" + "".join(f"{n + ': game  cpu  wall':>27}" for n, _ in sides))
    out = {}
    for route in sorted(session):
        cells = ""
        for name, side in sides:
            got = side.get(route, {})
            med = {k: statistics.median(got[k]) if got.get(k) else float("nan") for k in ("game", "cpu", "wall")}
            out.setdefault(route, {})[name] = med
            cells += f"{med['game']:>15.3f}{med['cpu']:>6.3f}{med['wall']:>6.3f}"
        print(f"{route:42}{cells}")
    print(
        "(game: the built-in game's own handling; cpu: the HTTP client's CPU time on its thread; "
        "wall: the client's wait for the whole answer)"
    )
    return out


def _hop(out: dict, name: str, h: tuple, with_decode: bool = True) -> None:
    out[f"{name}.encode"] = h[1] - h[0]
    out[f"{name}.transit"] = h[2] - h[1]
    if with_decode:
        out[f"{name}.decode"] = h[3] - h[2]


def one_step(hops: Hops, o: dict, p: dict, a: dict, r: dict, nxt: dict) -> dict | None:
    """The segments of one executed step in ms, or None if a frame of it is missing."""
    t_o, t_p, t_a, t_r, t_n = (stamp(x) for x in (o, p, a, r, nxt))
    rp = hops.first("policy", "rows", t_o)
    pr = rp and hops.first("recorder", "record_proposal", rp[3])
    ak = hops.first("actuator", "intent_ack", t_a)
    rs = ak and hops.first("recorder", "record_result", ak[3])
    ro = hops.first("observer", "rows", t_r)
    st = ro and hops.first("recorder", "store_observation", ro[3])
    if not (rp and pr and ak and rs and ro and st):
        return None
    s = {
        "obs_row>rows_wrap": rp[0] - t_o,
        "policy": pr[0] - rp[3],
        "prop>prop_row": t_p - pr[2],
        "prop_row>att_row": t_a - t_p,
        "att_row>ack_wrap": ak[0] - t_a,
        "actuator": rs[0] - ak[3],
        "res>res_row": t_r - rs[2],
        "res_row>rows_wrap": ro[0] - t_r,
        "observer": st[0] - ro[3],
        "store>obs_row": t_n - st[2],
    }
    _hop(s, "rows_p", rp)
    _hop(s, "prop", pr, with_decode=False)
    _hop(s, "ack", ak)
    _hop(s, "res", rs, with_decode=False)
    _hop(s, "rows_o", ro)
    _hop(s, "store", st, with_decode=False)
    out = {k: v * 1000 for k, v in s.items()}
    out["total"] = (t_n - t_o) * 1000
    out["observation_id"] = o["observation_id"]
    out["read_ms"] = nxt.get("read_ms") or 0.0
    out["request_ms"] = r.get("request_ms") or 0.0
    return out


def steps(rows: list[dict], hops: Hops) -> list[dict]:
    """The segments of every executed step whose six frames were all logged."""
    out = []
    for o, p, a, r, nxt in executed_steps(rows):
        one = one_step(hops, o, p, a, r, nxt)
        if one is not None:
            out.append(one)
    return out


def per_message(hops: Hops) -> dict[str, dict[str, float]]:
    """Encode / transit / decode medians (ms) and count of every message type received."""
    by: dict[str, dict[str, list[float]]] = collections.defaultdict(lambda: collections.defaultdict(list))
    for (_, kind), got in hops.got.items():
        for wrapped, received, decoded, msg_id in got:
            sent = hops.sent.get(msg_id)
            if sent is None:
                continue
            by[kind]["encode"].append((sent[2] - wrapped) * 1000)
            by[kind]["transit"].append((received - sent[2]) * 1000)
            by[kind]["decode"].append((decoded - received) * 1000)
            by[kind]["bytes"].append(sent[3])
    return {k: {**{f: statistics.median(v[f]) for f in v}, "n": len(v["encode"])} for k, v in by.items()}


def run_session(workdir: str, profile: str, n: int) -> list[dict]:
    """One session with every frame logged (its own capture and runtime directories, as
    ``bench/pipeline.py`` starts its sessions); the journal's rows."""
    hop_dir = os.path.join(workdir, "hops")
    os.makedirs(hop_dir, exist_ok=True)
    s = start_session(workdir, profile, n, env={"GAMERIG_HOPLOG": hop_dir})
    return finish_session(s, timeout=120 + n).rows


def report(found: list[dict], msgs: dict) -> dict:
    med = {k: statistics.median(s[k] for s in found) for k in found[0] if k != "observation_id"}
    print(
        f"{len(found)} executed steps; median step {med['total']:.2f} ms "
        f"(the segments' medians add up to {sum(med[k] for k, _, _ in SEGMENTS):.2f})\n"
    )
    print(f"{'segment':64}{'median ms':>10}")
    for key, _, what in SEGMENTS:
        print(f"{what:64}{med[key]:>10.3f}")
    print(f"{'… of the actuator: the POST (request_ms)':64}{med['request_ms']:>10.3f}")
    print(f"{'… of the observer: the state GET (read_ms)':64}{med['read_ms']:>10.3f}")
    places = collections.defaultdict(float)
    for key, place, _ in SEGMENTS:
        places[place] += med[key]
    hop_parts = {
        part: sum(med[k] for k, pl, _ in SEGMENTS if pl == "hop" and k.endswith(part))
        for part in (".encode", ".transit", ".decode")
    }
    print("\nper place (sums of medians): " + ", ".join(f"{p} {v:.2f} ms" for p, v in places.items()))
    print("the six hops: " + ", ".join(f"{p[1:]} {v:.2f} ms" for p, v in hop_parts.items()))
    print(f"\n{'message (all sent)':24}{'n':>7}{'bytes':>8}{'encode':>9}{'transit':>9}{'decode':>9}  (median ms)")
    for kind, m in sorted(msgs.items(), key=lambda kv: -kv[1]["n"]):
        print(f"{kind:24}{m['n']:>7}{int(m['bytes']):>8}{m['encode']:>9.3f}{m['transit']:>9.3f}{m['decode']:>9.3f}")
    return {"steps": len(found), "median": med, "places": dict(places), "hops": hop_parts, "messages": msgs}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--steps", type=int, default=600, help="session.max_steps (600)")
    ap.add_argument("--profile", default=os.path.join(REPO, "run", "profiles", "demo.yaml"))
    ap.add_argument("--keep", metavar="DIR", help="keep the capture and the hop logs in DIR")
    ap.add_argument("--json", metavar="PATH", help="also write the figures as JSON")
    ap.add_argument(
        "--no-baseline",
        action="store_true",
        help="skip the in-process replay whose HTTP requests are shown beside the session's",
    )
    args = ap.parse_args(argv)
    workdir = args.keep or tempfile.mkdtemp(prefix="gamerig-timeline-")
    os.makedirs(workdir, exist_ok=True)
    rows = run_session(workdir, args.profile, args.steps)
    hops = Hops(os.path.join(workdir, "hops"))
    found = steps(rows, hops)
    if not found:
        print("no executed step had all six frames logged", file=sys.stderr)
        return 1
    figures = report(found, per_message(hops))
    baseline = None
    if not args.no_baseline:
        base_dir = os.path.join(workdir, "baseline")
        os.makedirs(os.path.join(base_dir, "hops"), exist_ok=True)
        os.environ[ENV] = os.path.join(base_dir, "hops")  # the replay's client and its game log too
        try:
            replay(rows, base_dir)
        finally:
            del os.environ[ENV]
        baseline = http_times(os.path.join(base_dir, "hops"))
    figures["http"] = print_http(hops.http, baseline)
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(figures, fh, indent=1)
    if not args.keep:
        shutil.rmtree(workdir, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
