"""Shared bits of the fleet tests: write a fleet file, run ``supervisor fleet start`` as a
real process, read what the fleet root holds."""
from __future__ import annotations

import json
import os
import subprocess
import sys

import yaml

from tests.harness import DEMO, REPO


def write_fleet(tmp_path, **fields) -> str:
    data = {"name": "t", "profile": DEMO, "capture_root": str(tmp_path / "fleets"), **fields}
    path = tmp_path / "fleet.yaml"
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    return str(path)


def start_fleet(fleet_file: str, root: str, *args: str, env: dict | None = None) -> subprocess.Popen:
    cmd = [sys.executable, "-m", "supervisor", "fleet", "start", fleet_file, "--fleet-root", root,
           "--progress", "plain", "--runtime-dir", os.path.join(os.path.dirname(root), "runtime"), *args]
    return subprocess.Popen(cmd, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=env)


def finish(proc: subprocess.Popen, timeout: float = 60) -> tuple[int, str]:
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        out, err = proc.communicate()
        raise AssertionError(f"the fleet did not end within {timeout}s:\n{err[-3000:]}")
    return proc.returncode, out + err


def supervisor(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "supervisor", *args], cwd=REPO, capture_output=True,
                          text=True, timeout=60, env=env)


def rows(root: str) -> list[dict]:
    with open(os.path.join(root, "results.jsonl"), encoding="utf-8") as fh:
        return sorted((json.loads(line) for line in fh), key=lambda r: r["index"])


def attempt(root: str, slot: str, n: int) -> dict:
    with open(os.path.join(root, slot, f"attempt-{n}.json"), encoding="utf-8") as fh:
        return json.load(fh)


def journal(session_dir: str) -> list[dict]:
    with open(os.path.join(session_dir, "events.jsonl"), encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.endswith("\n")]


def resume_fleet(root: str, runtime: str, *args: str) -> subprocess.Popen:
    cmd = [sys.executable, "-m", "supervisor", "fleet", "start", "--resume", root, "--progress", "plain",
           "--runtime-dir", runtime, *args]
    return subprocess.Popen(cmd, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
