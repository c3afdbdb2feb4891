"""Audit a capture offline (``supervisor capture audit PATH`` prints the reports).

Replays every stored observation of each session, in journal order, through a fresh
instance of the policy (the profile's ``policy.module`` recorded in ``session_start``, or
``--policy``): ``observe`` for every observation, ``decide`` for each one, and the recorded
``action_result`` rows through ``record_result`` (against the proposals that were recorded),
so the policy's memory evolves as it did live. No game, no model, nothing is written.

It reports exceptions (with the observation id and the traceback's last line) and the
decisions per screen type (action counts, waits, stops). A decision that differs from the
recorded one is counted as a divergence per screen — expected where time-based rules (the
stuck limit) or a changed policy decide differently; it is information, not an error.

``sessions_to_audit(PATH)`` lists what to replay (``NotACapture`` for a PATH it cannot use),
``audit_session`` replays one session (``PolicyNotFound`` for a policy name it cannot load).
"""

from __future__ import annotations

import collections
import os
import traceback

from actors.policy.base import PolicyObservation
from actors.policy.registry import load_policy_class
from protocol import obspack
from protocol.events import ActionAttempt, ActionResult, Observation, Proposal, SessionStart
from protocol.journal import iter_lines

from .modeluse import ModelUse
from .verify import resolve

SESSIONS = "sessions"


def _rows(session_dir: str):
    for line in iter_lines(os.path.join(session_dir, "events.jsonl")):
        if line.row is not None:  # a torn row: the verifier reports it
            yield line.row


def audit_session(session_dir: str, capture_root: str, policy_name: str | None) -> dict:
    out = {
        "session": os.path.basename(session_dir),
        "observations": 0,
        "exceptions": [],
        "by_screen": {},
        "divergences": 0,
        "policy": None,
    }
    policy = None
    proposals: dict[str, dict] = {}
    attempts: dict[str, str] = {}
    decided: dict[str, tuple | None] = {}  # observation_id -> the audit's (action, parameters)
    by_screen: dict[str, collections.Counter] = collections.defaultdict(collections.Counter)
    model = ModelUse()
    for row in _rows(session_dir):
        model.add(row)
        ev = row.get("event")
        if ev == SessionStart.KIND:
            profile = row.get("profile") or {}
            name = policy_name or (profile.get("policy") or {}).get("module") or "sts2"
            cls = load_policy_class(name)
            policy = cls(dict((profile.get("policy") or {}).get("settings") or {}), dict(profile.get("session") or {}))
            out["policy"] = name
        elif ev == Observation.KIND and policy is not None:
            out["observations"] += 1
            decided[row["observation_id"]] = _audit_one(policy, row, capture_root, by_screen, out)
        elif ev == Proposal.KIND:
            proposals[row["proposal_id"]] = row
            mine = decided.pop(row["observation_id"], None)
            if mine is not None and mine != (row.get("action"), row.get("parameters")):
                out["divergences"] += 1
        elif ev == ActionAttempt.KIND:
            attempts[row["attempt_id"]] = row["proposal_id"]
        elif ev == ActionResult.KIND and policy is not None:
            prop = proposals.get(attempts.get(row["attempt_id"], ""))
            if prop is not None:
                policy.record_result(prop, row)
    out["by_screen"] = {k: dict(v) for k, v in sorted(by_screen.items())}
    out["model"] = model.as_dict()
    out["model_line"] = model.line()
    return out


def _audit_one(policy, row: dict, root: str, by_screen, out: dict) -> tuple | None:
    oid = row["observation_id"]
    try:
        state = obspack.read_state(root, row["path"])
        obs = PolicyObservation(oid, row.get("step", 0), row.get("phase", "run"), state, row)
        policy.observe(obs)
        p = policy.decide(obs)
    except Exception as exc:  # noqa: BLE001 - the point of an audit: report any policy failure, go on
        last = traceback.format_exception_only(type(exc), exc)[-1].strip()
        out["exceptions"].append({"observation_id": oid, "state_type": row.get("state_type"), "error": last})
        return None
    label = p.action if p.wish == "execute" else p.wish
    by_screen[row.get("state_type") or "?"][label or "?"] += 1
    return (p.action, p.parameters)


def sessions_to_audit(path: str) -> tuple[str, list[str]]:
    """(the capture root, its session directories to replay) for a session directory or a
    capture root; raises ``NotACapture``."""
    kind, target = resolve(path)
    if kind == "session":
        return os.path.dirname(os.path.dirname(target)), [target]
    base = os.path.join(target, SESSIONS)
    return target, [os.path.join(base, d) for d in sorted(os.listdir(base))]
