"""One session followed as its journal grows: ``Track``.

``Track.follow(max_lines)`` reads the journal's new lines from the byte offset it reached,
through the one journal reader (``protocol.journal.iter_lines``), and never re-reads what it
has read: a running session costs one ``stat`` and the new bytes per update. An unterminated
last line is left for the next call (a writer may be in the middle of it); the verifier
names it if it stays torn.

What a track keeps per step is a few numbers in ``array`` columns (about 100 bytes a step:
the observation row's byte offset, times, latencies, codes of the state, action and
outcome, and the chart figures once read), never rows: a page of steps is read back from
the journal by offset (``page``), so memory grows by those bytes per step and nothing else.
Figures from the observation files (``metrics.figures``) are filled by ``read_figures`` in
the background, since they cost a file read per step.

Everything the page shows about runs, wins and action results comes from
``supervisor.capture.facts.CapturedSession``, which ``supervisor fleet report`` uses too.
"""

from __future__ import annotations

import bisect
import datetime as dt
import hashlib
import json
import os
import threading
from array import array
from typing import Any

from protocol import obspack
from protocol.events import (
    ActionAttempt,
    ActionResult,
    ActorExit,
    ActorGiveUp,
    ActorRefused,
    ActorRestart,
    ActorStart,
    ActorUnresponsive,
    EmulatorResumed,
    ModelError,
    Observation,
    ObservationError,
    Proposal,
    ProposalStatus,
    RecorderResumed,
    RunIdentityChanged,
    SessionEnd,
    SessionStart,
    SessionStopping,
    StopRequested,
)
from protocol.journal import iter_lines, parse_line
from supervisor.capture.facts import CapturedSession

from . import metrics

JOURNAL = "events.jsonl"
SUMMARY = "session.json"
OUTCOME_CODES = {"accepted": 1, "rejected": 2, "unknown": 3}
STATUS_CODES = {s: i + 1 for i, s in enumerate(ProposalStatus.STATUSES)}
MAX_MARKERS = 5000  # supervision markers kept per session (the count goes on)
PAGE_SLACK = 16  # steps read past a page's end: a pipelined policy decides late
MAX_OBSERVATION_BYTES = 16 << 20
NAN = float("nan")
_EXTRA_MARKS = ("stall", "escape", "session_join")

# kind -> marker kind shown on the timeline
_MARKS = {
    ActorRestart.KIND: "restart",
    ActorGiveUp.KIND: "give_up",
    ActorUnresponsive.KIND: "unresponsive",
    ActorRefused.KIND: "refused",
    StopRequested.KIND: "stop_requested",
    SessionStopping.KIND: "stopping",
    RecorderResumed.KIND: "recorder_resumed",
    ModelError.KIND: "model_error",
    ObservationError.KIND: "read_error",
    RunIdentityChanged.KIND: "run_start",
    EmulatorResumed.KIND: "emulator_resumed",
    SessionEnd.KIND: "session_end",
}


def epoch(stamp: Any) -> float:
    """``recorded_at`` (``2026-01-01T00:00:00.000000Z``) as seconds, NaN when unreadable."""
    if not isinstance(stamp, str):
        return NAN
    try:
        return dt.datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return NAN


def _num(value: Any) -> float:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else NAN


def observation_number(oid: Any) -> int:
    """``o-000123`` -> 123 (-1 when it is not one)."""
    if isinstance(oid, str) and oid.startswith("o-"):
        try:
            return int(oid[2:])
        except ValueError:
            return -1
    return -1


class Strings:
    """Interned names (states, actions) stored as small codes."""

    def __init__(self):
        self.names: list[str] = [""]
        self.codes: dict[str, int] = {"": 0}

    def code(self, name: Any) -> int:
        name = name if isinstance(name, str) else ""
        found = self.codes.get(name)
        if found is None:
            found = self.codes[name] = len(self.names)
            self.names.append(name)
        return found


