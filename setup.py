"""The build's one step beyond pyproject.toml: copy the files an installed gamerig needs that
live outside its packages -- the starting profiles ``supervisor init`` writes and the docs
``supervisor docs`` prints -- into ``supervisor/_bundled/`` of the wheel, in the repository's
layout. Which paths: ``BUNDLED`` in ``supervisor/installed.py`` (read here as a file, so the
build imports none of gamerig's dependencies). A checkout reads them in place."""

from __future__ import annotations

import ast
import glob
import os
import shutil

from setuptools import setup
from setuptools.command.build_py import build_py

HERE = os.path.dirname(os.path.abspath(__file__))


def _constants() -> dict:
    """``STARTER`` and ``DOCS`` of supervisor/installed.py, read without importing it."""
    with open(os.path.join(HERE, "supervisor", "installed.py"), encoding="utf-8") as fh:
        tree = ast.parse(fh.read())
    out = {}
    for node in tree.body:
        if (
            isinstance(node, ast.Assign)
            and len(node.targets) == 1
            and getattr(node.targets[0], "id", "") in ("STARTER", "DOCS")
        ):
            out[node.targets[0].id] = ast.literal_eval(node.value)
    return out


def bundled_files() -> list[str]:
    """Every bundled file, relative to the repository; a listed file that is missing fails the build."""
    const = _constants()
    files = []
    for pattern in const["STARTER"] + const["DOCS"]:
        found = sorted(glob.glob(os.path.join(HERE, pattern)))
        if not found:
            raise SystemExit(f"setup.py: {pattern} (supervisor/installed.py BUNDLED) matches no file")
        files += [os.path.relpath(p, HERE) for p in found]
    return files


class BuildWithBundled(build_py):
    def run(self):
        super().run()
        target = os.path.join(self.build_lib, "supervisor", "_bundled")
        shutil.rmtree(target, ignore_errors=True)  # a file dropped from the list leaves no stale copy
        for rel in bundled_files():
            dest = os.path.join(target, rel)
            os.makedirs(os.path.dirname(dest), exist_ok=True)
            shutil.copyfile(os.path.join(HERE, rel), dest)


setup(cmdclass={"build_py": BuildWithBundled})
