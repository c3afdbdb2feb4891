"""Helpers for the journal tests: real ``supervisor start`` sessions against the built-in
game, ``supervisor capture verify`` as a subprocess, and tools to damage a copy of a capture.

    Sessions(...)             launch several sessions at once, wait for all (deadline)
    demo_captures             session-scoped: a normal, a dry-run and a rejecting session,
                              the first two sharing one capture root, run concurrently
    injected_captures         session-scoped: recorder failures injected before / after POST
    fresh_copy(root)          a copy of a capture root to damage; returns (root, session dir)
    verify(path)              run the verifier CLI (in-process, or process=True); returns
                              (exit code, JSON report or text)
    read_rows / write_lines   journal rows and raw lines
    rechain(session_dir, rows)  rewrite rows with a valid hash chain and summary pins (a
                              careful forger: only the join checks can catch what changed)
    wait_for(cond, what)      poll a condition with a deadline; never sleep-and-hope
"""

from __future__ import annotations

import contextlib
import dataclasses
import glob
import io
import json
import os
import shutil
import signal
import subprocess
import sys
from collections.abc import Callable

import pytest

from protocol.journal import GENESIS, encode_row, line_digest
from supervisor import cli
from tests import harness

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SUPERVISOR = os.path.join(os.path.dirname(sys.executable), "supervisor")
PROFILE = os.path.join(REPO, "run", "profiles", "demo.yaml")
SESSION_DEADLINE_S = 60.0


def wait_for(cond: Callable[[], object], what: str, deadline_s: float = 30.0, poll_s: float = 0.02):
    """``tests.harness.wait_for`` with this package's argument order."""
    return harness.wait_for(cond, deadline_s, what, poll_s)


def start_args(root: str, runtime: str, max_steps: int, *extra: str) -> list[str]:
    return [
        SUPERVISOR,
        "start",
        PROFILE,
        "--set",
        f"capture.root={root}",
        "--set",
        f"supervisor.runtime_dir={runtime}",
        "--set",
        "supervisor.progress=off",
        "--max-steps",
        str(max_steps),
        *extra,
    ]


_LIVE: list[subprocess.Popen] = []


def popen_session(root: str, runtime: str, max_steps: int, *extra: str) -> subprocess.Popen:
    proc = subprocess.Popen(
        start_args(root, runtime, max_steps, *extra), cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.STDOUT
    )
    _LIVE.append(proc)
    return proc


