"""The JSON answers about sessions, built from a ``track.Track``: the list entry, the
summary (groups by run, act and floor; markers), a page of steps, the chart series and one
step's evidence.

Every string here is copied from the capture as data; the page puts it in the document as
text, never as markup (static/common.js), so a capture cannot run script in the viewer.
"""

from __future__ import annotations

import json
import math
import os
import time
from typing import Any

from protocol.events import ActionAttempt, ActionResult, Observation, Proposal, ProposalStatus
from supervisor.fleet.report import model_figures

from . import metrics
from .track import OUTCOME_CODES, PAGE_SLACK, STATUS_CODES, Track

LIVE_S = 15.0  # a journal without session_end written to this recently is running
MAX_PAGE = 500
MAX_POINTS = 4000
RESPONSE_CHARS = 4000  # a game reply longer than this is cut on the page (the journal keeps it)
_OUTCOMES = {v: k for k, v in OUTCOME_CODES.items()}
#: a session's score as results rows give it (CapturedSession.facts: the STS2 runs' progress score,
#: a Game Boy cartridge's final and best score and milestones)
SCORE_KEYS = (
    "progress_score",
    "floor",
    "act",
    "elites",
    "bosses",
    "hp_end",
    "scored_runs",
    "seeded_by",
    "score_final",
    "score_best",
    "milestones_reached",
    "game_over_frame",
)
_STATUSES = {v: k for k, v in STATUS_CODES.items()}

Json = dict[str, Any]
"""A JSON object: a journal row as read, or an answer being built."""


def _obj(value: Any) -> Json:
    """``value`` when it is a JSON object, else an empty one."""
    return value if isinstance(value, dict) else {}


def _finite(x: float) -> float | None:
    return None if x != x or math.isinf(x) else round(x, 3)


def shown_path(path: Any) -> Any:
    """A path inside the current folder as a relative one (what the user typed, usually)."""
    if not isinstance(path, str) or not os.path.isabs(path):
        return path
    rel = os.path.relpath(path, os.getcwd())
    return path if rel.startswith("..") else rel


def read_summary(track: Track) -> Json | None:
    try:
        with open(os.path.join(track.dir, "session.json"), encoding="utf-8") as fh:
            data = json.load(fh)
        return data if isinstance(data, dict) else None
    except (OSError, ValueError):
        return None


def live(track: Track, now: float | None = None) -> bool:
    """Running: no ``session_end`` yet and the journal written in the last ``LIVE_S``."""
    return track.end is None and ((now or time.time()) - track.mtime) < LIVE_S


def entry(track: Track, verdict: Json | None) -> Json:
    """The session's row in the list."""
    with track.lock:
        start = _obj(track.start)
        profile = _obj(start.get("profile"))
        game = _obj(profile.get("game"))
        facts: Json = track.facts.facts()
        rom = _obj(_obj(track.emulator).get("rom"))
        return {
            "key": track.key,
            "id": track.id,
            "fleet": track.fleet,
            "dir": shown_path(track.dir),
            "profile": profile.get("name"),
            "game": (
                f"{rom.get('title') or 'cartridge'} (PyBoy)"
                if game.get("backend") == "pyboy"
                else ("built-in game" if game.get("builtin") else str(game.get("base_url") or "http game"))
            ),
            "backend": game.get("backend"),
            "policy": profile["policy"].get("module") if isinstance(profile.get("policy"), dict) else None,
            "started": start.get("recorded_at"),
            "duration_s": _finite(track.last_at - track.first_at),
            "steps": facts["steps"],
            "accepted": facts["accepted"],
            "rejected": facts["rejected"],
            "unknown": facts["unknown"],
            "runs": facts["runs"],
            "wins": facts["wins"],
            "runs_inferred": facts["runs_inferred"],
            "run_outcomes": [r["outcome"] for r in track.facts.runs[-20:]],
            "reason": facts["reason"],
            "exit_code": track.facts.exit_code,
            "restarts": track.facts.restarts,
            "live": live(track),
            "verdict": verdict,
            "torn_tail": track.tail_torn,
            "problem": track.unreadable,
            "model_errors": track.facts.model.errors,
            "model_answers": track.facts.model.answers,
            "model_name": facts["model"],
            "character": facts["character"],
            **_money(facts),
            **{k: facts.get(k) for k in SCORE_KEYS},
        }


