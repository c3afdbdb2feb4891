"""Two runs side by side: ``api/pair/A/B/RUN`` (run RUN of session A and of session B, usually
two arms' sessions on one seed), aligned by floor, with the first decision where they differ.

**Aligned by floor**: each run's ``floors`` (``supervisor.capture.runscore``: per floor reached,
the step it was first reached at, HP, max HP, gold, the deck size where a fight showed it, and
the bosses beaten before it), one row per floor either run reached, with the progress score on
reaching it (``runscore.progress_score(floor, bosses)``).

**A run's decisions** are its executed decisions in journal order: each ``action_attempt`` row
(the action sent; a proposal's first attempt only) with the proposal it carries out and the
observation it was decided on. Run N starts at the observation its N-th ``run_identity_changed``
row names (the whole session is run 1 when the journal has none) and stops at its first
game-over screen; decisions before it (the menus) and after it are not the run's.

**The first decision where they differ**: walk both runs' decisions side by side, the k-th of
one with the k-th of the other, and stop at the first pair where

* the screens differ: the observation files' SHA-256 (the journal's ``sha256``; the
  ``state_type`` when a row has no hash): the runs reached different states, so an earlier
  decision (or the game) took them apart; or
* the choices differ: the action or its parameters.

Two runs on the same seed start from the same state, and the built-in game answers the same
action on the same state with the same state, so until that point both runs saw the same
screens and made the same choices. When one run ends first with no difference, there is none
to show (the page says how many decisions each made).
"""

from __future__ import annotations

import json
from typing import Any

from protocol.events import ActionAttempt, Observation, Proposal, RunIdentityChanged
from supervisor.capture.runscore import progress_score

from .catalog import Catalog
from .track import Track

GAME_OVER = "game_over"
ANSWER_CHARS = 2000  # a model's answer longer than this is cut on the page (the journal keeps it)


def _cut(value: Any) -> Any:
    text = json.dumps(value, ensure_ascii=False, default=str)
    return value if len(text) <= ANSWER_CHARS else text[:ANSWER_CHARS] + f"... ({len(text)} characters)"


def _model(proposal: dict) -> list[dict]:
    """A proposal's model answers, each with its model and the reason the answer gave."""
    out = []
    for e in proposal.get("model_evidence") or ():
        if not isinstance(e, dict):
            continue
        req = e.get("request") if isinstance(e.get("request"), dict) else {}
        out.append(
            {
                "model": req.get("model"),
                "question_kind": req.get("question_kind"),
                "answers": _cut(e.get("answers")),
                "error": e.get("message") or e.get("error"),
            }
        )
    return out


def decisions(track: Track, run: int) -> tuple[list[dict], bool]:
    """Run ``run``'s executed decisions (see the module docstring), and whether the journal
    showed that run at all."""
    with track.lock:
        has_runs = bool(track.run_starts)
    number, inside, found = (0, False, False) if has_runs else (1, run == 1, run == 1)
    obs_index = -1
    observations: dict[str, dict] = {}
    proposals: dict[str, dict] = {}
    done: set[str] = set()
    out: list[dict] = []
    for _line, _off, row in track.rows_from(0, None):
        if row is None:
            continue
        event = row.get("event")
        if event == Observation.KIND:
            obs_index += 1
            if row.get("state_type") == GAME_OVER and inside:
                break
            if inside or has_runs:
                observations[str(row.get("observation_id"))] = {
                    "index": obs_index,
                    "step": row.get("step"),
                    "state_type": row.get("state_type"),
                    "digest": row.get("sha256"),
                    "progress": row.get("progress"),
                }
                if len(observations) > 64 and not inside:
                    observations.pop(next(iter(observations)))
        elif event == RunIdentityChanged.KIND and has_runs:
            number += 1
            if number > run:
                break
            inside = found = number == run
        elif event == Proposal.KIND and inside:
            proposals[str(row.get("proposal_id"))] = row
        elif event == ActionAttempt.KIND and inside:
            pid = str(row.get("proposal_id"))
            if pid in done:
                continue
            done.add(pid)
            o = observations.get(str(row.get("observation_id"))) or {}
            p = proposals.pop(pid, {})
            progress = o.get("progress") if isinstance(o.get("progress"), dict) else {}
            out.append(
                {
                    "n": len(out) + 1,
                    "index": o.get("index"),
                    "step": o.get("step"),
                    "state_type": o.get("state_type") or row.get("state_type"),
                    "digest": o.get("digest"),
                    "floor": progress.get("floor"),
                    "act": progress.get("act"),
                    "action": row.get("action"),
                    "parameters": row.get("parameters"),
                    "reason": p.get("reason"),
                    "source": p.get("source"),
                    "model": _model(p),
                    "agent": _cut(p.get("agent")) if p.get("agent") is not None else None,
                }
            )
    return out, found


