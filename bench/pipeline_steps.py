"""A game-path step as a session's journal shows it (``bench/pipeline.py``'s definition, which
``bench/step_ab.py``, ``bench/step_timeline.py`` and ``bench/agent.py`` share): a finished
journal's rows, each executed step's rows, the stage times of each step (``STAGES``), and the
percentile and rate the reports print. Times are the rows' ``recorded_at`` stamps."""

from __future__ import annotations

import datetime as dt

import protocol.events as ev
from protocol.journal import iter_lines

#: the stages of an executed step (the keys of ``action_steps``' dicts, beside ``total``) and
#: what lies in each
STAGES = (
    ("read_ms", "GET of the state (the observation row's read_ms)"),
    (
        "obs_prop",
        "observation → proposal: the row to the policy (the observation file's and "
        "directory's fsync meanwhile), decide, record_proposal",
    ),
    ("prop_att", "proposal → attempt: the status row, the attempt row (the standing intent, same group)"),
    ("att_res", "attempt → result: the intent's fsync, the ack, the POST, record_result"),
    ("request_ms", "… of which the POST (the result row's request_ms)"),
    (
        "res_obs",
        "result → next observation: the row to the observer (the result's fsync "
        "meanwhile), GET state (+ compendium), store",
    ),
)


def stamp(row: dict) -> float:
    return dt.datetime.fromisoformat(row["recorded_at"].replace("Z", "+00:00")).timestamp()


def read_rows(path: str) -> list[dict]:
    """Every row of a finished journal (the one reader, ``protocol.journal.iter_lines``);
    a line that is not a whole row is an error here: the bench measures whole sessions."""
    rows = []
    for line in iter_lines(path):
        if line.row is None and line.data.strip():
            raise ValueError(f"{path}: line {line.number} is not a whole journal row")
        if line.row is not None:
            rows.append(line.row)
    return rows


def executed_steps(rows: list[dict]):
    """Each executed step's rows: (observation, proposal, attempt, result, next observation),
    where the next observation carries that attempt's id."""
    obs = [r for r in rows if r["event"] == ev.Observation.KIND]
    prop = {r["observation_id"]: r for r in rows if r["event"] == ev.Proposal.KIND}
    att = {r["proposal_id"]: r for r in rows if r["event"] == ev.ActionAttempt.KIND}
    res = {r["attempt_id"]: r for r in rows if r["event"] == ev.ActionResult.KIND}
    for o, nxt in zip(obs, obs[1:]):
        p = prop.get(o["observation_id"])
        a = att.get(p["proposal_id"]) if p else None
        r = res.get(a["attempt_id"]) if a else None
        if r is not None and nxt.get("after_attempt_id") == a["attempt_id"]:
            yield o, p, a, r, nxt


def action_steps(rows: list[dict]) -> list[dict]:
    """One dict of stage times (ms) per executed step (see the module docstring)."""
    out = []
    for o, p, a, r, nxt in executed_steps(rows):
        t = [stamp(x) for x in (o, p, a, r, nxt)]
        out.append(
            {
                "observation_id": o["observation_id"],
                "total": (t[4] - t[0]) * 1000,
                "obs_prop": (t[1] - t[0]) * 1000,
                "prop_att": (t[2] - t[1]) * 1000,
                "att_res": (t[3] - t[2]) * 1000,
                "res_obs": (t[4] - t[3]) * 1000,
                "read_ms": nxt.get("read_ms") or 0.0,
                "request_ms": r.get("request_ms") or 0.0,
            }
        )
    return out


def pct(values: list[float], q: float) -> float:
    """Nearest-rank percentile (q in 0..100)."""
    if not values:
        return float("nan")
    s = sorted(values)
    return s[min(len(s) - 1, max(0, round(q / 100 * len(s) + 0.5) - 1))]


def rate(rows: list[dict]) -> tuple[int, float]:
    """(steps, steps/s): observations over the first-to-last observation window."""
    obs = [stamp(r) for r in rows if r["event"] == ev.Observation.KIND]
    return len(obs), (len(obs) - 1) / (obs[-1] - obs[0]) if len(obs) > 1 else float("nan")
