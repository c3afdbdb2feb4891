"""``supervisor fleet start --resume FLEET_ROOT``: finish a fleet whose driver died (killed, or
the machine rebooted), from what its root holds (docs/fleet.md, "Resuming a fleet").

Each session of the plan is decided from its own evidence, in plan order:

* a row in ``results.jsonl`` (fsynced as each session ended): **kept** as it is;
* no session in its slot: it **never started**; it runs;
* a session whose journal ends with ``session_end``: it **finished** while the driver was
  down; its row is written now from the journal (its exit code is ``session_end``'s);
* a session cut short whose journal proves that no action was in flight (every
  ``action_attempt`` has its ``action_result``, ``inflight.judge``): it **runs again**, as the
  next attempt, with a note saying why;
* otherwise **needs_review**: its row names the journal line of each attempt without a
  result (the action may have reached the game). It is never run again on its own.

A resume is refused while the fleet's driver still lives on this host, or while a session of
the fleet is still running (its supervisor survived the driver): both would run a session
twice. Actors whose supervisor was killed exit on their own a few heartbeats later; until they
have, one of them may still append a row (an intent) to the journal being judged, so a resume
waits for them (``ORPHAN_WAIT_S``) and refuses, naming the process, if one outlives the wait.
"""
from __future__ import annotations

import dataclasses
import json
import os
import socket
import time

import psutil

from protocol.events import ActorStart, SessionEnd
from protocol.journal import iter_lines
from . import inflight, layout, matrix, spec as fleet_spec
from .control import driver_alive, live_supervisors
from .errors import FleetFileError
from .matrix import SessionPlan
from .results import outcome_of, read_fleet, read_rows, session_row
from .runner import session_ids


@dataclasses.dataclass
class Decision:
    plan: SessionPlan
    what: str  # kept | run | finished | rerun | needs_review
    detail: str = ""
    attempts: list[dict] = dataclasses.field(default_factory=list)  # the slot's attempt records
    next_attempt: int = 1


def plans_of(root: str, info: dict) -> list[SessionPlan]:
    """The fleet's plans as ``fleet.json`` recorded them (every field since plans are kept
    whole); for an older root, the fleet file expanded again and checked against them."""
    recorded = info.get("plans") or []
    fields = {f.name for f in dataclasses.fields(SessionPlan)}
    if recorded and all(fields <= set(p) for p in recorded):
        return [SessionPlan.from_dict({k: p[k] for k in fields}) for p in recorded]
    path = info.get("fleet_file") or ""
    if not os.path.isfile(path):
        raise FleetFileError(os.path.join(root, layout.FLEET_FILE), "plans",
                             f"the plans are not recorded whole and the fleet file {path!r} is gone")
    plans = matrix.expand(fleet_spec.load(path))
    keys = ("index", "slot", "cell_id", "repeat")
    if [{k: p.to_dict()[k] for k in keys} for p in plans] != [{k: p.get(k) for k in keys} for p in recorded]:
        raise FleetFileError(path, "matrix", "the fleet file changed since the fleet started: it no longer "
                             "gives the same sessions")
    return plans


ORPHAN_WAIT_S = 30.0  # an orphaned actor exits within five heartbeats and a second


def orphaned_actors(root: str) -> list[tuple[str, str, int]]:
    """(session id, actor, pid) of each live actor process of an unfinished session of the fleet:
    the pids of its journal's ``actor_start`` rows, each confirmed by the process's own
    ``GAMERIG_SESSION`` (a reused pid belongs to somebody else)."""
    out = []
    ended = {row.get("slot") for row in read_rows(root)}
    for slot in layout.slots(root):
        if os.path.basename(slot) in ended:
            continue
        for sid in session_ids(slot):
            journal = os.path.join(layout.capture_dir(slot), "sessions", sid, "events.jsonl")
            if not os.path.exists(journal):
                continue
            pids: dict[int, str] = {}
            for line in iter_lines(journal):
                if line.row is not None and line.row.get("event") == ActorStart.KIND and line.row.get("pid"):
                    pids[int(line.row["pid"])] = str(line.row.get("actor"))
            out += [(sid, actor, pid) for pid, actor in pids.items() if _alive_in((sid, actor, pid))]
    return out


