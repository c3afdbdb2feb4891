"""``bench/agent.py``'s figures, from a session's journal and its memory samples (the module
docstring of ``bench/agent.py`` defines each): the model decisions and their times, the
heuristic's steps, the agent's own work timed in this process, and the memory's slope."""

from __future__ import annotations

import json
import os
import statistics
import time

from pipeline_steps import executed_steps, pct, stamp

import protocol
import protocol.events as ev
from actors.model_client.answers import envelope_schema
from actors.model_client.evidence import request_hash
from actors.model_client.questions import build_questions
from actors.policy.llm import KIND, Sts2Agent
from actors.policy.sts2_actions import legal_actions, screen_text
from protocol.journal import encode_row
from protocol.policy_to_model import AskModel
from protocol.to_recorder import RecordProposal

#: growth beyond the heuristic's above this (KiB of RSS per 1,000 model decisions) is "not
#: flat": 1 KiB per decision. Anything kept per decision (a proposal row is ~5.5 KiB of JSON
#: with its evidence, more as Python objects; a question ~4 KiB) shows far above it; ids and
#: the allocator's noise stay below
FLAT_KIB_PER_1000 = 1024.0
#: the time the agent may add per decision over the model's answer time (ms, medians)
TARGET_MS = 5.0
MIN_SPAN = 1000  # decisions a slope must span to be judged


def is_model_decision(row: dict) -> bool:
    return row.get("event") == ev.Proposal.KIND and bool((row.get("agent") or {}).get("attempts"))


def decisions(rows: list[dict], n: int) -> list[dict]:
    """The first ``n`` model decisions of a journal, each with its figures (module docstring;
    ``step`` and ``own`` are None for a decision whose action was not executed)."""
    errors: dict[str, list[dict]] = {}
    for r in rows:
        if r["event"] == ev.ModelError.KIND and r.get("observation_id"):
            errors.setdefault(r["observation_id"], []).append(r)
    steps = {o["observation_id"]: (o, nxt) for o, _, _, _, nxt in executed_steps(rows)}
    out = []
    for p in rows:
        if len(out) >= n:
            break
        if not is_model_decision(p):
            continue
        calls = [e.get("usage") or {} for e in p.get("model_evidence") or []]
        calls += [e.get("usage") or {} for e in errors.get(p["observation_id"], [])]
        known = all(isinstance(u.get("wall_ms"), (int, float)) for u in calls) and calls
        model = sum(u["wall_ms"] for u in calls) if known else None
        http = sum(u.get("latency_ms") or 0.0 for u in calls) if known else None
        pair = steps.get(p["observation_id"])
        step = (stamp(pair[1]) - stamp(pair[0])) * 1000 if pair else None
        out.append(
            {
                "observation_id": p["observation_id"],
                "outcome": p["agent"].get("outcome"),
                "screen": (p.get("state_type"), p.get("action")),
                "calls": len(p["agent"]["attempts"]),
                "decide": p["decide_ms"],
                "model": model,
                "http": http,
                "policy_extra": p["decide_ms"] - model if model is not None else None,
                "step": step,
                "own": step - model if step is not None and model is not None else None,
                "obs_prop": (stamp(p) - stamp(pair[0])) * 1000 if pair else None,
                "prop_next": (stamp(pair[1]) - stamp(p)) * 1000 if pair else None,
                "row_bytes": len(json.dumps(p, separators=(",", ":"))),
            }
        )
    return out


def steps_to(rows: list[dict], n: int) -> int:
    """The observation rows up to the ``n``-th model decision (all of them if fewer)."""
    seen = steps = 0
    for r in rows:
        if r["event"] == ev.Observation.KIND:
            steps += 1
        elif is_model_decision(r):
            seen += 1
            if seen == n:
                break
    return steps


def baseline_steps(rows: list[dict]) -> list[dict]:
    """The heuristic's executed steps (observation row → the next observation row, ms)."""
    out = []
    for o, p, _, _, nxt in executed_steps(rows):
        out.append(
            {
                "step": (stamp(nxt) - stamp(o)) * 1000,
                "decide": p.get("decide_ms") or 0.0,
                "screen": (p.get("state_type"), p.get("action")),
                "obs_prop": (stamp(p) - stamp(o)) * 1000,
                "prop_next": (stamp(nxt) - stamp(p)) * 1000,
                "model": bool(p.get("model_evidence")),
            }
        )
    return out


def other_steps(rows: list[dict]) -> list[float]:
    """The agent session's executed steps that asked no model (menus, one legal action)."""
    return [(stamp(nxt) - stamp(o)) * 1000 for o, p, _, _, nxt in executed_steps(rows) if not is_model_decision(p)]


#: the agent's own work, timed in this process (``parts``): name -> what it is
PARTS = {
    "legal_actions": "the screen's legal actions (the answer's schema)",
    "screen_text": "the screen as compact JSON",
    "question": "the question built and checked (policy and model client each build it)",
    "request_hash": "its recorded state and request hash (policy and model client each)",
    "schema": "the answer's JSON schema (one anyOf alternative per legal action)",
    "prompt": "the prompt rendered from the template",
    "ask_message": "the AskModel message encoded",
    "proposal_message": "the proposal with its evidence, encoded and decoded (one hop)",
    "proposal_row": "the proposal row's JSON (the recorder's write)",
}