def _screen(a: dict, b: dict) -> tuple[Any, Any]:
    if a.get("digest") and b.get("digest"):
        return a["digest"], b["digest"]
    return a.get("state_type"), b.get("state_type")


def first_difference(da: list[dict], db: list[dict]) -> dict | None:
    """The first k where the k-th decisions differ by screen or by choice (module docstring)."""
    for a, b in zip(da, db):
        sa, sb = _screen(a, b)
        if sa != sb:
            return {"n": a["n"], "kind": "screen", "a": a, "b": b}
        if (a.get("action"), a.get("parameters")) != (b.get("action"), b.get("parameters")):
            return {"n": a["n"], "kind": "choice", "a": a, "b": b}
    return None


def run_of(track: Track, run: int) -> dict | None:
    """Run ``run`` (1-based) of the session: an ended run, or the one still being played."""
    with track.lock:
        runs = list(track.facts.runs)
        now = track.facts.run_in_progress()
    if 1 <= run <= len(runs):
        return {**runs[run - 1], "ended": True}
    if run == len(runs) + 1 and now is not None:
        return {**now, "outcome": "unfinished", "won": False}
    return None


def seed_of(track: Track) -> dict[str, Any]:
    """The seeds the session's profile set (``game.seed``, ``policy.settings.run_seed``)."""
    profile = (track.start or {}).get("profile") or {}
    game = profile.get("game") if isinstance(profile.get("game"), dict) else {}
    policy = profile.get("policy") if isinstance(profile.get("policy"), dict) else {}
    settings = policy.get("settings") if isinstance(policy.get("settings"), dict) else {}
    out = {}
    if game.get("seed") is not None:
        out["game.seed"] = game["seed"]
    if settings.get("run_seed") is not None:
        out["policy.settings.run_seed"] = settings["run_seed"]
    return out


def _side(track: Track, run: dict) -> dict[str, Any]:
    profile = (track.start or {}).get("profile") or {}
    policy = profile.get("policy") if isinstance(profile.get("policy"), dict) else {}
    with track.lock:
        seeded_by = track.facts.seeded_by
    return {
        "session": track.key,
        "id": track.id,
        "fleet": track.fleet,
        "policy": policy.get("module"),
        "model": track.facts.model_name,
        "seed": seed_of(track),
        "seeded_by": seeded_by,
        **{
            k: run.get(k)
            for k in (
                "outcome",
                "won",
                "ended",
                "floor",
                "act",
                "elites",
                "bosses",
                "hp_end",
                "max_hp",
                "progress_score",
                "seeded",
                "step",
            )
        },
    }


def _floor_view(entry: dict | None) -> dict | None:
    if entry is None:
        return None
    return {
        **{k: entry.get(k) for k in ("step", "hp", "max_hp", "gold", "deck", "bosses")},
        "progress_score": round(progress_score(entry["floor"], entry.get("bosses") or 0), 6),
    }


def side_by_side(catalog: Catalog, key_a: str, key_b: str, run: int) -> dict[str, Any]:
    """The answer of ``api/pair/A/B/RUN``; LookupError naming what is missing."""
    tracks = []
    for key in (key_a, key_b):
        t = catalog.track(key)
        if t is None:
            raise LookupError(f"no session {key!r} in the paths this viewer was given")
        if t.offset == 0:
            t.follow()
        tracks.append(t)
    runs = []
    for t in tracks:
        r = run_of(t, run)
        if r is None:
            with t.lock:
                n = len(t.facts.runs)
            raise LookupError(
                f"session {t.key} has no run {run} (it has {n} ended"
                f"{' and one being played' if t.facts.run_in_progress() else ''})"
            )
        runs.append(r)
    (da, found_a), (db, found_b) = decisions(tracks[0], run), decisions(tracks[1], run)
    floors_a = {f["floor"]: f for f in runs[0].get("floors") or ()}
    floors_b = {f["floor"]: f for f in runs[1].get("floors") or ()}
    floors = [
        {"floor": n, "a": _floor_view(floors_a.get(n)), "b": _floor_view(floors_b.get(n))}
        for n in sorted(set(floors_a) | set(floors_b))
    ]
    sa, sb = seed_of(tracks[0]), seed_of(tracks[1])
    warning = None
    if sa != sb:
        warning = (
            f"not the same seed: {sa or 'none set'} and {sb or 'none set'}; their decisions are compared all the same"
        )
    return {
        "run": run,
        "a": _side(tracks[0], runs[0]),
        "b": _side(tracks[1], runs[1]),
        "floors": floors,
        "decisions": [len(da), len(db)],
        "run_found": [found_a, found_b],
        "first_difference": first_difference(da, db),
        "warning": warning,
    }


__all__ = ["side_by_side", "decisions", "first_difference"]
