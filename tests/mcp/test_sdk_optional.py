"""The MCP SDK is an optional extra: only the MCP server module imports it, so the command line
and the policy actor running an MCP agent's policy work in an interpreter without it."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.harness import REPO

pytestmark = pytest.mark.timeout(60)

SDK_IMPORT = re.compile(r"^\s*(import mcp\b|from mcp\b)", re.M)
SERVER = Path("supervisor", "mcp", "shared", "server.py")


def without_sdk(tmp_path: Path, code: str) -> subprocess.CompletedProcess:
    """Run ``code`` in an interpreter where importing ``mcp`` fails as a missing package would."""
    (tmp_path / "mcp.py").write_text("raise ModuleNotFoundError(\"No module named 'mcp'\", name='mcp')\n")
    env = {**os.environ, "PYTHONPATH": f"{tmp_path}{os.pathsep}{REPO}"}
    return subprocess.run(
        [sys.executable, "-c", code],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
        stdin=subprocess.DEVNULL,
    )


def test_only_the_server_module_imports_the_sdk():
    found = sorted(
        str(path.relative_to(REPO))
        for top in ("actors", "protocol", "supervisor")
        for path in Path(REPO, top).rglob("*.py")
        if SDK_IMPORT.search(path.read_text(encoding="utf-8"))
    )
    assert found == [str(SERVER)]


def test_the_agent_policies_load_and_decide_without_the_sdk(tmp_path):
    """Each MCP agent policy, found by its registry name and built as the policy actor builds it,
    stops the session when its server is gone (no server here: pid 2**22+1 is never alive)."""
    code = (
        "import sys\n"
        "from actors.policy.base import PolicyObservation\n"
        "from actors.policy.registry import load_policy_class\n"
        "for name in ('mcp_pyboy', 'mcp_sts2'):\n"
        f"    policy = load_policy_class(name)({{'bridge': 'ipc://{tmp_path}/agent.sock', "
        "'server_pid': 2**22 + 1}, {})\n"
        "    proposal = policy.decide(PolicyObservation('o-1', 1, 'menu', {'state_type': 'menu'}, {}))\n"
        "    print(name, proposal.wish, proposal.reason)\n"
        "assert 'mcp' not in sys.modules or sys.modules['mcp'] is None\n"
    )
    done = without_sdk(tmp_path, code)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split("\n")[:2] == ["mcp_pyboy stop mcp_server_gone", "mcp_sts2 stop mcp_server_gone"], (
        done.stdout
    )


def test_supervisor_help_works_without_the_sdk(tmp_path):
    done = without_sdk(tmp_path, "from supervisor.cli import main\nmain(['--help'])")
    assert done.returncode == 0, done.stderr
    assert "mcp" in done.stdout
