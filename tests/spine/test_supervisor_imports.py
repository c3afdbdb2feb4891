"""What the long-lived ``supervisor start`` process imports (its footprint).

Each check runs a fresh interpreter, since this test process has imported everything."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from supervisor.commands.registry import REGISTRY
from tests.harness import REPO

pytestmark = pytest.mark.timeout(60)

HEAVY = ("numpy", "PIL", "httpx", "rich", "click", "pyboy")


def loaded_after(code: str) -> list[str]:
    """The modules ``code`` leaves in ``sys.modules`` of a fresh interpreter."""
    probe = (
        "import atexit, json, sys\n"
        "atexit.register(lambda: print(json.dumps(sorted(sys.modules)), file=sys.stderr))\n" + code
    )
    p = subprocess.run([sys.executable, "-c", probe], cwd=REPO, capture_output=True, text=True, timeout=60)
    return json.loads(p.stderr.strip().splitlines()[-1])


def test_a_session_supervisor_imports_no_heavy_package():
    loaded = loaded_after("import supervisor.commands.start")
    assert [m for m in HEAVY if m in loaded] == []
    assert "actors.model_client.client" not in loaded and "actors.emulator.recording.reader" not in loaded


def test_the_command_line_imports_only_the_command_it_runs():
    loaded = loaded_after("from supervisor.cli import main\nsys.exit(main(['validate', 'run/profiles/demo.yaml']))")
    commands = sorted(m for m in loaded if m.startswith("supervisor.commands."))
    assert commands == ["supervisor.commands.base", "supervisor.commands.registry", "supervisor.commands.validate"]


def test_help_loads_every_command():
    loaded = loaded_after("from supervisor.cli import main\nmain(['--help'])")
    assert {ref.module for ref in REGISTRY} <= set(loaded)
