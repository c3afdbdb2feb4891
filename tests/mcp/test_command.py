"""``supervisor mcp`` without the optional SDK, and with a bad workspace: a clear error, exit 2."""
from __future__ import annotations

import os
import subprocess
import sys

import pytest

from tests.harness import REPO

pytestmark = pytest.mark.timeout(60)


def supervisor_mcp(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "supervisor", "mcp", *args], cwd=REPO, capture_output=True,
                          text=True, timeout=30, stdin=subprocess.DEVNULL, env={**os.environ, **(env or {})})


def test_without_the_sdk_the_command_says_how_to_install_it(tmp_path):
    # an interpreter without the SDK: a module first on the path that fails to import as a missing one would
    (tmp_path / "mcp.py").write_text("raise ModuleNotFoundError(\"No module named 'mcp'\", name='mcp')\n")
    done = supervisor_mcp("--workspace", str(tmp_path), env={"PYTHONPATH": f"{tmp_path}{os.pathsep}{REPO}"})
    assert done.returncode == 2, done.stderr
    assert "pip install 'gamerig[mcp]'" in done.stderr and "No module named 'mcp'" in done.stderr
    assert done.stdout == ""  # nothing on the MCP wire


def test_a_workspace_that_is_not_a_directory_is_refused(tmp_path):
    done = supervisor_mcp("--workspace", str(tmp_path / "nope"))
    assert done.returncode == 2 and f"--workspace '{tmp_path / 'nope'}' refused: is not a directory" in done.stderr