@pytest.fixture(autouse=True)
def _no_leftover_sessions():
    """A test that fails half-way leaves no supervisor running: SIGCONT (it may be stopped),
    SIGTERM, and SIGKILL after a deadline — only the processes these helpers started."""
    yield
    while _LIVE:
        proc = _LIVE.pop()
        if proc.poll() is not None:
            continue
        proc.send_signal(signal.SIGCONT)
        proc.terminate()
        try:
            proc.communicate(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.communicate()


def finish(proc: subprocess.Popen, deadline_s: float = SESSION_DEADLINE_S) -> tuple[int, str]:
    try:
        out, _ = proc.communicate(timeout=deadline_s)
    except subprocess.TimeoutExpired:
        proc.kill()
        out, _ = proc.communicate()
        pytest.fail(f"session did not finish within {deadline_s}s:\n{out.decode(errors='replace')}")
    return proc.returncode, out.decode(errors="replace")


def session_dirs(root: str) -> list[str]:
    return sorted(d for d in glob.glob(os.path.join(root, "sessions", "*")) if os.path.isdir(d))


@dataclasses.dataclass
class Ran:
    root: str
    session_dir: str
    exit_code: int
    output: str


def run_sessions(specs: list[tuple[str, str, int, tuple[str, ...]]]) -> list[Ran]:
    """Start every (root, runtime, max_steps, extra args) session at once; wait for all."""
    before = {root: set(session_dirs(root)) for root, *_ in specs}
    procs = [popen_session(root, rt, steps, *extra) for root, rt, steps, extra in specs]
    results = [finish(p) for p in procs]
    out = []
    for (root, *_), (code, text) in zip(specs, results):
        marker = [ln.split(" ", 1)[1] for ln in text.splitlines() if ln.startswith("capture ")]
        assert marker, f"no 'capture DIR' line in the session output:\n{text}"
        assert os.path.dirname(os.path.dirname(marker[0])) == os.path.abspath(root)
        assert os.path.basename(marker[0]) not in before[root]
        out.append(Ran(root, marker[0], code, text))
    return out


def verify(path: str, *, json_out: bool = True, process: bool = False) -> tuple[int, dict | str]:
    """Run ``supervisor capture verify PATH [--json]``: through the CLI entry point in this
    process (fast), or as its own process with ``process=True``."""
    argv = ["capture", "verify", path] + (["--json"] if json_out else [])
    if process:
        proc = subprocess.run([SUPERVISOR, *argv], cwd=REPO, capture_output=True, timeout=60)
        code, text = proc.returncode, proc.stdout.decode()
    else:
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            code = cli.main(argv)
        text = out.getvalue()
    if not json_out:
        return code, text
    return code, json.loads(text) if text.strip() else {}


def findings(report: dict, severity: str | None = None) -> list[dict]:
    out = list(report.get("findings", []))
    for s in report.get("sessions", []):
        out += s["findings"]
    for f in report.get("feeds", []):
        out += f["findings"]
    return [f for f in out if severity is None or f["severity"] == severity]


def codes(report: dict, severity: str | None = None) -> set[str]:
    return {f["code"] for f in findings(report, severity)}


def read_rows(session_dir: str) -> list[dict]:
    rows = []
    with open(os.path.join(session_dir, "events.jsonl"), "rb") as fh:
        for line in fh:
            try:
                rows.append(json.loads(line))
            except ValueError:
                pass
    return rows


def read_lines(session_dir: str) -> list[bytes]:
    with open(os.path.join(session_dir, "events.jsonl"), "rb") as fh:
        return fh.read().split(b"\n")[:-1]


def write_lines(session_dir: str, lines: list[bytes], *, terminated: bool = True) -> None:
    data = b"\n".join(lines) + (b"\n" if terminated else b"")
    with open(os.path.join(session_dir, "events.jsonl"), "wb") as fh:
        fh.write(data)


def line_of(session_dir: str, pred: Callable[[dict], bool], nth: int = 0) -> int:
    """1-based line number of the nth row matching ``pred``."""
    hits = [i + 1 for i, ln in enumerate(read_lines(session_dir)) if (row := _parse(ln)) is not None and pred(row)]
    return hits[nth]


def _parse(line: bytes) -> dict | None:
    try:
        return json.loads(line)
    except ValueError:
        return None


def rechain(session_dir: str, rows: list[dict]) -> None:
    """Rewrite the journal from ``rows`` with sequences, prev_sha256 and the summary pins
    recomputed, so that the chain is valid and only other checks can see a change."""
    prev, lines = GENESIS, []
    for i, row in enumerate(rows, start=1):
        row = dict(row, sequence=i, prev_sha256=prev)
        line = encode_row(row)
        lines.append(line)
        prev = line_digest(line)
    write_lines(session_dir, lines)
    path = os.path.join(session_dir, "session.json")
    with open(path, encoding="utf-8") as fh:
        summary = json.load(fh)
    summary["journal"] = {"last_sequence": len(rows), "last_row_sha256": prev}
    with open(path, "w", encoding="utf-8") as fh:
        json.dump(summary, fh, indent=2, sort_keys=True)


def fresh_copy(src_root: str, session_dir: str, dst: str) -> tuple[str, str]:
    """Copy a capture root to ``dst``; return the copy's root and the same session's dir."""
    shutil.copytree(src_root, dst)
    return dst, os.path.join(dst, "sessions", os.path.basename(session_dir))


@dataclasses.dataclass
class DemoCaptures:
    normal: Ran  # a played session (shares its root with dry_run)
    dry_run: Ran  # --dry-run, started at the same moment in the same capture root
    rejecting: Ran  # the game refuses every 2nd valid action and fails every 4th state read


@pytest.fixture(scope="session")
def demo_captures(tmp_path_factory) -> DemoCaptures:
    base = tmp_path_factory.mktemp("demo")
    shared, rej = str(base / "shared"), str(base / "rejecting")
    normal, dry, rejecting = run_sessions(
        [
            # 90 steps: its decide rows span ~2 s even on a quiet machine (30 spanned 0.8 s, and a
            # dry run whose start-up lagged ~1 s under load began writing after the last of them)
            (shared, str(base / "rt-normal"), 90, ()),
            # the dry run lasts ~6 s (each preview waits game.poll_interval_s before the next read),
            # so the two sessions sharing the root surely write at the same time, even under load
            (shared, str(base / "rt-dry"), 120, ("--dry-run",)),
            (
                rej,
                str(base / "rt-rej"),
                15,
                ("--set", "game.knobs.reject_every_nth=2", "--set", "game.knobs.state_error_every=4"),
            ),
        ]
    )
    return DemoCaptures(normal, dry, rejecting)


@dataclasses.dataclass
class InjectedCaptures:
    before_post: Ran  # the 2nd action_attempt append fails (before the acknowledgement)
    after_post: Ran  # the 2nd action_result append fails (after the POST)


@pytest.fixture(scope="session")
def injected_captures(tmp_path_factory) -> InjectedCaptures:
    base = tmp_path_factory.mktemp("injected")
    before, after = run_sessions(
        [
            (
                str(base / "before"),
                str(base / "rt-before"),
                30,
                ("--set", "recorder.inject_failure={event: action_attempt, nth: 2}"),
            ),
            (
                str(base / "after"),
                str(base / "rt-after"),
                30,
                ("--set", "recorder.inject_failure={event: action_result, nth: 2}"),
            ),
        ]
    )
    return InjectedCaptures(before, after)
