"""Judging one fault-campaign session from its own evidence (``bench/chaos.py``).

``judge(run)`` fills ``run.violations``: the verifier's verdict against what the fault
allows, the session finalized or reported incomplete at the exact last row, the exit code and
reason recorded and agreeing, the game's own counters (POSTs without a durable intent,
duplicated guarded actions, POSTs against acknowledged attempts), no attempt whose intent's
fsync failed sent (the actuator's logs), every attempt the game received present in the final
journal, and no actor process left 10 s after the supervisor ended.
"""

from __future__ import annotations

import dataclasses
import datetime
import glob
import json
import os
import re

from actors.actuator.__main__ import ORPHAN_ERROR
from protocol.events import ActionAttempt, ActionResult, ActorExit, RecorderResumed, SessionEnd, SessionStopping
from supervisor.capture.verify import verify_path

NORMAL = {"max_steps", "run_ended", "run_changed"}  # exit 0 (docs/supervision.md)
# Faults after which an acknowledged attempt may never have been sent (its sender died
# holding it, or the game that counted it died): the game may count fewer POSTs than attempts.
JOURNAL_REASONS = {"journal_failed", "intent_not_recorded", "result_not_recorded"}
# journal:fsync: the supervisor finalizes with a restarted recorder that resumes the journal;
# it reads the same profile, so its FaultPlan is armed again with the same N. Its own fsyncs
# up to session_end are recorder_resumed's and session_end's: with N <= 2 the finalization
# fails too and the honest verdict is incomplete; with N > 2 it must be finalized and intact.
RESUMED_FSYNCS = 2
# the actuator's log line when an intent's acknowledgement was refused because the fsync of
# its group failed (actors/actuator/__main__.py _refused; the recorder's JournalWriter.end_group
# message): the attempt row was written, never acknowledged, and must not be sent
INTENT_FSYNC_FAILED = ("intent not recorded, request not sent", "fsync of the journal failed")
RESULT_NOT_RECORDED = re.compile(r"actuator ERROR result of (\S+) not recorded")  # its _record_result
STOP_RACE_S = 0.5  # a stop decided this close to a SIGTERM was decided before it counted
MAY_LEAVE_UNSENT = ("kill:actuator", "stop:actuator", "kill:game", "stop:game", "supervisor:kill", "disk_full")


@dataclasses.dataclass
class Run:
    index: int
    target: str  # "game" or "pyboy"
    fault: str  # e.g. "kill:recorder", "stop:policy", "supervisor:term", "game:hang", "disk_full"
    at_s: float = 0.0  # seconds after the first observation
    detail: str = ""  # what exactly was done (pid, request number, bytes filled)
    landed: bool = False  # the fault was applied while the session ran
    exit_code: int | None = None
    reason: str | None = None
    verdict: str = "?"
    last_sequence: int | None = None
    torn: int = 0
    finalized: bool = False
    attempts: int = 0
    unresolved: int = 0
    posts: int | None = None
    intent_violations: int | None = None
    duplicates: int | None = None
    nth: int | None = None  # journal:fail / journal:fsync: which append or fsync fails
    unacknowledged: int = 0  # intents refused because their fsync failed (the actuator's log)
    unrecorded_results: list[str] = dataclasses.field(default_factory=list)  # sent, result refused
    left_over: list[str] = dataclasses.field(default_factory=list)
    signalled_at: float | None = None  # wall-clock time a supervisor signal (or a kill) was sent
    recovery_s: float | None = None  # kill:<actor>: from the kill to the next new action attempt
    answered_s: float | None = None  # ... to the next attempt the game answered
    step_gap_s: float | None = None  # the session's median gap between consecutive attempt rows
    stopping_at: float | None = None  # wall-clock time of the journal's session_stopping row
    reported: tuple[str, int] | None = None  # the supervisor's "session ended: R (exit N)"
    seconds: float = 0.0
    session_dir: str = ""
    violations: list[str] = dataclasses.field(default_factory=list)


def read_journal(session_dir: str) -> tuple[list[dict], list[int]]:
    """Rows of ``events.jsonl`` read independently of the verifier, and the 1-based line
    numbers of lines that are not a whole JSON row (torn). Deliberately not
    ``protocol.journal``'s reader: the judge is a second opinion on what the verifier,
    which stands on that reader, concludes."""
    rows, torn = [], []
    with open(os.path.join(session_dir, "events.jsonl"), "rb") as fh:
        for n, line in enumerate(fh, 1):
            try:
                if not line.endswith(b"\n"):
                    raise ValueError("no newline")
                rows.append(json.loads(line))
            except ValueError:
                torn.append(n)
    return rows, torn


