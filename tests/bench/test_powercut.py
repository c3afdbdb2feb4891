"""The power-cut model on its own (``bench/powercut_model.py``: crash states from a trace), on
small traces in strace's own format; the campaign's checker on a real traced session's trace and
on the same trace edited so that an action leaves before its intent is durable; and the
campaign's quick variant on a real traced session."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

import pytest

from tests.harness import REPO

sys.path.insert(0, os.path.join(REPO, "bench"))
from powercut import campaign, record
from powercut_model import ATTEMPT, LINE, RESUMED, UNFINISHED, Disk, parse, unhex


def hx(text: str | bytes) -> str:
    data = text.encode() if isinstance(text, str) else text
    return "".join(f"\\x{b:02x}" for b in data)


PID = f"{1:<5} "  # strace -f -o FILE leads each line with the pid left-justified in five columns


def trace(*lines: str) -> list:
    return parse("\n".join(lines))


def replay(root: str, calls) -> Disk:
    disk = Disk(root)
    for c in calls:
        disk.apply(c)
    return disk


def opened(path: str, fd: int, flags: str = "O_WRONLY|O_CREAT|O_EXCL") -> str:
    return f'{PID}openat(AT_FDCWD<{hx("/")}>, "{hx(path)}", {flags}, 0644) = {fd}<{hx(path)}>'


def written(path: str, fd: int, data: str) -> str:
    return f'{PID}write({fd}<{hx(path)}>, "{hx(data)}", {len(data)}) = {len(data)}'


def synced(path: str, fd: int) -> str:
    return f"{PID}fsync({fd}<{hx(path)}>) = 0"


def test_a_file_fsynced_without_its_directory_loses_its_name():
    calls = [opened("/r/a", 3), written("/r/a", 3, "row\n"), synced("/r/a", 3)]
    disk = replay("/r", trace(*calls))
    assert disk.crash("strict") == {}
    disk = replay(
        "/r",
        trace(*calls, f'{PID}openat(AT_FDCWD<{hx("/")}>, "{hx("/r")}", O_RDONLY) = 4<{hx("/r")}>', synced("/r", 4)),
    )
    assert disk.crash("strict") == {"a": b"row\n"}


def test_pending_bytes_are_lost_kept_or_torn_by_mode():
    disk = replay(
        "/r",
        trace(
            f'{PID}openat(AT_FDCWD<{hx("/")}>, "{hx("/r")}", O_RDONLY) = 4<{hx("/r")}>',
            opened("/r/j", 3, "O_WRONLY|O_APPEND|O_CREAT|O_EXCL"),
            synced("/r", 4),
            written("/r/j", 3, "one\n"),
            synced("/r/j", 3),
            written("/r/j", 3, "two\n"),
        ),
    )
    assert disk.crash("strict") == {"j": b"one\n"}
    assert disk.crash("appends") == {"j": b"one\ntwo\n"}
    assert disk.crash("torn") == {"j": b"one\ntw"}


def test_a_rename_without_a_directory_fsync_may_be_undone():
    d = f'{PID}openat(AT_FDCWD<{hx("/")}>, "{hx("/r")}", O_RDONLY) = 4<{hx("/r")}>'
    calls = [
        d,
        opened("/r/t", 3),
        written("/r/t", 3, "{}"),
        synced("/r/t", 3),
        synced("/r", 4),
        f'{PID}rename("{hx("/r/t")}", "{hx("/r/s.json")}") = 0',
    ]
    assert replay("/r", trace(*calls)).crash("strict") == {"t": b"{}"}
    assert replay("/r", trace(*calls, synced("/r", 4))).crash("strict") == {"s.json": b"{}"}


def test_a_call_split_across_lines_is_taken_when_it_completed_and_posts_are_sends():
    post = b"POST /api/v1/singleplayer HTTP/1.1\r\nX-Gamerig-Attempt: a-000007\r\n\r\n{}"
    calls = trace(
        f'123456 sendto(5<{hx("socket:[1]")}>, "{hx(post)}", {len(post)}, 0, NULL, 0 <unfinished ...>',
        opened("/r/a", 3),
        f"123456 <... sendto resumed>) = {len(post)}",
    )  # a pid wider than five
    assert [c.name for c in calls] == ["openat", "sendto"]
    disk = replay("/r", calls)
    assert disk.sends == [(1, "a-000007")]


@pytest.mark.timeout(120)
def test_the_quick_campaign_finds_every_sent_intent_durable_in_every_crash_state():
    if shutil.which("strace") is None:
        pytest.skip("strace is not installed (.ci/run installs it: apt-get install strace)")
    done = subprocess.run(
        [sys.executable, "bench/powercut.py", "--steps", "8", "--every", "60"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=110,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    last = done.stdout.strip().splitlines()[-1]
    assert "actions sent" in last and last.endswith(": 0 violations"), last
    assert int(last.split(" actions sent")[0].split(", ")[-1]) >= 5


@pytest.mark.timeout(150)
def test_the_quick_emulator_campaign_keeps_the_recording_and_its_checkpoints_in_every_crash_state():
    """The demo cartridge in the emulator: the intent rule against the recording's input lines,
    and the recording's own promise (a prefix through its newest checkpoint, resumable)."""
    if shutil.which("strace") is None:
        pytest.skip("strace is not installed (.ci/run installs it: apt-get install strace)")
    done = subprocess.run(
        [sys.executable, "bench/powercut.py", "--game", "pyboy", "--steps", "14", "--every", "100"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=140,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    last = done.stdout.strip().splitlines()[-1]
    assert last.endswith(": 0 violations"), last
    assert int(last.split(" actions sent")[0].split(", ")[-1]) >= 10, last
    assert int(last.split(" emulator resumes")[0].split(", ")[-1]) >= 3, last  # resumed on checkpoints


@pytest.fixture(scope="module")
def traced(tmp_path_factory) -> tuple[str, str]:
    """A real session of the built-in game played under strace (the campaign's ``record``):
    (its capture root, the trace text)."""
    if shutil.which("strace") is None:
        pytest.skip("strace is not installed (.ci/run installs it: apt-get install strace)")
    return record(str(tmp_path_factory.mktemp("powercut")), 8)


def send_before_its_intent_is_durable(text: str) -> tuple[str, str]:
    """The trace with the journal fsync that made the first action's intent durable moved to
    just after that action's POST (the call completing it, for a call strace split in two):
    (the edited trace, the action's attempt id)."""
    lines = text.split("\n")
    journal = hx("/events.jsonl") + ">"

    def journal_fsync(call: str) -> bool:
        return call.startswith(("fsync(", "fdatasync(")) and journal in call and hx("/recording/") not in call

    def post(call: str) -> bool:
        return call.startswith("sendto(") and hx("X-Gamerig-Attempt: ") in call

    split: dict[str, str] = {}  # pid -> the first line of its call strace split in two
    fsync_at = None
    for i, raw in enumerate(lines):
        m = LINE.match(raw)
        if not m:
            continue
        pid, rest = m.group(1), m.group(2)
        if UNFINISHED.match(rest):
            split[pid] = rest
            continue
        call = split.pop(pid, "") if RESUMED.match(rest) else rest
        if journal_fsync(call):
            fsync_at = i
        elif post(call):
            assert fsync_at is not None, "a POST before any journal fsync"
            attempt = ATTEMPT.search(unhex(call[call.index('"') + 1 : call.index('"', call.index('"') + 1)]))
            assert attempt is not None, f"a POST without an attempt id: {call}"
            moved = lines[fsync_at]
            edited = lines[:fsync_at] + lines[fsync_at + 1 : i + 1] + [moved] + lines[i + 1 :]
            return "\n".join(edited), attempt.group(1).decode()
    raise AssertionError("the trace has no action POST")


@pytest.mark.timeout(120)
def test_the_campaign_reports_an_action_sent_before_its_intent_is_durable(traced, tmp_path):
    """The real trace passes; with one journal fsync moved after the POST it guarded, the
    campaign names that action's attempt, at the POST's call, and nothing else."""
    capture, text = traced
    modes = ("strict", "appends", "torn")
    sound = campaign(capture, text, 10**9, modes, str(tmp_path / "a"), say=lambda _m: None)
    assert sound["sends"] >= 5 and sound["violations"] == [], sound["violations"][:5]
    edited, attempt = send_before_its_intent_is_durable(text)
    post = next(index for index, sent in replay(capture, parse(edited)).sends if sent == attempt)
    found = campaign(capture, edited, 10**9, modes, str(tmp_path / "b"), say=lambda _m: None)["violations"]
    named = f"intent: attempt {attempt} was sent but its action_attempt row is not durable"
    # at the POST, in the states where the row's pending bytes are lost or torn; kept (appends), it is there
    assert found == [
        {"call": post, "mode": "strict", "violation": named},
        {"call": post, "mode": "torn", "violation": named},
    ], found
