"""``supervisor fleet start --resume FLEET_ROOT``: finish a fleet whose driver died (killed, or
the machine rebooted), from what its root holds (docs/fleet.md, "When the driver dies").

First the resume takes over what the dead driver left running on this machine
(``take_over``): every session of the fleet still running here was told to stop by its
parent-death signal and is finalizing; the resume waits for each (showing which, and for how
long), SIGTERMs any that missed the signal, and kills any still running after
``STOP_WAIT_S``; then it waits for the actors of killed sessions (``ORPHAN_WAIT_S``; one may
still append an intent to the journal about to be judged) and kills any left. Sessions on
other machines (Ray) are waited for through their runtime records. A resume refuses only
while the fleet's driver itself runs (``control.take_driver_lock``).

Then each session of the plan is decided from its own evidence, in plan order:

* a row in ``results.jsonl`` (fsynced as each session ended): **kept** as it is;
* no session in its slot: it **never started**; it runs;
* a session that **ended by itself** (its journal ends with ``session_end`` for a reason of
  its own: run ended, max steps, its own failure, a timeout the runner recorded): its row is
  written now from the journal (its exit code is ``session_end``'s);
* a session that was **stopped** (``session_end`` reason ``sigterm`` or ``sigint``: the
  parent-death signal of a dying driver, a signal to the driver, or a stop the dead driver
  was asked for, which a resume overrides) or **cut short** (no ``session_end``: its
  supervisor was killed), whose journal proves that no action was in flight (every
  ``action_attempt`` has its ``action_result``, ``inflight.judge``): it **runs again**, as
  the next attempt, with a note saying why;
* otherwise **needs_review**: its row names the journal line of each attempt without a
  result (the action may have reached the game). It is never run again on its own.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import json
import os
import signal
import socket
import time

from protocol.events import SessionEnd
from protocol.journal import iter_lines

from . import inflight, layout, matrix
from . import spec as fleet_spec
from .control import actor_alive, has_runtime_record, live_actors, live_supervisors
from .errors import FleetFileError
from .matrix import SessionPlan
from .results import outcome_of, read_fleet, read_rows, session_row
from .runner import KILL_AFTER_S, session_ids

#: ``session_end`` reasons of a session that was told to stop rather than ending by itself.
STOPPED = ("sigterm", "sigint")
STOP_WAIT_S = KILL_AFTER_S  # as long as a runner gives a supervisor it asked to stop
ORPHAN_WAIT_S = 30.0  # an orphaned actor exits within five heartbeats and a second
SAY_EVERY_S = 5.0


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
        raise FleetFileError(
            os.path.join(root, layout.FLEET_FILE),
            "plans",
            f"the plans are not recorded whole and the fleet file {path!r} is gone",
        )
    plans = matrix.expand(fleet_spec.load(path))
    keys = ("index", "slot", "cell_id", "repeat")
    if [{k: p.to_dict()[k] for k in keys} for p in plans] != [{k: p.get(k) for k in keys} for p in recorded]:
        raise FleetFileError(
            path, "matrix", "the fleet file changed since the fleet started: it no longer gives the same sessions"
        )
    return plans


def take_over(root: str, say=None, stop_wait_s: float = STOP_WAIT_S, orphan_wait_s: float = ORPHAN_WAIT_S) -> None:
    """Wait out (and end, when they outlast the waits) the processes a dead driver left: its
    sessions' supervisors here, those on other hosts (by their runtime records), then the
    actors of sessions whose supervisor was killed. Call it holding the driver lock."""
    say = say or (lambda _m: None)
    open_slots = {os.path.basename(s) for s in layout.slots(root)} - {r.get("slot") for r in read_rows(root)}
    _stop_supervisors(root, open_slots, say, stop_wait_s)
    _wait_remote(root, open_slots, say, stop_wait_s)
    _end_orphans(root, open_slots, say, orphan_wait_s)


def _stop_supervisors(root: str, slots: set[str], say, wait_s: float) -> None:
    live = live_supervisors(root, slots)
    if not live:
        return
    say(
        f"resume: {len(live)} session(s) of the dead driver still stopping here: "
        + ", ".join(f"{r['slot']} (supervisor pid {r['pid']})" for r in live)
        + f"; waiting up to {wait_s:.0f}s for them to finalize"
    )
    for rec in live:  # each got its parent-death SIGTERM; again, for one that somehow did not
        _signal(int(rec["pid"]), signal.SIGTERM)
    started = time.monotonic()
    next_say = started + SAY_EVERY_S
    while live and time.monotonic() - started < wait_s:
        time.sleep(0.1)
        live = live_supervisors(root, {r["slot"] for r in live})
        if live and time.monotonic() >= next_say:
            next_say += SAY_EVERY_S
            say(
                f"resume: still waiting for {', '.join(r['slot'] for r in live)} to finalize "
                f"({time.monotonic() - started:.0f}s)"
            )
    for rec in live:
        say(f"resume: {rec['slot']} (supervisor pid {rec['pid']}) did not finalize in {wait_s:.0f}s; killed")
        _signal(int(rec["pid"]), signal.SIGKILL)
    if not live:
        say(f"resume: every session of the dead driver here has finalized ({time.monotonic() - started:.1f}s)")


def _wait_remote(root: str, slots: set[str], say, wait_s: float) -> None:
    """Sessions that ran on another host (a Ray node): their worker died with the driver and
    their supervisor is finalizing there; its runtime record goes when it has."""
    here = socket.gethostname()

    def remote() -> list[str]:
        out = []
        for slot in sorted(slots):
            records = attempt_records(os.path.join(root, slot))
            if records and records[-1].get("host") not in (None, here) and has_runtime_record(os.path.join(root, slot)):
                out.append(slot)
        return out

    waiting = remote()
    if not waiting:
        return
    say(
        f"resume: waiting up to {wait_s:.0f}s for {len(waiting)} session(s) on other hosts to finalize: "
        + ", ".join(waiting)
    )
    end = time.monotonic() + wait_s
    while waiting and time.monotonic() < end:
        time.sleep(0.5)
        waiting = remote()
    if waiting:
        say(
            f"resume: {', '.join(waiting)} still have a runtime record after {wait_s:.0f}s (their host "
            "may be gone); judged from their journals as they are"
        )


def _end_orphans(root: str, slots: set[str], say, wait_s: float) -> None:
    orphans = [
        a
        for slot in sorted(slots)
        for a in live_actors(os.path.join(root, slot), session_ids(os.path.join(root, slot)))
    ]
    if not orphans:
        return
    say(f"resume: waiting up to {wait_s:.0f}s for {len(orphans)} actor(s) of the killed sessions to exit")
    deadline = time.monotonic() + wait_s
    while orphans and time.monotonic() < deadline:
        time.sleep(0.1)
        orphans = [o for o in orphans if actor_alive(o)]
    for sid, actor, pid in orphans:
        say(
            f"resume: the {actor} actor (pid {pid}) of session {sid} still ran {wait_s:.0f}s after its "
            "supervisor died; killed"
        )
        _signal(pid, signal.SIGKILL)
    end = time.monotonic() + 10
    while any(actor_alive(o) for o in orphans) and time.monotonic() < end:
        time.sleep(0.05)


def _signal(pid: int, sig: int) -> None:
    try:
        os.kill(pid, sig)
    except OSError:
        pass


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
    return [Decision(p, "kept") if p.index in done else _decide(root, p) for p in plans]


def _decide(root: str, plan: SessionPlan) -> Decision:
    slot = os.path.join(root, plan.slot)
    records = attempt_records(slot)
    ids = session_ids(slot)
    if not ids:
        return Decision(plan, "run", "never started", records, len(records) + 1)
    n = len(records) or 1
    claimed = {s for r in records[:-1] for s in r.get("session_ids") or []}
    last = (
        dict(records[-1])
        if records
        else {"slot": plan.slot, "attempt": 1, "host": None, "started_at": None, "ended_at": None}
    )
    last["session_ids"] = [s for s in ids if s not in claimed] or ids[-1:]
    d = Decision(plan, "run", attempts=[*records[:-1], last], next_attempt=n + 1)
    journal = os.path.join(layout.capture_dir(slot), "sessions", last["session_ids"][-1], "events.jsonl")
    end = session_end(journal) if os.path.exists(journal) else None
    if end is not None:
        last.update(exit_code=end.get("exit_code"), ended_at=last.get("ended_at") or _stamp(end))
        reason = end.get("reason")
        if reason not in STOPPED or last.get("timed_out"):
            d.what = "finished"
            d.detail = (
                f"attempt {n} ended by itself ({reason}) while the fleet's driver was down; row written on resume"
            )
            return d
        how = (
            f"was told to stop before its end, as the fleet's driver died or was interrupted (its journal "
            f"ends with session_end, reason {reason})"
        )
    else:
        how = "was cut short with the fleet's driver (its journal has no session_end: its supervisor was killed)"
    verdict = inflight.judge(layout.capture_dir(slot), last["session_ids"])
    if verdict.idle:
        d.what = "rerun"
        d.detail = f"attempt {n} {how} and proves no action in flight ({verdict.detail}); run again"
    else:
        d.what = "needs_review"
        d.detail = f"attempt {n} {how}: {'; '.join(verdict.evidence) or verdict.detail}. Not run again"
    if records:  # what the attempt left, for the next resume and the reader of attempt-N.json
        last["judged"] = d.detail
        _write_json(layout.attempt_path(slot, n), last)
    return d


def _write_json(path: str, data: dict) -> None:
    with open(path + ".tmp", "w", encoding="utf-8") as fh:
        json.dump(data, fh, indent=1, sort_keys=True)
    os.replace(path + ".tmp", path)


def _stamp(row: dict) -> float | None:
    try:
        return dt.datetime.fromisoformat(str(row["recorded_at"]).replace("Z", "+00:00")).timestamp()
    except (KeyError, ValueError):
        return None


def outcome_for(d: Decision) -> str:
    return outcome_of(d.attempts[-1]) if d.what == "finished" else "needs_review"


def rows_for(info: dict, root: str, decisions: list[Decision]) -> list[dict]:
    """The results rows a resume writes before anything runs (finished and needs_review)."""
    return [
        session_row(info["name"], root, d.plan, d.attempts, outcome_for(d), d.detail)
        for d in decisions
        if d.what in ("finished", "needs_review")
    ]


def summary(decisions: list[Decision]) -> str:
    counts = {k: sum(d.what == k for d in decisions) for k in ("kept", "finished", "needs_review", "rerun", "run")}
    return (
        f"resume: {counts['kept']} kept, {counts['finished']} ended by themselves (rows written now), "
        f"{counts['needs_review']} need review, {counts['rerun']} run again (stopped or cut short, no "
        f"action in flight), {counts['run']} never started"
    )


__all__ = ["Decision", "plans_of", "take_over", "decide", "rows_for", "summary", "read_fleet"]