def game_stats_from_logs(runtime: str) -> dict | None:
    """The built-in game's ``GAME_STATS`` log lines (one per game process that ended in
    order), summed: a restarted game counts afresh, a SIGKILLed one leaves no line."""
    lines = [
        ln
        for p in glob.glob(os.path.join(runtime, "*.logs", "game.log"))
        for ln in open(p, encoding="utf-8", errors="replace")
        if "GAME_STATS " in ln
    ]
    if not lines:
        return None
    out = {"posts": 0, "duplicate_guarded_actions": 0, "intent_violations": []}
    for ln in lines:
        s = json.loads(ln.split("GAME_STATS ", 1)[1])
        out["posts"] += s.get("posts", 0)
        out["duplicate_guarded_actions"] += s.get("duplicate_guarded_actions", 0)
        out["intent_violations"] += s.get("intent_violations") or []
    return out


def actuator_evidence(runtime: str) -> tuple[int, list[str]]:
    """From the actuator's logs (every actuator process): how many intents it was refused
    because the fsync of their group failed (``INTENT_FSYNC_FAILED``; each such attempt row is
    in the journal but was never acknowledged, so it must never be sent), and the attempts
    whose result it obtained but could not record (``RESULT_NOT_RECORDED``: it sent them)."""
    refused, unrecorded = 0, []
    for path in glob.glob(os.path.join(runtime, "*.logs", "actuator.log")):
        with open(path, encoding="utf-8", errors="replace") as fh:
            for ln in fh:
                refused += all(part in ln for part in INTENT_FSYNC_FAILED)
                m = RESULT_NOT_RECORDED.search(ln)
                if m:
                    unrecorded.append(m.group(1))
    return refused, unrecorded


def judge(run: Run, game_stats: dict | None, posted: set[str] | None) -> None:
    """Fill ``run``'s evidence fields and ``run.violations``."""
    if not run.session_dir:
        run.violations.append("no session directory")
        return
    rows, torn = read_journal(run.session_dir)
    _confirm_kill(run, rows)
    measure_recovery(run, rows)
    _judge_journal(run, rows, torn)
    _judge_end(run, rows)
    _judge_unacknowledged(run, rows)
    if run.target != "pyboy":
        _judge_game(run, rows, game_stats, posted)
    if run.left_over:
        run.violations.append(f"actor processes left 10 s after the end: {', '.join(run.left_over)}")


def _confirm_kill(run: Run, rows: list[dict]) -> None:
    """A ``kill:<actor>`` landed only if the journal shows it: an ``actor_exit`` of that pid
    by SIGKILL. A signal sent to an actor that had just ended by itself (a zombie accepts
    it) killed nothing."""
    if not (run.fault.startswith("kill:") and run.landed):
        return
    pid = run.detail.removeprefix("pid ")
    if not any(
        r.get("event") == ActorExit.KIND and str(r.get("pid")) == pid and r.get("signal") == "SIGKILL" for r in rows
    ):
        run.landed = False
        run.detail += ": no SIGKILL exit of it in the journal (it had ended by itself)"


def row_time(row: dict) -> float | None:
    """A row's ``recorded_at`` (ISO 8601, UTC, microseconds) as a Unix time."""
    try:
        return datetime.datetime.fromisoformat(str(row["recorded_at"]).replace("Z", "+00:00")).timestamp()
    except (KeyError, ValueError):
        return None


