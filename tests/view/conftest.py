"""Fixtures: real captures made once per test module, the browser once per module."""

from __future__ import annotations

import shutil

import pytest

from .helpers import PYBOY_DEMO, browser, run_session


@pytest.fixture(scope="session")
def demo_capture(tmp_path_factory) -> str:
    """A capture root holding one demo session (the built-in game) and one PyBoy session,
    made once per test process; tests that change it work on ``copy_capture``."""
    base = tmp_path_factory.mktemp("capture")
    run_session(str(base), PYBOY_DEMO)
    run_session(str(base))
    return str(base / "capture")


@pytest.fixture(scope="module")
def driver():
    d = browser()
    yield d
    d.quit()


@pytest.fixture
def copy_capture(demo_capture, tmp_path):
    """A private copy of the demo capture (to tamper with)."""

    def make() -> str:
        dst = tmp_path / "copy"
        shutil.copytree(demo_capture, dst, symlinks=True)
        return str(dst)

    return make