class Track:
    """One session directory, followed. Thread-safe: ``lock`` guards the columns."""

    def __init__(self, key: str, session_dir: str, capture_root: str, fleet: str | None = None):
        self.key = key
        self.dir = session_dir
        self.root = capture_root
        self.fleet = fleet
        self.id = os.path.basename(session_dir)
        self.journal = os.path.join(session_dir, JOURNAL)
        self.lock = threading.RLock()
        self.offset = 0
        self.lines = 0
        self.size = 0
        self.mtime = 0.0
        self.tail_torn = False
        self.unreadable: str | None = None
        self.start: dict | None = None
        self.end: dict | None = None
        self.first_at = NAN
        self.last_at = NAN
        self.facts = CapturedSession(read_state=lambda row: self.observation_state(row)[0])
        self.strings = Strings()
        self.model = {"tokens": 0, "latency_ms": 0.0}  # answers and errors: self.facts.model
        self.markers: list[dict] = []
        self.marker_count = 0
        self.run_starts: list[tuple[int, str]] = []
        self.emulator: dict | None = None
        # per-step columns (index i = the i-th observation row)
        self.obs_num = array("l")
        self.obs_off = array("q")
        self.obs_line = array("l")
        self.step_no = array("l")
        self.at = array("d")
        self.read_ms = array("f")
        self.decide_ms = array("f")
        self.request_ms = array("f")
        self.outcome = array("b")
        self.status = array("b")
        self.state = array("H")
        self.action = array("H")
        self.figs = [array("l") for _ in metrics.NAMES]
        self.figures_read = 0
        self.figures_failed = 0
        self._proposal_step: dict[str, int] = {}
        self._attempt_step: dict[str, int] = {}
        self._inside: str | None = None

    # -- following ------------------------------------------------------------------------
    @property
    def steps(self) -> int:
        return len(self.obs_off)

    def changed(self) -> bool:
        """Has the journal grown (or appeared) since the last ``follow``?"""
        try:
            st = os.stat(self.journal)
        except OSError:
            return False
        return st.st_size != self.size or st.st_mtime != self.mtime

    def follow(self, max_lines: int = 5000) -> int:
        """Read up to ``max_lines`` new lines; return how many were read."""
        try:
            st = os.stat(self.journal)
        except OSError as exc:
            self.unreadable = None if not os.path.exists(self.dir) else f"{JOURNAL}: {exc.strerror}"
            return 0
        self.size, self.mtime = st.st_size, st.st_mtime
        if st.st_size < self.offset:
            self.unreadable = (
                f"{JOURNAL} shrank from {self.offset} to {st.st_size} bytes while being read: rows were removed"
            )
            return 0
        done = 0
        with self.lock:
            self.tail_torn = False
            try:
                for line in iter_lines(self.journal, offset=self.offset, number=self.lines):
                    if not line.terminated:
                        self.tail_torn = True
                        break
                    self.offset = line.offset + len(line.data) + 1
                    self.lines = line.number
                    if line.row is not None:
                        self._apply(line.row, line.offset, line.number)
                    done += 1
                    if done >= max_lines:
                        break
            except OSError as exc:
                self.unreadable = f"{JOURNAL}: {exc}"
        return done

    def _apply(self, row: dict, offset: int, number: int) -> None:
        self.facts.add(row)
        event = row.get("event")
        at = epoch(row.get("recorded_at"))
        if at == at:  # (NaN: no stamp)
            if self.first_at != self.first_at:
                self.first_at = at
            self.last_at = at
        if event == Observation.KIND:
            self._observation(row, offset, number, at)
        elif event == Proposal.KIND:
            self._proposal(row)
        elif event == ProposalStatus.KIND:
            i = self._proposal_step.get(row.get("proposal_id"))
            if i is not None:
                self.status[i] = STATUS_CODES.get(row.get("status"), 0)
        elif event == ActionAttempt.KIND:
            i = self._step_of(row.get("observation_id"))
            if i is not None:
                self._attempt_step[str(row.get("attempt_id"))] = i
                self.action[i] = self.strings.code(row.get("action"))
        elif event == ActionResult.KIND:
            i = self._attempt_step.pop(str(row.get("attempt_id")), None)
            if i is not None:
                self.outcome[i] = OUTCOME_CODES.get(row.get("outcome"), 0)
                self.request_ms[i] = _num(row.get("request_ms"))
        elif event == SessionStart.KIND:
            self.start = row
        elif event == SessionEnd.KIND:
            self.end = row
        elif event == "emulator_started":
            self.emulator = {
                "rom": row.get("rom"),
                "recording": row.get("recording"),
                "rom_source": row.get("rom_source"),
            }
        if (
            event in _MARKS
            or (event == ActorExit.KIND and not row.get("expected"))
            or (event == ActorStart.KIND and isinstance(row.get("start_count"), int) and row["start_count"] > 1)
        ):
            at_step = self._step_of(row.get("observation_id")) if event == RunIdentityChanged.KIND else None
            self._mark(row, event, number, step=at_step)
            if event == RunIdentityChanged.KIND:
                self.run_starts.append((self.steps - 1 if at_step is None else at_step, str(row.get("run_id"))))

    def _observation(self, row: dict, offset: int, number: int, at: float) -> None:
        self.obs_num.append(observation_number(row.get("observation_id")))
        self.obs_off.append(offset)
        self.obs_line.append(number)
        self.step_no.append(row["step"] if isinstance(row.get("step"), int) else self.steps)
        self.at.append(at)
        self.read_ms.append(_num(row.get("read_ms")))
        self.decide_ms.append(NAN)
        self.request_ms.append(NAN)
        self.outcome.append(0)
        self.status.append(0)
        self.state.append(self.strings.code(row.get("state_type")))
        self.action.append(0)

    def _proposal(self, row: dict) -> None:
        i = self._step_of(row.get("observation_id"))
        if i is None:
            return
        self._proposal_step[str(row.get("proposal_id"))] = i
        if len(self._proposal_step) > 4096:  # a status follows its proposal within a step or two
            for k in list(self._proposal_step)[:2048]:
                del self._proposal_step[k]
        self.decide_ms[i] = _num(row.get("decide_ms"))
        if row.get("action"):
            self.action[i] = self.strings.code(row.get("action"))
        for e in row.get("model_evidence") or ():
            if isinstance(e, dict):
                usage = e.get("usage") if isinstance(e.get("usage"), dict) else {}
                tokens, latency = _num(usage.get("total_tokens")), _num(usage.get("latency_ms"))
                self.model["tokens"] += int(tokens) if tokens == tokens else 0
                self.model["latency_ms"] += latency if latency == latency else 0.0
        for k in _EXTRA_MARKS:
            if row.get(k):
                self._mark(row, k, None, step=i)

    def _step_of(self, oid: Any) -> int | None:
        n = observation_number(oid)
        if n < 0:
            return None
        i = bisect.bisect_left(self.obs_num, n)
        return i if i < len(self.obs_num) and self.obs_num[i] == n else None

    def _mark(self, row: dict, kind: str, line: int | None, step: int | None = None) -> None:
        self.marker_count += 1
        if len(self.markers) >= MAX_MARKERS:
            return
        kind = _MARKS.get(kind, kind)
        if kind == "actor_exit" and row.get("signal"):
            kind = "killed"
        detail = {
            k: row.get(k)
            for k in (
                "actor",
                "reason",
                "signal",
                "code",
                "run_id",
                "kind",
                "message",
                "error",
                "detail",
                "torn_rows",
                "lost_interval",
            )
            if row.get(k) not in (None, "", [])
        }
        self.markers.append(
            {
                "kind": kind,
                "step": self.steps - 1 if step is None else step,
                "sequence": row.get("sequence"),
                "line": line,
                "event": row.get("event"),
                "detail": detail,
            }
        )

    # -- figures from the observation files ----------------------------------------------
    def read_figures(self, limit: int = 500) -> int:
        """Read the next ``limit`` observation files' figures; return how many were read."""
        done = 0
        while done < limit:
            with self.lock:
                i = self.figures_read
                if i >= self.steps:
                    return done
                offset = self.obs_off[i]
            state = None
            row = self.row_at(offset)
            if row is not None:
                state, _problem = self.observation_state(row)
            values = metrics.figures(state)
            if state is None:
                self.figures_failed += 1
            with self.lock:
                for col, v in zip(self.figs, values):
                    col.append(v)
                self.figures_read = i + 1
            done += 1
        return done

    # -- reading back ---------------------------------------------------------------------
    def row_at(self, offset: int) -> dict | None:
        try:
            with open(self.journal, "rb") as fh:
                fh.seek(offset)
                return parse_line(fh.readline().rstrip(b"\n"))
        except OSError:
            return None

    def rows_from(self, start: int, stop: int | None):
        """``(line number, offset, row)`` of the whole lines in ``[start, stop)`` bytes."""
        number = 0
        with self.lock:
            if self.steps:
                i = bisect.bisect_left(self.obs_off, start)
                number = self.obs_line[i] - 1 if i < self.steps and self.obs_off[i] == start else 0
            limit = self.offset if stop is None else min(stop, self.offset)
        for line in iter_lines(self.journal, offset=start, number=number):
            if line.offset >= limit or not line.terminated:
                return
            yield line.number if number else None, line.offset, line.row

    def observation_path(self, row: dict) -> tuple[str | None, str | None]:
        """The observation file a row names, resolved inside this session; or a problem."""
        rel = row.get("path")
        if not isinstance(rel, str) or not rel:
            return None, "the observation row names no file"
        path = os.path.realpath(os.path.join(self.root, rel))
        if self._inside is None:
            self._inside = os.path.realpath(self.dir) + os.sep
        if not path.startswith(self._inside):
            return None, f"the row names {rel!r}, outside this session directory: not read"
        return path, None

    def observation_state(self, row: dict) -> tuple[Any, str | None]:
        """The parsed observation a row names and a problem (None when its bytes hash to the
        row's ``sha256``)."""
        path, problem = self.observation_path(row)
        if path is None:
            return None, problem
        try:
            data = obspack.read_bytes(self.root, row["path"])  # the file, or the session's pack
        except OSError as exc:  # neither the file nor the session's pack has it (or the pack is damaged)
            return None, f"{row.get('path')}: {exc.strerror or exc}"
        if len(data) > MAX_OBSERVATION_BYTES:
            return None, f"{row.get('path')} is larger than {MAX_OBSERVATION_BYTES} bytes: not shown"
        digest = hashlib.sha256(data).hexdigest()
        try:
            state = json.loads(data.decode("utf-8"))
        except (UnicodeDecodeError, ValueError, RecursionError):
            return None, f"{row.get('path')} is not JSON"
        if digest != row.get("sha256"):
            return state, (
                f"{row.get('path')} hashes to {digest[:16]}..., but the journal row "
                f"pins {str(row.get('sha256'))[:16]}...: the file was changed"
            )
        return state, None