def measure_recovery(run: Run, rows: list[dict]) -> None:
    """For a kill, from the signal (seconds):

    * ``recovery_s`` to the first ``action_attempt`` row stamped after it that the killed actor
      did not hold (an attempt acknowledged to an actuator that died before recording its
      result is resolved ``unknown`` by its successor, ``ORPHAN_ERROR``: not a new action);
    * ``answered_s`` to the first one the game answered (result accepted or rejected).

    The recorder stamps an intent before the actuator may send it. And, to read them against,
    the session's median gap between consecutive attempt rows."""
    results = {r.get("attempt_id"): r for r in rows if r.get("event") == ActionResult.KIND}
    attempts = [(row_time(r), r.get("attempt_id")) for r in rows if r.get("event") == ActionAttempt.KIND]
    stamps = [t for t, _ in attempts if t is not None]
    gaps = sorted(b - a for a, b in zip(stamps, stamps[1:]))
    run.step_gap_s = round(gaps[len(gaps) // 2], 4) if gaps else None
    if not (run.fault.startswith("kill:") and run.landed and run.signalled_at is not None):
        return
    after = [(t, results.get(aid) or {}) for t, aid in attempts if t is not None and t > run.signalled_at]
    new = [t for t, res in after if ORPHAN_ERROR not in str(res.get("error"))]
    answered = [t for t, res in after if res.get("outcome") in ("accepted", "rejected")]
    run.recovery_s = round(new[0] - run.signalled_at, 4) if new else None
    run.answered_s = round(answered[0] - run.signalled_at, 4) if answered else None


def _judge_journal(run: Run, rows: list[dict], torn: list[int]) -> None:
    report = verify_path(run.session_dir)
    stats = report.sessions[0].stats if report.sessions else {}
    run.verdict, run.torn = report.verdict, len(torn)
    run.last_sequence = stats.get("last_sequence")
    run.finalized = any(r.get("event") == SessionEnd.KIND for r in rows)
    mine = rows[-1].get("sequence") if rows else None
    checks = [
        (run.verdict != "damaged", f"capture verify: damaged {_first_finding(report)}"),
        (run.verdict != "intact" or run.finalized, "verified intact without a session_end"),
        (run.finalized or run.verdict == "incomplete", "unfinished but not reported incomplete"),
        (
            run.last_sequence == mine,
            f"verifier's last row {run.last_sequence} is not the journal's last whole row {mine}",
        ),
        (
            not torn or torn == [len(rows) + len(torn)] or _resumed_over(rows, torn),
            f"torn line(s) {torn} not at the end and not named by a recorder_resumed row",
        ),
    ]
    if (run.fault not in ("supervisor:kill", "disk_full") or not run.landed) and not _finalization_may_fail(run):
        checks.append((run.verdict == "intact", f"capture verify: {run.verdict} {_first_finding(report)}"))
    run.violations += [msg for ok, msg in checks if not ok]


def _finalization_may_fail(run: Run) -> bool:
    """journal:fsync with N <= RESUMED_FSYNCS: the recorder restarted to finalize fails its
    own Nth fsync (session_end's at most), so incomplete is honest; intact is still allowed
    (only with a session_end, checked above), damaged never."""
    return run.fault == "journal:fsync" and run.nth is not None and run.nth <= RESUMED_FSYNCS


def _resumed_over(rows: list[dict], torn: list[int]) -> bool:
    return len([r for r in rows if r.get("event") == RecorderResumed.KIND]) >= len(torn)


def _first_finding(report) -> str:
    for s in report.sessions:
        for f in s.findings:
            return f"({f.to_dict().get('code', '')}: {f.to_dict().get('message', '')})"
    return ""


def _judge_end(run: Run, rows: list[dict]) -> None:
    ends = [r for r in rows if r.get("event") == SessionEnd.KIND]
    stopping = [r for r in rows if r.get("event") == SessionStopping.KIND]
    if stopping:
        run.stopping_at = datetime.datetime.fromisoformat(stopping[0]["recorded_at"].replace("Z", "+00:00")).timestamp()
    attempts = {r["attempt_id"] for r in rows if r.get("event") == ActionAttempt.KIND}
    results = {r.get("attempt_id") for r in rows if r.get("event") == ActionResult.KIND}
    run.attempts, run.unresolved = len(attempts), len(attempts - results)
    if ends:
        end = ends[-1]
        run.reason = end.get("reason")
        if end.get("exit_code") != run.exit_code:
            run.violations.append(f"session_end says exit {end.get('exit_code')}, the process exited {run.exit_code}")
        listed = set(end.get("unresolved_attempts") or [])
        if attempts - results - listed:
            run.violations.append(
                f"{len(attempts - results - listed)} attempt(s) without a result and not listed unresolved"
            )
    if run.reported:
        run.reason = run.reason or run.reported[0]
        if run.reported != (run.reason, run.exit_code):
            run.violations.append(
                f"the supervisor said {run.reported}, the journal {run.reason!r} and the process exited {run.exit_code}"
            )
    elif run.exit_code != -9:
        run.violations.append("the supervisor did not report how the session ended")
    ok = _expected_end(run)
    if ok:
        run.violations.append(ok)


def _expected_end(run: Run) -> str | None:
    """The exit code and reason a session may end with after its fault; None when fine."""
    if run.fault.startswith("journal:"):  # armed at the start: landed if the session died of it
        run.landed = run.reason in JOURNAL_REASONS
    code, reason, fault = run.exit_code, run.reason, run.fault if run.landed else "none"
    if fault == "supervisor:kill":
        return None if code == -9 else f"exit {code} after a SIGKILL of the supervisor"
    if fault == "supervisor:term":
        if (code, reason) == (143, "sigterm") or _already_stopping(run):
            return None
        return f"exit {code} ({reason}) after SIGTERM"
    if fault == "journal:fail":
        return (
            None
            if code == 1 and run.verdict == "intact"
            else f"exit {code} ({reason}), {run.verdict}, after a failed journal append"
        )
    if fault == "journal:fsync":  # the rows of the failed fsync stay in the file, unacknowledged
        fine = (
            code == 1
            and reason in JOURNAL_REASONS
            and (run.verdict == "intact" or (run.verdict == "incomplete" and _finalization_may_fail(run)))
        )
        return None if fine else f"exit {code} ({reason}), {run.verdict}, after a failed journal fsync"
    if fault == "disk_full":
        fine = (code == 1 and (reason in JOURNAL_REASONS | {"storage_failed"} or not run.finalized)) or (
            code == 0 and reason in NORMAL
        )
        return None if fine else f"exit {code} ({reason}) after the disk filled"
    if code == 0 and reason in NORMAL:
        return None
    return f"exit {code} ({reason}) after one {fault}: a single fault must not fail the session"


def _already_stopping(run: Run) -> bool:
    """The session had already decided to end normally when the SIGTERM came (the first stop
    reason wins, supervisor/session.py request_stop): its session_stopping row names a normal
    reason and was written no later than STOP_RACE_S after the signal was sent."""
    return (
        run.exit_code == 0
        and run.reason in NORMAL
        and run.stopping_at is not None
        and run.signalled_at is not None
        and run.stopping_at <= run.signalled_at + STOP_RACE_S
    )


def _judge_unacknowledged(run: Run, rows: list[dict]) -> None:
    """An attempt whose intent's fsync failed was never acknowledged, so it is never sent.
    Which rows those are: the writer is unusable after a failed fsync, attempt rows are
    durable (each in the group whose fsync acknowledges it), and the recorder restarted to
    finalize takes no new intent (the session is stopping): the refused intents are the
    journal's last attempt rows.
    Sent shows as a result for one (a row, or the actuator's "result of X not recorded"). On
    the game, the POST count (``_judge_game``) is the independent evidence; this check is all
    the cartridge runs have (the emulator's stats row cannot be written once the journal broke)."""
    if not run.unacknowledged:
        return
    attempts = [r["attempt_id"] for r in rows if r.get("event") == ActionAttempt.KIND]
    unacked = set(attempts[-run.unacknowledged :])
    results = {r.get("attempt_id") for r in rows if r.get("event") == ActionResult.KIND}
    sent = sorted(unacked & (results | set(run.unrecorded_results)))
    if sent:
        run.violations.append(f"attempt(s) {sent} sent although their intent's fsync failed (never acknowledged)")


def _judge_game(run: Run, rows: list[dict], stats: dict | None, posted: set[str] | None) -> None:
    if stats is None:
        run.violations.append("the game reported no counters (no GAME_STATS)")
        return
    run.posts = stats["posts"]
    run.intent_violations = len(stats["intent_violations"])
    run.duplicates = stats["duplicate_guarded_actions"]
    # an attempt whose intent's fsync failed is in the journal (the game's intent check finds
    # its row) but was never acknowledged: it is not among the attempts that may be POSTed
    acknowledged = run.attempts - run.unacknowledged
    checks = [
        (
            run.intent_violations == 0,
            f"{run.intent_violations} POST(s) without a durable intent: {stats['intent_violations'][:2]}",
        ),
        (run.duplicates == 0, f"{run.duplicates} duplicated guarded action(s)"),
        (
            run.posts <= acknowledged,
            f"{run.posts} POSTs for {acknowledged} acknowledged attempts"
            f" of {run.attempts} (resent, or one sent unacknowledged)",
        ),
    ]
    if run.fault not in MAY_LEAVE_UNSENT or not run.landed:
        checks.append(
            (run.posts == acknowledged, f"{run.posts} POSTs for {acknowledged} acknowledged attempts of {run.attempts}")
        )
    if posted is not None:
        journal = {r["attempt_id"] for r in rows if r.get("event") == ActionAttempt.KIND}
        missing = posted - journal
        checks.append(
            (not missing, f"acknowledged attempt(s) the game received missing from the journal: {sorted(missing)[:3]}")
        )
    run.violations += [msg for ok, msg in checks if not ok]