def refuse_if_running(root: str, info: dict, say=None, wait_s: float = ORPHAN_WAIT_S) -> None:
    pid = info.get("driver_pid")
    if info.get("host") == socket.gethostname() and pid != os.getpid() and driver_alive(root):
        raise FleetFileError(root, "driver_pid", f"the fleet's driver (pid {pid}) is still running; stop it "
                             "first (supervisor fleet stop) or wait for it")
    live = live_supervisors(root)
    if live:
        raise FleetFileError(root, "sessions", f"session {live[0].get('session_id')} (supervisor pid "
                             f"{live[0].get('pid')}) of this fleet is still running; stop it (supervisor "
                             "stop) or let it end, then resume")
    deadline = time.monotonic() + wait_s
    orphans = orphaned_actors(root)
    if orphans and say:
        say(f"resume: waiting up to {wait_s:.0f}s for {len(orphans)} actor(s) of the killed sessions to exit")
    while orphans and time.monotonic() < deadline:
        time.sleep(0.1)
        orphans = [o for o in orphans if _alive_in(o)]
    if orphans:
        sid, actor, pid = orphans[0]
        raise FleetFileError(root, "sessions", f"the {actor} actor (pid {pid}) of session {sid} is still running "
                             f"{wait_s:.0f}s after its supervisor died; kill it, then resume")


def _alive_in(orphan: tuple[str, str, int]) -> bool:
    """The process ``orphan`` names is alive and is an actor of that session."""
    try:
        return psutil.Process(orphan[2]).environ().get("GAMERIG_SESSION") == orphan[0]
    except (psutil.Error, OSError):
        return False


def attempt_records(slot: str) -> list[dict]:
    out = []
    n = 1
    while os.path.exists(layout.attempt_path(slot, n)):
        try:
            with open(layout.attempt_path(slot, n), encoding="utf-8") as fh:
                out.append(json.load(fh))
        except (OSError, ValueError):
            out.append({"slot": os.path.basename(slot), "attempt": n, "error": "attempt record unreadable"})
        n += 1
    return out


def session_end(journal: str) -> dict | None:
    end = None
    for line in iter_lines(journal):
        if line.row is not None and line.row.get("event") == SessionEnd.KIND:
            end = line.row
    return end


def decide(root: str, plans: list[SessionPlan]) -> list[Decision]:
    done = {row.get("index") for row in read_rows(root)}
    out = []
    for plan in plans:
        slot = os.path.join(root, plan.slot)
        records = attempt_records(slot)
        d = Decision(plan, "run", attempts=records, next_attempt=len(records) + 1)
        ids = session_ids(slot)
        if plan.index in done:
            d.what = "kept"
        elif not ids:
            d.what, d.detail = "run", "never started"
        else:
            journal = os.path.join(layout.capture_dir(slot), "sessions", ids[-1], "events.jsonl")
            end = session_end(journal) if os.path.exists(journal) else None
            if end is not None:
                d.what, d.detail = "finished", "finished while the fleet's driver was down; row written on resume"
                last = dict(records[-1]) if records else {"slot": plan.slot, "attempt": 1}
                last.update(exit_code=end.get("exit_code"), session_ids=ids)
                last.setdefault("ended_at", None)
                d.attempts = [*records[:-1], last] if records else [last]
            else:
                verdict = inflight.judge(layout.capture_dir(slot), ids)
                if verdict.idle:
                    d.what = "rerun"
                    d.detail = (f"attempt {len(records) or 1} was cut short with the fleet's driver and its "
                                f"journal proves no action in flight ({verdict.detail}); run again")
                else:
                    d.what = "needs_review"
                    d.detail = (f"attempt {len(records) or 1} was cut short with the fleet's driver: "
                                f"{'; '.join(verdict.evidence) or verdict.detail}. Not run again")
        out.append(d)
    return out


def outcome_for(d: Decision) -> str:
    return outcome_of(d.attempts[-1]) if d.what == "finished" else "needs_review"


def rows_for(info: dict, root: str, decisions: list[Decision]) -> list[dict]:
    """The results rows a resume writes before anything runs (finished and needs_review)."""
    return [session_row(info["name"], root, d.plan, d.attempts, outcome_for(d), d.detail)
            for d in decisions if d.what in ("finished", "needs_review")]


def summary(decisions: list[Decision]) -> str:
    counts = {k: sum(d.what == k for d in decisions) for k in ("kept", "finished", "needs_review", "rerun", "run")}
    return (f"resume: {counts['kept']} kept, {counts['finished']} finished while the driver was down, "
            f"{counts['needs_review']} need review, {counts['rerun']} run again (no action in flight), "
            f"{counts['run']} never started")


__all__ = ["Decision", "plans_of", "refuse_if_running", "decide", "rows_for", "summary", "read_fleet"]