def _money(facts: Json) -> Json:
    """A session's model tokens and cost, with the texts the fleet tables use
    (``supervisor.fleet.report.model_figures``): an unknown cost is ``unknown``, never 0."""
    m: Json = model_figures([facts], facts["runs"], facts["wins"])
    return {
        k: m[k]
        for k in (
            "model_calls",
            "model_tokens",
            "model_cached_tokens",
            "model_cost_usd",
            "model_cost_unknown_calls",
            "model_cost_state",
            "model_fallbacks",
            "tokens_text",
            "cost_text",
            "cost_per_run_text",
            "cost_per_win_text",
        )
    }


def groups(track: Track) -> list[Json]:
    """Consecutive steps of one run, act and floor, with the HP and gold they saw."""
    with track.lock:
        n = track.figures_read
        hp, max_hp, gold, floor, act = (
            track.figs[metrics.NAMES.index(k)] for k in ("hp", "max_hp", "gold", "floor", "act")
        )
        starts = list(track.run_starts)
        steps = track.step_no
        out: list[Json] = []
        run, r = 0, 0
        cur: Json | None = None
        for i in range(n):
            while r < len(starts) and starts[r][0] <= i:
                run, r = r + 1, r + 1
            key = (run, act[i], floor[i])
            if cur is None or cur["_key"] != key:
                cur = {
                    "_key": key,
                    "run": run,
                    "act": _v(act[i]),
                    "floor": _v(floor[i]),
                    "first": i,
                    "last": i,
                    "first_step": steps[i],
                    "hp_start": _v(hp[i]),
                    "hp_end": _v(hp[i]),
                    "hp_min": _v(hp[i]),
                    "max_hp": _v(max_hp[i]),
                    "damage": 0,
                    "gold_start": _v(gold[i]),
                    "gold_end": _v(gold[i]),
                }
                out.append(cur)
                prev_hp = hp[i]
            else:
                if hp[i] >= 0 and prev_hp >= 0 and hp[i] < prev_hp:
                    cur["damage"] += prev_hp - hp[i]
                if hp[i] >= 0:
                    prev_hp = hp[i]
                    cur["hp_end"] = hp[i]
                    cur["hp_min"] = hp[i] if cur["hp_min"] is None else min(cur["hp_min"], hp[i])
                if gold[i] >= 0:
                    cur["gold_end"] = gold[i]
                cur["last"] = i
        for g in out:
            del g["_key"]
        return out


def _no_floors(run: Json | None) -> Json | None:
    return None if run is None else {k: v for k, v in run.items() if k != "floors"}


def _v(x: int) -> int | None:
    return None if x < 0 else x


def summary(track: Track, verdict: Json | None) -> Json:
    """What the session page shows above its timeline."""
    head = entry(track, verdict)
    with track.lock:
        head.update(
            {
                "journal_bytes": track.offset,
                "journal_lines": track.lines,
                "figures_read": track.figures_read,
                "figures_failed": track.figures_failed,
                "markers": list(track.markers),
                "marker_count": track.marker_count,
                "runs_detail": [{k: v for k, v in r.items() if k != "floors"} for r in track.facts.runs],
                "run_in_progress": _no_floors(track.facts.run_in_progress()),
                "runs_entered": track.facts.runs_entered,
                "run_starts": [{"index": i, "run_id": rid} for i, rid in track.run_starts],
                "model": {
                    "calls": track.facts.model.answers,
                    "errors": track.facts.model.errors,
                    "fallbacks": track.facts.model.fallbacks,
                    **track.model,
                },
                "emulator": track.emulator,
                "profile_full": (track.start or {}).get("profile"),
                "end": track.end,
            }
        )
    head["session_json"] = read_summary(track)
    head["groups"] = groups(track)
    return head


# -- a page of steps ---------------------------------------------------------------------


