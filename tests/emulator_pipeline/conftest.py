"""Helpers for the pipeline tests: the pyboy-demo profile, the session's emulator recording."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.harness import REPO

PYBOY_DEMO = os.path.join(REPO, "run", "profiles", "pyboy-demo.yaml")
REX_RUNNER = Path(REPO).parent / "shared" / "roms" / "rex-runner.gb"


def recording_dir(session) -> Path:
    return Path(session.session_dir) / "recording"


def recording_events(session, kind: str | None = None) -> list[dict]:
    """Whole lines of the emulator recording's journal (a live writer may be mid-line)."""
    out = []
    try:
        with open(recording_dir(session) / "events.jsonl", "rb") as fh:
            for line in fh:
                try:
                    event = json.loads(line)
                except ValueError:
                    continue
                if kind is None or event.get("kind") == kind:
                    out.append(event)
    except (FileNotFoundError, AssertionError):
        return []
    return out


@pytest.fixture
def pyboy_session(session_factory):
    """``session_factory`` with the pyboy-demo profile (extra ``--set`` values as arguments)."""

    def make(*sets: str, args: tuple[str, ...] = ()):
        return session_factory(*sets, profile=PYBOY_DEMO, args=args, name="pyboy")

    return make


@pytest.fixture
def rex_rom_copy(tmp_path) -> Path:
    if not REX_RUNNER.is_file():
        pytest.skip(f"third-party test ROM absent: {REX_RUNNER} (see ../shared/roms/README.md)")
    rom_dir = tmp_path / "roms"
    rom_dir.mkdir()
    path = rom_dir / "rex-runner.gb"
    path.write_bytes(REX_RUNNER.read_bytes())
    return path
