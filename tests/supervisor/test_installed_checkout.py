"""A checkout's ``gamerig.egg-info`` (left by an editable install) lists the sources of its
moment; a module added since is the checkout's own, never another package's files."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]

PROBE = """
import sys
sys.path.insert(0, sys.argv[1])
from supervisor import installed
print(installed._foreign_files(), installed.clashes())
"""


def egg_info(where: Path, listed: list[str]) -> None:
    info = where / "gamerig.egg-info"
    info.mkdir()
    (info / "PKG-INFO").write_text("Metadata-Version: 2.1\nName: gamerig\nVersion: 0.1.0\n")
    (info / "SOURCES.txt").write_text("".join(f"{p}\n" for p in listed))


def test_a_stale_egg_info_in_a_checkout_is_no_clash(tmp_path):
    # it lists supervisor/installed.py but not the rest of the tree: every other module would
    # look foreign if the egg-info were read as a wheel's record
    egg_info(tmp_path, ["supervisor/installed.py", "supervisor/__init__.py"])
    out = subprocess.run(
        [sys.executable, "-c", PROBE, str(tmp_path)], cwd=REPO, capture_output=True, text=True, timeout=60
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "{} []", out.stdout