def page(track: Track, offset: int, limit: int) -> Json:
    """Steps ``offset .. offset+limit-1`` with their proposal, status, attempt and result."""
    limit = max(1, min(int(limit), MAX_PAGE))
    with track.lock:
        total = track.steps
        offset = max(0, min(int(offset), max(0, total - 1)))
        end = min(total, offset + limit)
        if offset >= total:
            return {"offset": 0, "limit": limit, "total": total, "steps": []}
        start_byte = track.obs_off[offset]
        stop_byte = track.obs_off[end + PAGE_SLACK] if end + PAGE_SLACK < total else None
        base: list[Json] = [
            {"index": i, "step": track.step_no[i], "line": track.obs_line[i]} for i in range(offset, end)
        ]
        offsets = [track.obs_off[i] for i in range(offset, end)]
    by_obs: dict[str, Json] = {}
    by_proposal: dict[str, Json] = {}
    by_attempt: dict[str, Json] = {}
    k = 0
    for _number, off, row in track.rows_from(start_byte, stop_byte):
        if row is None:
            continue
        event = row.get("event")
        if event == Observation.KIND:
            if k < len(base) and off == offsets[k]:
                s = base[k]
                s.update(
                    observation_id=row.get("observation_id"),
                    state_type=row.get("state_type"),
                    read_ms=row.get("read_ms"),
                    at=row.get("recorded_at"),
                    sequence=row.get("sequence"),
                    after_attempt_id=row.get("after_attempt_id"),
                    phase=row.get("phase"),
                    proposals=[],
                    run_identity=row.get("run_identity"),
                )
                by_obs[str(row.get("observation_id"))] = s
                k += 1
        elif event == Proposal.KIND and str(row.get("observation_id")) in by_obs:
            p = proposal_view(row)
            by_obs[str(row["observation_id"])]["proposals"].append(p)
            by_proposal[str(row.get("proposal_id"))] = p
        elif event == ProposalStatus.KIND and str(row.get("proposal_id")) in by_proposal:
            by_proposal[str(row["proposal_id"])].update(status=row.get("status"), stop_reason=row.get("stop_reason"))
        elif event == ActionAttempt.KIND and str(row.get("proposal_id")) in by_proposal:
            p = by_proposal[str(row["proposal_id"])]
            p["attempt"] = {
                "attempt_id": row.get("attempt_id"),
                "sequence": row.get("sequence"),
                "action": row.get("action"),
                "parameters": row.get("parameters"),
            }
            by_attempt[str(row.get("attempt_id"))] = p
        elif event == ActionResult.KIND and str(row.get("attempt_id")) in by_attempt:
            by_attempt[str(row["attempt_id"])]["result"] = result_view(row)
    with track.lock:
        marks = [m for m in track.markers if offset <= m["step"] < end]
    frames = track.emulator is not None
    for s in base:
        s["markers"] = [m for m in marks if m["step"] == s["index"]]
        if frames and "observation_id" in s:
            s["frame"] = frame_of(track, s["index"])
    return {"offset": offset, "limit": limit, "total": total, "steps": base}


def _cut(value: Any) -> Any:
    text = json.dumps(value, ensure_ascii=False, default=str)
    return value if len(text) <= RESPONSE_CHARS else text[:RESPONSE_CHARS] + f"... ({len(text)} characters)"


def proposal_view(row: Json) -> Json:
    known = {
        "proposal_id",
        "observation_id",
        "action",
        "parameters",
        "reason",
        "source",
        "decide_ms",
        "model_evidence",
        "event",
        "sequence",
        "session",
        "schema_version",
        "recorded_at",
        "ts",
        "prev_sha256",
        "guard_snapshot",
    }
    evidence = []
    for e in row.get("model_evidence") or ():
        if isinstance(e, dict):
            req = _obj(e.get("request"))
            evidence.append(
                {
                    "call_id": e.get("call_id"),
                    "backend": e.get("backend"),
                    "model": req.get("model"),
                    "question_kind": req.get("question_kind"),
                    "questions": req.get("questions"),
                    "answers": e.get("answers"),
                    "usage": e.get("usage"),
                    "attempts": e.get("attempts"),
                    "error": e.get("message") or e.get("error"),
                }
            )
    return {
        "proposal_id": row.get("proposal_id"),
        "sequence": row.get("sequence"),
        "action": row.get("action"),
        "parameters": row.get("parameters"),
        "reason": row.get("reason"),
        "source": row.get("source"),
        "decide_ms": row.get("decide_ms"),
        "model_evidence": evidence,
        "extra": {k: _cut(v) for k, v in row.items() if k not in known},
    }


def result_view(row: Json) -> Json:
    response = row.get("response")
    rejection = None
    if row.get("outcome") == "rejected" and isinstance(response, dict):
        rejection = response.get("error") or response.get("message")
    return {
        "outcome": row.get("outcome"),
        "http_status": row.get("http_status"),
        "error": row.get("error"),
        "request_ms": row.get("request_ms"),
        "rejection": rejection if isinstance(rejection, str) else None,
        "response": _cut(response),
        "sequence": row.get("sequence"),
    }


