"""The README's two set-up commands, as ``make`` would run them on a fresh clone (``make -n``
prints the commands without running them): the demo installs gamerig alone, the tests add
the test extras."""

from __future__ import annotations

import shutil
import subprocess

import pytest

from tests.harness import REPO


def planned(target: str, tmp_path) -> str:
    if shutil.which("make") is None:
        pytest.skip("make is not installed")
    venv = tmp_path / "venv"  # a venv that does not exist yet: a fresh clone
    r = subprocess.run(["make", "-n", target, f"VENV={venv}"], cwd=REPO, capture_output=True, text=True, timeout=30)
    assert r.returncode == 0, r.stderr
    return r.stdout


def test_make_demo_installs_what_the_demo_needs_and_not_the_test_extras(tmp_path):
    out = planned("demo", tmp_path)
    installs = [ln for ln in out.splitlines() if "pip install" in ln]
    assert any(ln.rstrip().endswith("-e .") for ln in installs), out
    assert not any("[test]" in ln for ln in installs), out
    assert all("--quiet" not in ln and "--progress-bar on" in ln for ln in installs), out
    assert "supervisor start run/profiles/demo.yaml" in out


def test_make_test_installs_the_test_extras_and_runs_the_suite(tmp_path):
    out = planned("test", tmp_path)
    assert "-e '.[test]'" in out and "pytest -n 3 --dist worksteal" in out and "--quiet" not in out


def test_make_test_runs_the_lint_checks_before_the_suite(tmp_path):
    out = planned("test", tmp_path)
    checks = [
        out.index(cmd) for cmd in ("ruff check .", "ruff format --check .", "bin/mypy", "pytest -n 3 --dist worksteal")
    ]
    assert checks == sorted(checks), out


def stub_venv(tmp_path, failing: str):
    """A venv whose python, ruff and mypy only log their arguments; ``failing`` exits 1."""
    bin_dir = tmp_path / "venv" / "bin"
    bin_dir.mkdir(parents=True)
    for name in ("python", "ruff", "mypy"):
        exe = bin_dir / name
        exe.write_text(
            f'#!/bin/sh\necho "{name} $*" >> "{tmp_path}/ran"\n' + ("exit 1\n" if name == failing else "exit 0\n")
        )
        exe.chmod(0o755)
    for stamp in (".installed-demo", ".installed-test"):  # newer than pyproject.toml: nothing to install
        (tmp_path / "venv" / stamp).touch()
    return tmp_path / "venv"


@pytest.mark.parametrize("failing", ["ruff", "mypy"])
def test_a_failing_lint_check_fails_make_test_before_the_suite(tmp_path, failing):
    if shutil.which("make") is None:
        pytest.skip("make is not installed")
    venv = stub_venv(tmp_path, failing)
    r = subprocess.run(["make", "test", f"VENV={venv}"], cwd=REPO, capture_output=True, text=True, timeout=30)
    ran = (tmp_path / "ran").read_text().splitlines()
    assert r.returncode != 0, r.stdout
    assert "ruff check ." in ran and "ruff format --check ." in ran and "mypy " in ran, ran  # all three report
    assert not any(line.startswith("python -m pytest") for line in ran), ran


def test_capture_help_is_a_summary_for_users():
    import sys

    r = subprocess.run(
        [sys.executable, "-m", "supervisor", "capture", "--help"], cwd=REPO, capture_output=True, text=True, timeout=30
    )
    assert r.returncode == 0 and "SUBCOMMANDS below" not in r.stdout and "``" not in r.stdout
    for name in ("verify", "audit", "coverage", "review", "clip", "archive"):
        assert f"\n  {name} " in r.stdout or f"\n  {name}, " in r.stdout, name
