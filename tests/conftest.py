"""Shared fixtures: a factory for real supervised sessions under the test's tmp_path."""

from __future__ import annotations

import pytest

from tests.harness import DEMO, Session


@pytest.fixture
def session_factory(tmp_path):
    made: list[Session] = []

    def make(*sets: str, profile: str = DEMO, args: tuple[str, ...] = (), name: str = "s") -> Session:
        s = Session(str(tmp_path / f"{name}{len(made)}"), profile, *sets, args=args)
        made.append(s)
        return s

    yield make
    for s in made:
        if s.proc.poll() is None:
            s.proc.kill()
            s.proc.communicate()