def parts(rows: list[dict], n: int = 200) -> dict[str, dict]:
    """Each of the agent's own steps of work (``PARTS``), in µs, on the screens of the session's
    first ``n`` answered model decisions: the observation file the policy decided on, the
    memory lines its question showed. The policy here is fresh (its guards' state differs
    from the session's; the work is the same)."""
    profile = rows[0]["profile"]
    root = profile["capture"]["root"]
    policy = Sts2Agent(dict(profile["policy"].get("settings") or {}), dict(profile.get("session") or {}))
    template = policy.template.question_field()
    obs = {r["observation_id"]: r for r in rows if r["event"] == ev.Observation.KIND}
    times: dict[str, list[float]] = {k: [] for k in PARTS}

    def timed(name: str, fn):
        start = time.perf_counter()
        out = fn()
        times[name].append((time.perf_counter() - start) * 1e6)
        return out

    for p in [r for r in rows if is_model_decision(r) and r.get("model_evidence")][:n]:
        with open(os.path.join(root, obs[p["observation_id"]]["path"]), encoding="utf-8") as fh:
            state = json.load(fh)
        shown = p["model_evidence"][0]["request"]["questions"][0]
        legal = timed("legal_actions", lambda: legal_actions(policy, state)) or shown["actions"]
        screen = timed("screen_text", lambda: screen_text(state))
        asked = {
            "screen": screen,
            "screen_type": shown["screen_type"],
            "actions": legal,
            "memory": shown["memory"],
            "feedback": [],
            "template": template,
        }
        [question] = timed("question", lambda: build_questions(KIND, [asked]))
        timed("request_hash", lambda: request_hash(KIND, [question.state()]))
        timed("schema", lambda: envelope_schema([question]))
        timed("prompt", question.prompt)
        timed(
            "ask_message",
            lambda: protocol.encode(
                protocol.wrap(AskModel(kind=KIND, questions=[asked], deadline_ms=35_000), session="s", sender="policy")
            ),
        )
        msg = RecordProposal(
            proposal_id=p["proposal_id"],
            observation_id=p["observation_id"],
            action=p["action"],
            parameters=p["parameters"],
            reason=p["reason"],
            source=p["source"],
            wish="execute",
            model_evidence=p["model_evidence"],
            extra={"agent": p["agent"]},
            decide_ms=p["decide_ms"],
        )
        timed(
            "proposal_message",
            lambda: protocol.decode(protocol.encode(protocol.wrap(msg, session="s", sender="policy"))),
        )
        timed("proposal_row", lambda: encode_row(p))
    return {k: summary(v) for k, v in times.items()}


def summary(values: list[float | None]) -> dict:
    v = [x for x in values if x is not None]
    return {"n": len(v), "median": pct(v, 50), "p90": pct(v, 90)} if v else {"n": 0, "median": None, "p90": None}


def slope(points: list[tuple[int, int]]) -> float | None:
    """Least-squares slope of (x, RSS bytes) in KiB per 1,000 of x; None under ``MIN_SPAN``."""
    if len(points) < 3 or max(x for x, _ in points) - min(x for x, _ in points) < MIN_SPAN:
        return None
    mx = statistics.fmean(x for x, _ in points)
    my = statistics.fmean(y for _, y in points)
    return sum((x - mx) * (y - my) for x, y in points) / sum((x - mx) ** 2 for x, _ in points) * 1000 / 1024


def memory(samples: list[tuple], n: int, baseline: list[tuple]) -> dict[str, dict]:
    """Per process of the agent session: RSS (MiB) over the first and the last tenth of the
    decisions, and the slope over the samples after the first tenth (KiB per 1,000 decisions;
    none when they span fewer than ``MIN_SPAN`` decisions: start-up's growth would pass for a
    slope). Beside it the same process's slope in the heuristic session over the same steps
    (KiB per 1,000 steps; none unless that session reached 90 % of them), and the agent's
    **excess**: its slope less the heuristic's growth over the steps the agent took per 1,000
    decisions. Flat: the excess (or, without a baseline, the slope) is at most
    ``FLAT_KIB_PER_1000``."""
    names = sorted({name for sample in samples for name in sample[3]})
    tenth = max(1, n // 10)
    out = {}
    for name in names:
        pts = [(d, st, rss[name]) for _, d, st, rss, _ in samples if name in rss]
        ended = next((i for i, (d, _, _) in enumerate(pts) if d >= n), len(pts) - 1)
        pts = pts[: ended + 1]  # through the first sample at or past the n-th decision
        first = [r for d, _, r in pts if d <= tenth]
        last = [r for d, _, r in pts if d >= n - tenth]
        fit = [(d, st, r) for d, st, r in pts if d > tenth]
        mine = slope([(d, r) for d, _, r in fit])
        theirs = excess = None
        if mine is not None:
            lo, hi = min(st for _, st, _ in fit), max(st for _, st, _ in fit)
            steps_per_decision = (hi - lo) / (max(d for d, _, _ in fit) - min(d for d, _, _ in fit))
            base = [(st, rss[name]) for _, _, st, rss, _ in baseline if name in rss and lo < st <= hi]
            if base and max(st for st, _ in base) >= lo + 0.9 * (hi - lo):
                theirs = slope(base)
            if theirs is not None:
                excess = mine - theirs * steps_per_decision
        judged = excess if excess is not None else mine
        out[name] = {
            "first_mib": statistics.median(first) / 2**20 if first else None,
            "last_mib": statistics.median(last) / 2**20 if last else None,
            "peak_mib": max(r for _, _, r in pts) / 2**20 if pts else None,
            "slope_kib_per_1000": mine,
            "baseline_kib_per_1000_steps": theirs,
            "excess_kib_per_1000": excess,
            "samples": len(pts),
            "flat": None if judged is None else judged <= FLAT_KIB_PER_1000,
        }
    return out
