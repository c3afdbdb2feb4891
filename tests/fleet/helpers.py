"""Shared bits of the fleet tests: write a fleet file, run ``supervisor fleet start`` as a
real process, read what the fleet root holds."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import yaml

from tests.harness import DEMO, REPO, built_once

#: The quick fleet fault campaign (bench/fleet_chaos.py): a driver's process group killed and
#: then its resume's, a SIGTERM to a driver, a session's supervisor killed; two sessions of 40
#: steps each, two at once, each fault while a session runs.
QUICK_FAULTS = ["resume:kill", "driver:term", "supervisor:kill"]


def quick_campaign(tmp_path_factory) -> dict:
    """The quick campaign's report and its kept fleet roots (shared by every xdist worker: read
    only, copy to change); its ``reference`` root is a whole unfaulted fleet of two sessions."""

    def build(keep: str) -> dict:
        cmd = [
            sys.executable,
            os.path.join(REPO, "bench", "fleet_chaos.py"),
            "--trials",
            str(len(QUICK_FAULTS)),
            "--faults",
            ",".join(QUICK_FAULTS),
            "--sessions",
            "2",
            "--steps",
            "40",
            "--concurrency",
            "2",
            "--when",
            "session",
            "--seed",
            "3",
            "--json",
            "--keep",
            keep,
        ]
        proc = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True, timeout=280)
        return {
            "returncode": proc.returncode,
            "stderr": proc.stderr[-5000:],
            "keep": keep,
            "report": json.loads(proc.stdout) if proc.stdout.strip().startswith("{") else None,
        }

    return built_once(tmp_path_factory, "fleet-chaos-quick", build)


def write_fleet(tmp_path, **fields) -> str:
    data = {"name": "t", "profile": DEMO, "capture_root": str(tmp_path / "fleets"), **fields}
    path = tmp_path / "fleet.yaml"
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    return str(path)


def start_fleet(
    fleet_file: str, root: str, *args: str, env: dict | None = None, own_group: bool = False
) -> subprocess.Popen:
    """``fleet start`` as a real process (``own_group``: in a process group of its own, as a
    terminal starts it, so the test can kill the whole group)."""
    cmd = [
        sys.executable,
        "-m",
        "supervisor",
        "fleet",
        "start",
        fleet_file,
        "--fleet-root",
        root,
        "--progress",
        "plain",
        "--runtime-dir",
        os.path.join(os.path.dirname(root), "runtime"),
        *args,
    ]
    return subprocess.Popen(
        cmd, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, start_new_session=own_group
    )


def finish(proc: subprocess.Popen, timeout: float = 60) -> tuple[int, str]:
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        out, err = proc.communicate()
        raise AssertionError(f"the fleet did not end within {timeout}s:\n{err[-3000:]}") from None
    return proc.returncode, out + err


def supervisor(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "supervisor", *args], cwd=REPO, capture_output=True, text=True, timeout=60, env=env
    )


def rows(root: str) -> list[dict]:
    with open(os.path.join(root, "results.jsonl"), encoding="utf-8") as fh:
        return sorted((json.loads(line) for line in fh), key=lambda r: r["index"])


def attempt(root: str, slot: str, n: int) -> dict:
    with open(os.path.join(root, slot, f"attempt-{n}.json"), encoding="utf-8") as fh:
        return json.load(fh)


def journal(session_dir: str) -> list[dict]:
    with open(os.path.join(session_dir, "events.jsonl"), encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.endswith("\n")]


def resume_fleet(root: str, runtime: str, *args: str, env: dict | None = None) -> subprocess.Popen:
    cmd = [
        sys.executable,
        "-m",
        "supervisor",
        "fleet",
        "start",
        "--resume",
        root,
        "--progress",
        "plain",
        "--runtime-dir",
        runtime,
        *args,
    ]
    return subprocess.Popen(cmd, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