def frame_of(track: Track, i: int) -> Json | None:
    """The retained frame an emulator step's observation names (path inside the session)."""
    with track.lock:
        offset = track.obs_off[i]
    row = track.row_at(offset)
    if row is None:
        return None
    state, problem = track.observation_state(row)
    if not isinstance(state, dict) or not isinstance(state.get("frame_png"), str):
        return None
    name = os.path.basename(state["frame_png"])
    return {
        "name": name,
        "frame": state.get("frame"),
        "held": state.get("held"),
        "action_index": state.get("action_index"),
        "branch_id": state.get("branch_id"),
        "problem": problem,
    }


# -- the charts ----------------------------------------------------------------------------


def series(track: Track, first: int = 0, last: int | None = None, points: int = MAX_POINTS) -> Json:
    """The chart columns over steps ``first..last``, at most ``points`` of them (every k-th step,
    each bucket's last step, so a change is never moved, only thinned)."""
    points = max(10, min(int(points), MAX_POINTS))
    with track.lock:
        n = track.steps
        last = n - 1 if last is None else max(0, min(int(last), n - 1))
        first = max(0, min(int(first), last))
        if n == 0:
            return {"first": 0, "last": 0, "total": 0, "stride": 1, "columns": {}}
        stride = max(1, math.ceil((last - first + 1) / points))
        idx = list(range(first, last + 1, stride))
        if idx[-1] != last:
            idx.append(last)
        read = track.figures_read
        cols: dict[str, list[Any]] = {"index": idx, "step": [track.step_no[i] for i in idx]}
        for name, col in zip(metrics.NAMES, track.figs):
            cols[name] = [(col[i] if col[i] >= 0 else None) if i < read else None for i in idx]
        cols["decide_ms"] = [_finite(track.decide_ms[i]) for i in idx]
        cols["request_ms"] = [_finite(track.request_ms[i]) for i in idx]
        cols["read_ms"] = [_finite(track.read_ms[i]) for i in idx]
        cols["step_ms"] = [_finite(1000 * (track.at[i + 1] - track.at[i])) if i + 1 < n else None for i in idx]
        cols["outcome"] = [_OUTCOMES.get(track.outcome[i]) for i in idx]
    shown = [name for name in metrics.NAMES if any(v is not None for v in cols[name])]
    return {
        "first": first,
        "last": last,
        "total": n,
        "stride": stride,
        "figures_read": read,
        "shown": shown,
        "labels": metrics.LABELS,
        "columns": cols,
    }


# -- one step -------------------------------------------------------------------------------


def step_detail(track: Track, i: int) -> Json | None:
    """Step ``i``: its observation (the hash checked against the journal) and its journal rows."""
    with track.lock:
        if not 0 <= i < track.steps:
            return None
        start = track.obs_off[i]
        stop = track.obs_off[i + 1 + PAGE_SLACK] if i + 1 + PAGE_SLACK < track.steps else None
        oid = f"o-{track.obs_num[i]:06d}"
        step = track.step_no[i]
    rows: list[Json] = []
    ids = {oid}
    observation_row = None
    for number, _off, row in track.rows_from(start, stop):
        if row is None:
            continue
        event = row.get("event")
        mine = (
            (row.get("observation_id") in ids and event in (Observation.KIND, Proposal.KIND, ActionAttempt.KIND))
            or row.get("proposal_id") in ids
            or row.get("attempt_id") in ids
        )
        if not mine:
            continue
        if event == Observation.KIND:
            if observation_row is not None:
                continue
            observation_row = row
        for k in ("proposal_id", "attempt_id"):
            if isinstance(row.get(k), str):
                ids.add(row[k])
        rows.append({"line": number, "row": row})
    state, problem = track.observation_state(observation_row) if observation_row else (None, "no observation row")
    return {
        "index": i,
        "step": step,
        "observation_id": oid,
        "observation": state,
        "observation_path": (observation_row or {}).get("path"),
        "sha256": (observation_row or {}).get("sha256"),
        "hash_ok": state is not None and problem is None,
        "problem": problem,
        "rows": rows,
        "emulator": track.emulator is not None,
    }
